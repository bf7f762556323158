import * as Emulator from "../../src/Emulator.js"
import * as ShellMarkers from "../../src/ShellMarkers.js"

export const encoder = new TextEncoder()

export const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array => {
  const arrays = parts.map((part) => typeof part === "string" ? encoder.encode(part) : Uint8Array.from(part))
  const out = new Uint8Array(arrays.reduce((sum, array) => sum + array.length, 0))
  let offset = 0
  for (const array of arrays) {
    out.set(array, offset)
    offset += array.length
  }
  return out
}

/** `data` cut at the given offsets (any order, duplicates and out-of-range offsets ignored). */
export const splitAt = (data: Uint8Array, offsets: ReadonlyArray<number>): Array<Uint8Array> => {
  const cuts = [...new Set(offsets.filter((offset) => offset > 0 && offset < data.length))].sort((a, b) => a - b)
  const chunks: Array<Uint8Array> = []
  let from = 0
  for (const cut of cuts) {
    chunks.push(data.subarray(from, cut))
    from = cut
  }
  chunks.push(data.subarray(from))
  return chunks
}

/** Every byte its own chunk. */
export const bytewise = (data: Uint8Array): Array<Uint8Array> => Array.from(data, (byte) => Uint8Array.of(byte))

export const nonce = "0123456789abcdef01234567"

export interface Options {
  readonly cols?: number
  readonly rows?: number
  readonly scrollbackLines?: number
  readonly scrollbackMaxBytes?: number
  readonly captureBudget?: number
}

/** Everything observable about an emulator after it parsed a stream. */
export interface Observed {
  readonly replies: string
  readonly markers: ReadonlyArray<{ readonly payload: string; readonly row: number; readonly col: number }>
  readonly log: ReadonlyArray<string>
  readonly logFirst: number
  readonly page: string
  readonly screen: Emulator.Screen
  readonly cursor: Emulator.Position
  readonly modes: Emulator.Modes
  readonly captured: Emulator.Captured
}

/** A fresh emulator with its replies and markers recorded. */
export const make = (options: Options = {}) => {
  const replies: Array<string> = []
  const markers: Array<{ payload: string; row: number; col: number }> = []
  const emulator = new Emulator.Emulator({
    cols: options.cols ?? 20,
    rows: options.rows ?? 5,
    scrollbackLines: options.scrollbackLines ?? 40,
    scrollbackMaxBytes: options.scrollbackMaxBytes ?? 4000
  }, {
    onReply: (data) => replies.push(data),
    onMarker: (payload, at) => markers.push({ payload, row: at.row, col: at.col })
  })
  return { emulator, replies, markers }
}

/** Everything observable about an emulator made by `make` now; `capture` is ended. */
export const observed = (made: ReturnType<typeof make>, capture: Emulator.Capture): Observed => {
  const { emulator, markers, replies } = made
  const page = emulator.page({ maxBytes: 1 << 20 })
  return {
    replies: replies.join(""),
    markers,
    log: emulator.log.slice(emulator.log.firstIndex, emulator.log.endIndex),
    logFirst: emulator.log.firstIndex,
    page: page._tag === "Right" ? page.right.text : "",
    screen: emulator.screen(),
    cursor: emulator.cursor(),
    modes: emulator.modes,
    captured: emulator.finish(capture)
  }
}

/** Feed `chunks` to a fresh emulator (a capture open from the start) and observe the outcome. */
export const observe = (chunks: Iterable<Uint8Array | string>, options: Options = {}): Observed => {
  const made = make(options)
  const capture = made.emulator.capture(made.emulator.cursor(), options.captureBudget ?? 200)
  for (const chunk of chunks) made.emulator.write(chunk)
  const outcome = observed(made, capture)
  made.emulator.dispose()
  return outcome
}

export const marker = (kind: ShellMarkers.MarkerKind, extra?: string) => ShellMarkers.encode(kind, nonce, extra)
