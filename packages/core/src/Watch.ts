/**
 * Watching a terminal (what the live view shows in a browser): one snapshot a fresh xterm.js can be
 * initialised from, then every later chunk of the program's raw output and its status changes — taken
 * atomically, so the chunks continue the snapshot with no gap and no duplicate. A watcher never slows its
 * session: one that falls `maxBufferedBytes` behind is dropped, and its stream says so before it ends.
 *
 * @since 0.2.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { SessionStatus } from "./Session.js"

/**
 * The first event of a watch: the terminal as it is (`data`: its screen, modes and cursor as an
 * escape-sequence stream from xterm.js' `SerializeAddon`; write it into a terminal of `cols` × `rows`, then
 * `pending`, then every `Output`).
 *
 * @since 0.2.0
 */
export const Snapshot = Schema.TaggedStruct("Snapshot", {
  cols: Schema.Number,
  rows: Schema.Number,
  data: Schema.String,
  /** The start of a UTF-8 character the terminal holds undecoded: its rest comes in the next `Output`. */
  pending: Schema.Uint8ArrayFromSelf,
  status: SessionStatus
})
/** @since 0.2.0 */
export type Snapshot = typeof Snapshot.Type

/**
 * Raw bytes the program wrote, in order, right after the previous event.
 *
 * @since 0.2.0
 */
export const Output = Schema.TaggedStruct("Output", { data: Schema.Uint8ArrayFromSelf })
/** @since 0.2.0 */
export type Output = typeof Output.Type

/**
 * The terminal's size changed.
 *
 * @since 0.2.0
 */
export const Resized = Schema.TaggedStruct("Resized", { cols: Schema.Number, rows: Schema.Number })
/** @since 0.2.0 */
export type Resized = typeof Resized.Type

/**
 * The session's program exited (all its output came before this); the watch ends.
 *
 * @since 0.2.0
 */
export const Exited = Schema.TaggedStruct("Exited", {
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String)
})
/** @since 0.2.0 */
export type Exited = typeof Exited.Type

/**
 * The watcher fell too far behind and was dropped: nothing more comes; watch again for a fresh snapshot.
 *
 * @since 0.2.0
 */
export const Dropped = Schema.TaggedStruct("Dropped", { reason: Schema.String, bufferedBytes: Schema.Number })
/** @since 0.2.0 */
export type Dropped = typeof Dropped.Type

/**
 * What follows the snapshot.
 *
 * @since 0.2.0
 */
export const WatchEvent = Schema.Union(Output, Resized, Exited, Dropped)
/** @since 0.2.0 */
export type WatchEvent = typeof WatchEvent.Type

/**
 * A watch: the snapshot and the events after it (the stream ends after `Exited` or `Dropped`, or when the
 * session closes).
 *
 * @since 0.2.0
 */
export interface Watch {
  readonly snapshot: Snapshot
  readonly events: Stream.Stream<WatchEvent>
}

/**
 * Options of a watch.
 *
 * @since 0.2.0
 */
export interface WatchOptions {
  /** How far (bytes of output not yet taken) the watcher may fall behind before it is dropped. */
  readonly maxBufferedBytes?: number | undefined
}

/**
 * The default bound of a watcher's backlog: 1 MiB.
 *
 * @since 0.2.0
 */
export const defaultMaxBufferedBytes = 1024 * 1024

/**
 * The consecutive outputs of one chunk of a watch's events as one: fewer messages to encode, send,
 * acknowledge and decode (the daemon's protocol and the live view's socket both send a chunk at a time).
 *
 * @since 0.3.0
 */
export const coalesce = (events: Chunk.Chunk<WatchEvent>): Chunk.Chunk<WatchEvent> => {
  if (Chunk.size(events) < 2) return events
  const out: Array<WatchEvent> = []
  let pending: Array<Uint8Array> = []
  const flush = () => {
    if (pending.length === 0) return
    out.push({ _tag: "Output", data: pending.length === 1 ? pending[0]! : concat(pending) })
    pending = []
  }
  for (const event of events) {
    if (event._tag === "Output") pending.push(event.data)
    else {
      flush()
      out.push(event)
    }
  }
  flush()
  return Chunk.unsafeFromArray(out)
}

/**
 * A watch's events as a socket sends them: what waited together goes as one message (`coalesce`), and while
 * output streams — a message carried at least `streamingBytes` (default 4 KiB) — the next one waits `waitMs`
 * (default 10 ms) for more first. Each message costs both ends a fixed amount of work (through the daemon:
 * its RPC chunk, the client's acknowledgement, the encoding and decoding around them), the same for 4 KiB as
 * for 64 KiB, so a flood sent as it is read is mostly that work. Interactive output (an echo, a prompt) never
 * waits; the first message after a pause never waits.
 *
 * @since 0.3.0
 */
export const gather = <E, R>(
  events: Stream.Stream<WatchEvent, E, R>,
  options: { readonly waitMs?: number | undefined; readonly streamingBytes?: number | undefined } = {}
): Stream.Stream<WatchEvent, E, R> =>
  Stream.suspend(() => {
    const waitMs = options.waitMs ?? 10
    const streamingBytes = options.streamingBytes ?? 4096
    let streaming = false
    return Stream.mapChunksEffect(events, (chunk) => {
      const message = coalesce(chunk)
      const wait = streaming
      streaming = outputBytes(message) >= streamingBytes
      return wait ? Effect.as(Effect.sleep(waitMs), message) : Effect.succeed(message)
    })
  })

const outputBytes = (events: Iterable<WatchEvent>): number => {
  let bytes = 0
  for (const event of events) if (event._tag === "Output") bytes += event.data.length
  return bytes
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const joined = new Uint8Array(parts.reduce((total, part) => total + part.length, 0))
  let at = 0
  for (const part of parts) {
    joined.set(part, at)
    at += part.length
  }
  return joined
}
