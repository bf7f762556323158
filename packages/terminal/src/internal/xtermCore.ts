/**
 * The few internals of `@xterm/headless` the emulator relies on, typed in one place: synchronous
 * parsing, the normal buffer's rows and trim events, the buffer switch on a full reset, and the parser's OSC and DCS handler tables (the public API only offers callbacks with a 10 MB payload
 * buffer). Pinned to `@xterm/headless` 6.0.0.
 */
import type xterm from "@xterm/headless"
import { type CellRow, trimmedLength } from "./contentEnd.js"
import type { Rgb } from "./replies.js"

export interface Disposable {
  dispose(): void
}

export type Event<A> = (listener: (value: A) => void) => Disposable

export interface CoreLine extends CellRow {
  isWrapped: boolean
  translateToString(trimRight?: boolean, startCol?: number, endCol?: number): string
}

export interface CoreLines {
  readonly length: number
  get(index: number): CoreLine | undefined
  readonly onTrim: Event<number>
}

/**
 * Row `index` of a buffer's rows, or undefined past either end. xterm's own `get` does not check: the rows are
 * a ring, and once the scrollback is full an index past the last row reads the first one kept (the oldest).
 */
export const lineAt = (lines: CoreLines, index: number): CoreLine | undefined =>
  index >= 0 && index < lines.length ? lines.get(index) : undefined

export interface CoreBuffer {
  readonly lines: CoreLines
  readonly x: number
  readonly ybase: number
  readonly y: number
}

/** A handler of one OSC number: `put` may be called many times per sequence, with code points. */
export interface OscHandler {
  start(): void
  put(data: Uint32Array, start: number, end: number): void
  end(success: boolean): boolean
}

/** A handler of one DCS identifier. */
export interface DcsHandler {
  hook(params: unknown): void
  put(data: Uint32Array, start: number, end: number): void
  unhook(success: boolean): boolean | Promise<boolean>
}

export interface InputHandler {
  readonly _activeBuffer: CoreBuffer
  readonly _dirtyRowTracker: { markDirty(y: number): void }
  _restrictCursor(maxCol?: number): void
  _eraseInBufferLine(y: number, start: number, end: number, clearWrap?: boolean, respectProtect?: boolean): void
  _resetBufferLine(y: number, respectProtect?: boolean): void
  /** Color set / report / restore requests (OSC 4, 10, 11, 12, 104…), which only a renderer answers. */
  readonly onColor: Event<ReadonlyArray<{ readonly type: number; readonly index?: number; readonly color?: Rgb }>>
  readonly _parser: {
    /** Back to the ground state, any sequence in progress dropped. */
    reset(): void
    registerOscHandler(ident: number, handler: OscHandler): Disposable
    readonly _oscParser: { readonly _handlers: Record<number, Array<OscHandler>> }
    readonly _dcsParser: { readonly _handlers: Record<number, Array<DcsHandler>> }
  }
}

export interface Core {
  writeSync(data: string | Uint8Array): void
  /** What `writeSync` queues through: a throw inside it leaves it busy, and every later write queued. */
  readonly _writeBuffer: {
    _isSyncWriting: boolean
    _writeBuffer: Array<unknown>
    _callbacks: Array<unknown>
    _pendingData: number
  }
  readonly _inputHandler: InputHandler
  readonly _bufferService: {
    readonly buffers: {
      readonly normal: CoreBuffer
      readonly active: CoreBuffer
      readonly onBufferActivate: Event<{ readonly activeBuffer: CoreBuffer }>
    }
    readonly onScroll: Event<number>
    readonly cols: number
  }
  /** The DEC private modes as the parser sets them (what the public `terminal.modes` copies on every read). */
  readonly coreService: {
    readonly decPrivateModes: { readonly applicationCursorKeys: boolean; readonly bracketedPasteMode: boolean }
  }
}

/**
 * Undo what a handler that threw left behind: the write queue marked busy (every later `writeSync` would
 * only queue behind it) and the parser inside the sequence it was dispatching. The rest of the chunk it
 * was parsing is lost; the next write parses normally.
 */
export const recoverFromThrow = (core: Core): void => {
  const queue = core._writeBuffer
  queue._isSyncWriting = false
  queue._writeBuffer.length = 0
  queue._callbacks.length = 0
  queue._pendingData = 0
  core._inputHandler._parser.reset()
}

/**
 * Erase above (`CSI 1 J`, and `CSI ? 1 J` keeping protected cells): the rows above the cursor and its own row
 * through the cursor. xterm 6.0.0's own unwraps the row below the cursor by its screen index without the
 * scrollback offset, so it clears the flag of a wrong row, and throws (leaving the terminal frozen) on
 * the bottom row of a screen with no scrollback yet when the cursor is past the last column.
 */
export const eraseAbove = (core: Core, respectProtect: boolean): void => {
  const handler = core._inputHandler
  const buffer = handler._activeBuffer
  const cols = core._bufferService.cols
  handler._restrictCursor(cols)
  let y = buffer.y
  handler._dirtyRowTracker.markDirty(y)
  handler._eraseInBufferLine(y, 0, buffer.x + 1, true, respectProtect)
  if (buffer.x + 1 >= cols) {
    const below = lineAt(buffer.lines, buffer.ybase + y + 1)
    if (below !== undefined) below.isWrapped = false
  }
  while (y-- > 0) handler._resetBufferLine(y, respectProtect)
  handler._dirtyRowTracker.markDirty(0)
}

