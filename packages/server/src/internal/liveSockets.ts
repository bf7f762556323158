/**
 * The live view's two WebSockets. `/live/events`: the list of every session (on every change, and each
 * second for what changes without an event: busy, cwd, the foreground program). `/live/terminal/:id`: one
 * session's watch — a JSON `snapshot` first, then the pty's bytes as binary messages in order, JSON for
 * resizes, the exit, a dropped watcher and the control lease — and, from the page, `take`, `input`,
 * `resize`, `release`. The person is the socket's credential (its signed-in session, or the token); the
 * socket's `person` parameter is only the name they are shown by. A socket that holds the lease when it
 * closes hands it back. Each credential has at most `maxSocketsPerPerson` sockets open (`Sockets`), and a
 * socket's messages wait in a bounded inbox: a client that sends faster than they are answered is closed.
 */
import { Oversight, Watch } from "@agent-terminal/core"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Socket from "@effect/platform/Socket"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

type Write = (chunk: Uint8Array | string | Socket.CloseEvent) => Effect.Effect<void, Socket.SocketError>

/** The default of how many sockets one credential may hold open at once. */
export const DEFAULT_SOCKETS_PER_PERSON = 16

/** Messages of one socket waiting to be answered, at most: past it the client is closed (1008). */
export const INBOX_MESSAGES = 256

/** The sockets each credential holds open. */
export class Sockets {
  readonly #open = new Map<string, number>()
  constructor(readonly maxPerPerson: number) {}

  /** Take a place for `person`'s socket (`false`: they hold the most already); release it with `release`. */
  acquire(person: string): boolean {
    const held = this.#open.get(person) ?? 0
    if (held >= this.maxPerPerson) return false
    this.#open.set(person, held + 1)
    return true
  }

  release(person: string): void {
    const held = (this.#open.get(person) ?? 1) - 1
    if (held <= 0) this.#open.delete(person)
    else this.#open.set(person, held)
  }
}

const json = (value: unknown) => JSON.stringify(value)

const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** The list, pushed on every change and every `refreshMs`. */
export const events = (request: HttpServerRequest.HttpServerRequest, refreshMs: number) =>
  Effect.gen(function*() {
    const oversight = yield* Oversight.Oversight
    const clock = yield* Effect.clock
    const socket = yield* request.upgrade
    // the WebSocket is accepted by the socket's reader: it runs first, the writer waits for it to open
    const reader = yield* Effect.forkScoped(socket.runRaw(() => {}))
    const write = yield* socket.writer
    const push = oversight.sessions.pipe(
      Effect.flatMap((sessions) => write(json({ type: "sessions", sessions, at: clock.unsafeCurrentTimeMillis() })))
    )
    const ticks = Stream.merge(
      oversight.changes,
      Stream.fromSchedule(Schedule.spaced(Duration.millis(refreshMs))).pipe(Stream.as(undefined))
    )
    yield* push
    yield* ticks.pipe(
      Stream.debounce(Duration.millis(20)),
      Stream.runForEach(() => push),
      Effect.forkScoped
    )
    yield* Fiber.join(reader)
  }).pipe(Effect.scoped, Effect.catchAll(() => Effect.void))

/** The next turn of the event loop (its check phase: after the I/O callbacks of this one). */
const nextTurn = Effect.async<void>((resume) => {
  const immediate = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(immediate))
})

/** A message from the page. */
type ClientMessage =
  | { readonly type: "take" }
  | { readonly type: "release" }
  | { readonly type: "input"; readonly data: string }
  | { readonly type: "resize"; readonly cols: number; readonly rows: number }

/** The most a person's `input` message takes: 64 KiB of text. */
export const MAX_INPUT_CHARS = 64 * 1024

/** The most a client message may be before it is parsed: the largest `input`, every character JSON-escaped. */
export const MAX_MESSAGE_BYTES = 6 * MAX_INPUT_CHARS + 256

/** A client's message, or `undefined` for anything else (too large, not JSON, an unknown type, bad fields). */
export const parse = (raw: string | Uint8Array): ClientMessage | undefined => {
  if (raw.length > MAX_MESSAGE_BYTES) return undefined
  try {
    const message = JSON.parse(typeof raw === "string" ? raw : new TextDecoder().decode(raw))
    if (typeof message !== "object" || message === null) return undefined
    switch (message.type) {
      case "take":
      case "release":
        return { type: message.type }
      case "input":
        return typeof message.data === "string" && message.data.length <= MAX_INPUT_CHARS
          ? { type: "input", data: message.data }
          : undefined
      case "resize":
        return Number.isInteger(message.cols) && Number.isInteger(message.rows)
          ? { type: "resize", cols: message.cols, rows: message.rows }
          : undefined
      default:
        return undefined
    }
  } catch {
    return undefined
  }
}

