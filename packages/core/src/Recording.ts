/**
 * Recordings of terminals as asciicast v2 (one JSON header line, then one `[seconds, code, data]` line per
 * event): the program's output (`o`), resizes (`r`), a marker at each agent send with its text and how it
 * settled (`m`), and — when asked — input (`i`), what a person typed with echo off redacted to its length.
 * Bounded: at `maxBytes` the recording stops with a last marker that says so. The encoding is here (pure);
 * where recordings are kept is the `Recordings` store (files under the state directory:
 * `FileRecordings` in `@agent-terminal/node`).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * A recording as listed.
 *
 * @since 0.2.0
 */
export const RecordingInfo = Schema.Struct({
  /** The file's name (`<session id>-<start>.cast`): how it is downloaded. */
  name: Schema.String,
  sessionId: Schema.String,
  /** The machine of the fleet it is kept on (absent when one process keeps every recording shown). */
  machine: Schema.optional(Schema.String),
  bytes: Schema.Number,
  /** When it started and was last written (ms since the epoch). */
  startedAt: Schema.Number,
  modifiedAt: Schema.Number
})
/** @since 0.2.0 */
export type RecordingInfo = typeof RecordingInfo.Type

/**
 * Where one recording is written: lines in order (`write` never blocks the caller; the store buffers).
 *
 * @since 0.2.0
 */
export interface RecordingFile {
  readonly name: string
  readonly write: (line: string) => void
  /** Everything written is on disk once this completes. */
  readonly close: Effect.Effect<void>
}

/**
 * The store of recordings.
 *
 * @since 0.2.0
 */
export class Recordings extends Context.Tag("@agent-terminal/core/Recordings")<
  Recordings,
  {
    /** A new recording of a session (`None`: it cannot be made here; the session goes on unrecorded). */
    readonly create: (meta: { readonly sessionId: string; readonly startedAt: number }) => Effect.Effect<
      Option.Option<RecordingFile>
    >
    readonly list: Effect.Effect<ReadonlyArray<RecordingInfo>>
    /** A recording's content (`None`: no such recording). */
    readonly read: (name: string) => Effect.Effect<Option.Option<Uint8Array>>
  }
>() {}

/**
 * A store that keeps nothing (recordings asked for are not made): the service's default.
 *
 * @since 0.2.0
 */
export const none: Recordings["Type"] = {
  create: () => Effect.succeed(Option.none()),
  list: Effect.succeed([]),
  read: () => Effect.succeed(Option.none())
}

/**
 * The store that keeps nothing, as a layer.
 *
 * @since 0.2.0
 */
export const layerNone: Layer.Layer<Recordings> = Layer.succeed(Recordings, none)

/**
 * Recordings in memory, as a layer (tests).
 *
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<Recordings> = Layer.sync(Recordings, () => makeMemory())

/** A line's size in the file: its UTF-8 bytes and the newline. */
const lineBytes = (line: string): number => Buffer.byteLength(line, "utf8") + 1

/**
 * Recordings in memory (tests): every line kept.
 *
 * @since 0.2.0
 */
export const makeMemory = (): Recordings["Type"] & { readonly files: Map<string, Array<string>> } => {
  const files = new Map<string, Array<string>>()
  const started = new Map<string, number>()
  return {
    files,
    create: ({ sessionId, startedAt }) =>
      Effect.sync(() => {
        const name = `${sessionId}-${startedAt}.cast`
        const lines: Array<string> = []
        files.set(name, lines)
        started.set(name, startedAt)
        return Option.some({ name, write: (line: string) => lines.push(line), close: Effect.void })
      }),
    list: Effect.sync(() =>
      [...files].map(([name, lines]) => ({
        name,
        sessionId: name.slice(0, name.lastIndexOf("-")),
        bytes: lines.reduce((sum, line) => sum + lineBytes(line), 0),
        startedAt: started.get(name)!,
        modifiedAt: started.get(name)!
      }))
    ),
    read: (name) =>
      Effect.sync(() => {
        const lines = files.get(name)
        return lines === undefined
          ? Option.none()
          : Option.some(new TextEncoder().encode(lines.map((line) => `${line}\n`).join("")))
      })
  }
}

/**
 * The settings of one recording.
 *
 * @since 0.2.0
 */
export interface CastOptions {
  readonly cols: number
  readonly rows: number
  /** When it starts (ms since the epoch, the header's `timestamp`) and the clock events are timed by (ms). */
  readonly startedAt: number
  readonly now: () => number
  /** Stop, saying so, once the file would pass this many bytes. */
  readonly maxBytes: number
  /** Record input events (`i`). */
  readonly input: boolean
  readonly title?: string | undefined
}

/**
 * What the header of a cast says, and why a recording stopped.
 *
 * @since 0.2.0
 */
export const stoppedAtCap = (maxBytes: number) => `recording stopped: the size cap of ${maxBytes} bytes was reached`

/** Room kept under the cap for the marker that says the recording stopped. */
const CAP_RESERVE = 160

/**
 * One recording being written as asciicast v2: fed synchronously where the session parses its output (so
 * its events are in the terminal's order), bounded by `maxBytes`.
 *
 * @since 0.2.0
 */
export class Cast {
  readonly #file: RecordingFile
  readonly #options: CastOptions
  readonly #start: number
  readonly #decoder = new TextDecoder("utf-8")
  #bytes = 0
  #stopped: string | undefined

  constructor(file: RecordingFile, options: CastOptions) {
    this.#file = file
    this.#options = options
    this.#start = options.now()
    this.#line(JSON.stringify({
      version: 2,
      width: options.cols,
      height: options.rows,
      timestamp: Math.floor(options.startedAt / 1000),
      env: { TERM: "xterm-256color" },
      ...(options.title !== undefined ? { title: options.title } : {})
    }))
  }

  /** The file's name. */
  get name(): string {
    return this.#file.name
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.#bytes
  }

  /** Why the recording stopped before its session ended (the size cap). */
  get stopped(): string | undefined {
    return this.#stopped
  }

  /** Raw output of the program, decoded as UTF-8 across chunk boundaries. */
  output(data: Uint8Array): void {
    if (this.#stopped !== undefined) return
    const text = this.#decoder.decode(data, { stream: true })
    if (text !== "") this.#event("o", text)
  }

  /** Input: the text, or — typed with echo off — only how long it was. */
  input(text: string, secret: boolean): void {
    if (!this.#options.input) return
    this.#event("i", secret ? `[human typed ${lineBytes(text) - 1} bytes with echo off]` : text)
  }

  resize(cols: number, rows: number): void {
    this.#event("r", `${cols}x${rows}`)
  }

  marker(label: string): void {
    this.#event("m", label)
  }

  /** The end: everything written reaches the file. */
  get close(): Effect.Effect<void> {
    return this.#file.close
  }

  #event(code: string, data: string): void {
    if (this.#stopped !== undefined) return
    const seconds = Math.max(0, Math.round((this.#options.now() - this.#start) * 1000) / 1_000_000)
    const line = `[${seconds}, ${JSON.stringify(code)}, ${JSON.stringify(data)}]`
    // counted once per event (this runs for every chunk of output)
    const bytes = lineBytes(line)
    if (this.#bytes + bytes > this.#options.maxBytes - CAP_RESERVE) {
      this.#stopped = stoppedAtCap(this.#options.maxBytes)
      this.#line(`[${seconds}, "m", ${JSON.stringify(this.#stopped)}]`)
      return
    }
    this.#line(line, bytes)
  }

  #line(line: string, bytes = lineBytes(line)): void {
    this.#bytes += bytes
    this.#file.write(line)
  }
}