/** What `printsPlainLinesAtBottom` reads of xterm's core beyond `Core`. */
interface PrintState {
  readonly _bufferService: {
    readonly buffers: {
      readonly active: unknown
      readonly normal: CoreBuffer & { readonly scrollTop: number; readonly scrollBottom: number }
    }
  }
  readonly coreService: {
    readonly modes: { readonly insertMode: boolean }
    readonly decPrivateModes: { readonly wraparound: boolean }
  }
  readonly _charsetService: { readonly charset: unknown }
  readonly _inputHandler: { readonly _parser: { readonly currentState: number } }
}

/**
 * Whether lines of printable ASCII, each ended by CR LF, written now would each start on a blank row at the
 * bottom of the screen and leave it by scrolling it into the scrollback, the rows holding exactly the lines'
 * characters (cut every `cols`, the rows after the first marked wrapped): the normal screen is active with
 * its whole height as the scroll region, the parser is between sequences, the cursor is at the first column
 * of the bottom row and that row is blank and not a wrapped one, and printing neither inserts, nor maps
 * characters (no national or graphics character set), nor stops at the right edge (auto-wrap is on).
 */
export const printsPlainLinesAtBottom = (core: Core, rows: number): boolean => {
  const inner = core as unknown as PrintState
  const buffers = inner._bufferService.buffers
  const normal = buffers.normal
  if (buffers.active !== normal || inner._inputHandler._parser.currentState !== 0) return false
  if (normal.x !== 0 || normal.y !== rows - 1 || normal.scrollTop !== 0 || normal.scrollBottom !== rows - 1) {
    return false
  }
  if (inner.coreService.modes.insertMode || !inner.coreService.decPrivateModes.wraparound) return false
  if (inner._charsetService.charset !== undefined) return false
  const row = normal.lines.get(normal.ybase + normal.y)
  return row !== undefined && !row.isWrapped && trimmedLength(row) === 0
}

export const coreOf = (terminal: xterm.Terminal): Core => (terminal as unknown as { readonly _core: Core })._core

class BoundedOsc implements OscHandler {
  #size = 0
  #over = false
  constructor(readonly inner: OscHandler, readonly limit: number) {}
  start(): void {
    this.#size = 0
    this.#over = false
    this.inner.start()
  }
  put(data: Uint32Array, start: number, end: number): void {
    if (this.#over) return
    this.#size += end - start
    if (this.#size > this.limit) {
      this.#over = true
      this.inner.end(false)
      return
    }
    this.inner.put(data, start, end)
  }
  end(success: boolean): boolean {
    if (this.#over) {
      this.#over = false
      return false
    }
    return this.inner.end(success)
  }
}

class BoundedDcs implements DcsHandler {
  #size = 0
  #over = false
  constructor(readonly inner: DcsHandler, readonly limit: number) {}
  hook(params: unknown): void {
    this.#size = 0
    this.#over = false
    this.inner.hook(params)
  }
  put(data: Uint32Array, start: number, end: number): void {
    if (this.#over) return
    this.#size += end - start
    if (this.#size > this.limit) {
      this.#over = true
      void this.inner.unhook(false)
      return
    }
    this.inner.put(data, start, end)
  }
  unhook(success: boolean): boolean | Promise<boolean> {
    if (this.#over) {
      this.#over = false
      return false
    }
    return this.inner.unhook(success)
  }
}

/**
 * Cap the payload xterm's own OSC and DCS handlers buffer (10 MB each by default): a longer payload is
 * dropped as it streams and the sequence is ignored when its terminator comes.
 */
export const boundStringSequences = (core: Core, limit: number): void => {
  const parser = core._inputHandler._parser
  for (const list of Object.values(parser._oscParser._handlers)) {
    list.forEach((handler, index) => list[index] = new BoundedOsc(handler, limit))
  }
  for (const list of Object.values(parser._dcsParser._handlers)) {
    list.forEach((handler, index) => list[index] = new BoundedDcs(handler, limit))
  }
}

/**
 * UTF-32 code points as a string. Payloads within the BMP (all of our markers) take `fromCharCode` over the
 * array directly, which costs a fraction of spreading it into `fromCodePoint` (three markers per send).
 */
const fromCodePoints = (codePoints: Uint32Array): string => {
  for (let i = 0; i < codePoints.length; i++) {
    if (codePoints[i]! > 0xffff) return String.fromCodePoint(...codePoints)
  }
  return String.fromCharCode.apply(null, codePoints as unknown as Array<number>)
}

/** An OSC handler for short payloads (our markers): one over `limit` code units is dropped as it streams. */
export class SmallOscHandler implements OscHandler {
  #data = ""
  #over = false
  constructor(readonly limit: number, readonly onEnd: (payload: string) => void) {}
  start(): void {
    this.#data = ""
    this.#over = false
  }
  put(data: Uint32Array, start: number, end: number): void {
    if (this.#over) return
    if (this.#data.length + end - start > this.limit) {
      this.#over = true
      this.#data = ""
      return
    }
    this.#data += fromCodePoints(data.subarray(start, end))
  }
  end(success: boolean): boolean {
    const payload = this.#data
    const accepted = success && !this.#over
    this.#data = ""
    this.#over = false
    if (accepted) this.onEnd(payload)
    return true
  }
}