const errorOf = (error: { readonly _tag: string; readonly message: string }) =>
  json({ type: "error", tag: error._tag, message: error.message })

/** A person's view of one session, and their keyboard when they hold its control. */
export const terminal = (
  request: HttpServerRequest.HttpServerRequest,
  sessionId: string,
  person: { readonly id: string; readonly name: string },
  maxBufferedBytes: number
) =>
  Effect.gen(function*() {
    const oversight = yield* Oversight.Oversight
    const watch = yield* oversight.watch(sessionId, { maxBufferedBytes })
    const control = (yield* oversight.sessions).find((session) => session.sessionId === sessionId)?.control
    const socket = yield* request.upgrade
    const inbox = yield* Mailbox.make<ClientMessage>({ capacity: INBOX_MESSAGES })
    const overflow = yield* Deferred.make<void>()
    // one message at a time, in order (the socket would run each message's effect on its own fiber); the
    // reader accepts the WebSocket, so it runs first and the writer waits for it to open
    const reader = yield* Effect.forkScoped(socket.runRaw((raw) => {
      const message = parse(raw)
      if (message !== undefined && !inbox.unsafeOffer(message)) Deferred.unsafeDone(overflow, Effect.void)
    }))
    const write: Write = yield* socket.writer
    yield* Deferred.await(overflow).pipe(
      Effect.zipRight(write(new Socket.CloseEvent(1008, "too many messages waiting: slow down"))),
      Effect.ignore,
      Effect.forkScoped
    )
    const { snapshot } = watch
    yield* write(json({
      type: "snapshot",
      sessionId,
      person: person.id,
      name: person.name,
      cols: snapshot.cols,
      rows: snapshot.rows,
      data: snapshot.data,
      pending: base64(snapshot.pending),
      status: snapshot.status,
      control: control ?? null
    }))
    yield* watch.events.pipe(
      // the outputs waiting together go as one message, and while output streams the next waits a little for
      // more: fewer frames for the server to send and the page to take
      Watch.gather,
      Stream.runForEach((event) => {
        switch (event._tag) {
          case "Output":
            // after a send, one turn of the event loop: the pty's next reads gather into the next message
            return Effect.zipRight(write(event.data), nextTurn)
          case "Resized":
            return write(json({ type: "resized", cols: event.cols, rows: event.rows }))
          case "Exited":
            return write(json({ type: "exited", exitCode: event.exitCode, signal: event.signal }))
          case "Dropped":
            return write(json({ type: "dropped", reason: event.reason }))
        }
      }),
      Effect.zipRight(write(new Socket.CloseEvent(1000, "the watch ended"))),
      Effect.ignore,
      Effect.forkScoped
    )
    const taken = { now: false }
    const answer = (
      message: ClientMessage
    ): Effect.Effect<void, Socket.SocketError | { readonly _tag: string; readonly message: string }> => {
      switch (message.type) {
        case "take":
          // the lease and the socket's knowledge of it at once: an interruption between them (the socket
          // closing) would leave a lease no finalizer hands back
          return oversight.take(sessionId, person.id, person.name).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                taken.now = true
              })
            ),
            Effect.uninterruptible,
            Effect.flatMap((state) => write(json({ type: "control", control: state })))
          )
        case "release":
          return oversight.handBack(sessionId, person.id).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                taken.now = false
              })
            ),
            Effect.flatMap((note) => write(json({ type: "control", control: null, note })))
          )
        case "input":
          return oversight.input(sessionId, person.id, message.data)
        case "resize":
          return Effect.asVoid(oversight.resize(sessionId, person.id, message.cols, message.rows))
      }
    }
    // added before the message loop is forked, so it runs after that loop has stopped (finalizers run in
    // reverse): a `take` the loop was still answering cannot land after the hand-back
    yield* Effect.addFinalizer(() => taken.now ? Effect.ignore(oversight.handBack(sessionId, person.id)) : Effect.void)
    yield* inbox.take.pipe(
      Effect.flatMap((message) =>
        answer(message).pipe(
          Effect.catchAll((error) => Socket.isSocketError(error) ? Effect.fail(error) : write(errorOf(error)))
        )
      ),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Fiber.join(reader)
  }).pipe(Effect.scoped, Effect.catchAll(() => Effect.void))
