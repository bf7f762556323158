/**
 * A session's single reader: every chunk of output into the emulator (which fires markers and queues query
 * answers), the answers written back, the waiters woken; the session's exit recorded once all output is in.
 */
import type { Emulator } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import { afterPoll, nextTurn, onNextTurn } from "../clock/wake.js"
import type { SessionRuntime } from "./runtime.js"

/** How much output is parsed before the reader lets the event loop read more (see `startReader`). */
const SLICE_BYTES = 16 * 1024

/**
 * The sink's count of what it parsed is reset at the end of a turn only once it holds this much (or a chunk was
 * declined): a send's few small chunks (its echo, the markers, the prompt) then cost no `setImmediate` each, and a
 * turn still parses at least `SLICE_BYTES - RESET_AFTER_BYTES` in the sink (the count only ever over-counts a turn).
 */
const RESET_AFTER_BYTES = 4 * 1024

/**
 * Wire a spawned process to its emulator: the single reader feeds every chunk to the emulator (which
 * fires markers and queues query answers), writes the answers back, and wakes the waiters. Forked into
 * the session's scope, so closing the session stops it.
 */
export const startReader = (
  session: Omit<SessionRuntime, "emulator"> & { emulator: Emulator.Emulator },
  replies: Array<string>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { activity, emulator, process } = session
    const { timers } = activity
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    /** A piece of output into the emulator (which fires markers and queues answers to terminal queries). */
    const parse = (piece: Uint8Array) => {
      const faults = emulator.faults
      activity.bytes += piece.length
      session.watchers.output(piece) // raw bytes in parse order: a watch's snapshot is continued exactly
      try {
        emulator.write(piece)
      } catch (error) {
        // a chunk the emulator cannot take is dropped; the session and its reading go on
        runFork(Effect.logWarning("terminal emulator: an output chunk could not be parsed and was dropped", error))
        return
      }
      if (emulator.faults !== faults) {
        runFork(
          Effect.logWarning(
            "terminal emulator: xterm threw on a sequence; the rest of that output chunk was lost to the screen and the log",
            emulator.lastFault
          )
        )
      }
    }
    /** After a parse with no answers to send: waiters wake at once (`false`: answers wait for `publish`). */
    const woke = (): boolean => {
      activity.lastOutputAt = timers.now()
      if (replies.length > 0) return false
      activity.notify()
      return true
    }
    /** The answers to the queries parsed so far go back to the program; waiters wake. */
    const publish = Effect.suspend(() => {
      if (woke()) return Effect.void
      const answer = replies.join("")
      replies.length = 0
      activity.repliedAt = timers.now()
      return Effect.zipRight(process.write(answer), Effect.sync(() => activity.notify()))
    })
    /** Chunks the sink declined: in the mailbox, or taken by the loop and not parsed yet. */
    let declined = 0
    /**
     * Parsed by the sink since the count was last reset: this turn's bytes, and possibly some of earlier turns'
     * (below `RESET_AFTER_BYTES`, whose count is reset only once it matters).
     */
    let turnBytes = 0
    let resetPending = false
    const turnEnded = () => {
      turnBytes = 0
      resetPending = false
    }
    const resetAtTurnEnd = () => {
      if (resetPending) return
      resetPending = true
      onNextTurn(turnEnded)
    }
    /**
     * Output parsed in the backend's read callback itself (no fiber hop per chunk), while nothing declined
     * waits for the loop below and within the per-turn budget of the loop's own slicing; anything else is
     * declined and takes the mailbox, in order. A deliberate exception to taking callbacks through a
     * mailbox: the hop was ~12 % of the event loop's time per send with 64 busy sessions
     * (docs/performance.md). Answers to terminal queries go out through the same `publish` as the loop's.
     */
    const sink = (chunk: Uint8Array): boolean => {
      if (declined > 0 || turnBytes + chunk.length > SLICE_BYTES) {
        declined++
        resetAtTurnEnd()
        return false
      }
      turnBytes += chunk.length
      if (turnBytes >= RESET_AFTER_BYTES) resetAtTurnEnd()
      parse(chunk)
      if (!woke()) runFork(publish)
      return true
    }
    if (process.attachSink !== undefined) {
      const attach = process.attachSink
      // What arrived before the sink did waits in the mailbox: the sink declines until the loop has read it.
      declined = Option.getOrElse(process.output.unsafeSize(), () => 0)
      attach(sink)
      yield* Effect.addFinalizer(() => Effect.sync(() => attach(() => false)))
    }
    const loop = Effect.gen(function*() {
      let sinceTurn = 0
      while (true) {
        const [chunks, done] = yield* process.output.takeAll
        for (const chunk of chunks) {
          for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
            const piece = at === 0 && chunk.length <= SLICE_BYTES ? chunk : chunk.subarray(at, at + SLICE_BYTES)
            parse(piece)
            sinceTurn += piece.length
            if (sinceTurn >= SLICE_BYTES) {
              // Let the event loop read the pty between slices: a program writing fast keeps writing while
              // its output is parsed here, instead of blocking on a full pty buffer until the batch is done.
              sinceTurn = 0
              yield* publish
              yield* nextTurn
            }
          }
        }
        if (chunks.length > 0) yield* publish
        else activity.notify()
        declined = Math.max(0, declined - chunks.length)
        if (done) return
      }
    })
    yield* loop.pipe(
      Effect.catchAllCause(() => Effect.void),
      Effect.zipRight(process.exited),
      Effect.tap((status) =>
        Effect.sync(() => {
          session.exit = status
          activity.notify()
          session.watchers.exited(status) // after all the output
        })
      ),
      Effect.flatMap((status) => Deferred.succeed(session.drained, status)),
      Effect.forkScoped
    )
  })

/**
 * Output already on its way in, taken: a program found waiting has written everything it will print before its
 * wait (and a person's last line its echo before a hand-back), but those bytes may still sit in the pty: let the
 * reader take them before the send's output is cut (or the lease released). Where the backend can, they are
 * first pulled out of the kernel (`flushOutput`), which a turn of the event loop alone does not guarantee:
 * the kernel moves a pty's output to our side with deferred work that, under load, can run after the
 * program is already blocked reading.
 */
export const drainOutput = (session: SessionRuntime) =>
  Effect.gen(function*() {
    const { flushOutput } = session.process
    for (let turn = 0; turn < 8; turn++) {
      const bytes = session.activity.bytes
      if (flushOutput !== undefined) yield* flushOutput
      yield* afterPoll
      yield* Effect.yieldNow()
      if (session.activity.bytes === bytes) return
    }
  })
