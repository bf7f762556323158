import { Emulator, ShellMarkers } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type { OwnerId, SessionId } from "../Ids.js"
import type { TerminalRef } from "../ProcessInspector.js"
import type { ExitStatus, PtyProcess } from "../PtyBackend.js"
import type { SessionStatus, SessionType } from "../Session.js"
import type { TerminalConfig } from "../TerminalConfig.js"
import type { Interrupted } from "./interrupt.js"
import { ShellState } from "./shellState.js"
import type { Watchers } from "./watchers.js"

/**
 * Output activity: when the last bytes arrived, and a wake-up for whoever waits for the next change.
 * Waiters take `version` before they look at the state, so no change between look and wait is missed.
 */
export class Activity {
  lastOutputAt = 0
  bytes = 0
  /** When the emulator's answers to terminal queries were last written back to the program. */
  repliedAt = 0
  /** Counts changes: a waiter that took it before looking wakes at once if it moved since. */
  version = 0
  readonly #waiters = new Set<() => void>()

  /**
   * Wait for the first change after `seen` was taken (at once if there was one already) or `ms`, whichever
   * comes first; `true` when output changed. A timer and a callback: no fibers to fork and interrupt, and
   * nothing allocated per chunk of output when nobody waits.
   */
  changeOrSleep(seen: number, ms: number): Effect.Effect<boolean> {
    return Effect.async<boolean>((resume) => {
      if (this.version !== seen) return resume(Effect.succeed(true))
      let timer: ReturnType<typeof setTimeout> | undefined
      const wake = () => {
        clearTimeout(timer)
        this.#waiters.delete(wake)
        resume(Effect.succeed(true))
      }
      this.#waiters.add(wake)
      if (Number.isFinite(ms)) {
        timer = setTimeout(() => {
          this.#waiters.delete(wake)
          resume(Effect.succeed(false))
        }, ms)
      }
      return Effect.sync(() => {
        clearTimeout(timer)
        this.#waiters.delete(wake)
      })
    })
  }

  /** Call `listener` on every change until the returned function is called. */
  listen(listener: () => void): () => void {
    this.#waiters.add(listener)
    return () => this.#waiters.delete(listener)
  }

  /** Wait for the first change after `seen` was taken. */
  change(seen: number): Effect.Effect<void> {
    return Effect.asVoid(this.changeOrSleep(seen, Number.POSITIVE_INFINITY))
  }

  notify(): void {
    this.version++
    if (this.#waiters.size > 0) { for (const wake of [...this.#waiters]) wake() }
  }
}

/** Everything the service holds for one open session. */
export interface SessionRuntime {
  readonly id: SessionId
  readonly owner: OwnerId
  readonly name: string
  readonly type: SessionType
  readonly cwd: string
  readonly nonce: string | undefined
  readonly process: PtyProcess
  /** The session's terminal as the inspector knows it (the shell's pid and the pty slave). */
  readonly terminal: TerminalRef
  readonly emulator: Emulator.Emulator
  readonly scope: Scope.CloseableScope
  readonly shell: ShellState
  readonly activity: Activity
  /** A send (foreground, or a background task) holds the session: one at a time. */
  busy: boolean
  /** Completes once the program exited and all its output was read. */
  readonly drained: Deferred.Deferred<ExitStatus>
  exit: ExitStatus | undefined
  closing: boolean
  activeTask: string | undefined
  /** The foreground send in flight, which a cancel reaches through its signal. */
  activeSend: ActiveSend | undefined
  /** Watches of the session (the live view), fed by the reader as it parses (`PtyService.watch`). */
  readonly watchers: Watchers
}

/** How far a foreground send got, and what its cancellation did. */
export interface SendProgress {
  /** Its input reached the terminal (a cancel before that writes nothing and signals nothing). */
  written: boolean
  interrupted: Interrupted | undefined
}

/**
 * Something that happens once, seen without a fiber: waits register a callback (`listen`) or await it
 * (`await`, built only when asked for: one of these is made for every send, and most are never awaited).
 */
class Once {
  #happened = false
  #listeners: Set<() => void> | undefined

  get happened(): boolean {
    return this.#happened
  }

  protected fire(): void {
    if (this.#happened) return
    this.#happened = true
    const listeners = this.#listeners
    this.#listeners = undefined
    if (listeners !== undefined) { for (const listener of [...listeners]) listener() }
  }

  /** Call `listener` when it happens (at once if it happened already) until the returned function is called. */
  listen(listener: () => void): () => void {
    if (this.#happened) {
      listener()
      return () => {}
    }
    const listeners = this.#listeners ??= new Set()
    listeners.add(listener)
    return () => listeners.delete(listener)
  }

  /** Completes when it happens. */
  get await(): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      const unlisten = this.listen(() => resume(Effect.void))
      return Effect.sync(unlisten)
    })
  }
}

/** A cancel asked for: the send's waits listen to it, and the send ends interrupted once they have seen it. */
export class CancelSignal extends Once {
  get cancelled(): boolean {
    return this.happened
  }

  cancel(): void {
    this.fire()
  }
}

/** A foreground send has finished and freed its slot (what a cancel, or a closing session, waits for). */
export class SendDone extends Once {
  open(): void {
    this.fire()
  }
}

/**
 * A foreground send in flight: how a cancel reaches it (it runs in its caller's fiber: the cancel is a
 * signal its waits listen to, and the send then ends interrupted, as if its fiber had been), and `done`
 * once its slot is free again.
 */
export interface ActiveSend {
  readonly cancel: CancelSignal
  readonly progress: SendProgress
  readonly done: SendDone
}

export const statusOf = (session: SessionRuntime): SessionStatus =>
  session.exit === undefined
    ? { _tag: "running" }
    : { _tag: "exited", exitCode: session.exit.exitCode, signal: session.exit.signal }

/** How much output is parsed before the reader lets the event loop read more (see `startReader`). */
const SLICE_BYTES = 16 * 1024

/** One turn of the event loop, its I/O polled. */
const ioTurn = Effect.async<void>((resume) => {
  const immediate = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(immediate))
})

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
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    /** A piece of output into the emulator (which fires markers and queues answers to terminal queries). */
    const parse = (piece: Uint8Array) => {
      const faults = emulator.faults
      activity.bytes += piece.length
      session.watchers.output(piece) // the live view: raw bytes in parse order (see watchers.ts)
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
      activity.lastOutputAt = Date.now()
      if (replies.length > 0) return false
      activity.notify()
      return true
    }
    /** The answers to the queries parsed so far go back to the program; waiters wake. */
    const publish = Effect.suspend(() => {
      if (woke()) return Effect.void
      const answer = replies.join("")
      replies.length = 0
      activity.repliedAt = Date.now()
      return Effect.zipRight(process.write(answer), Effect.sync(() => activity.notify()))
    })
    /** Chunks the sink declined: in the mailbox, or taken by the loop and not parsed yet. */
    let declined = 0
    /** Parsed by the sink in this turn of the event loop (reset on the next turn). */
    let turnBytes = 0
    const nextTurn = () => {
      turnBytes = 0
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
        return false
      }
      if (turnBytes === 0) setImmediate(nextTurn)
      turnBytes += chunk.length
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
              yield* ioTurn
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
      Effect.zipRight(Deferred.await(process.exited)),
      Effect.tap((status) =>
        Effect.sync(() => {
          session.exit = status
          activity.notify()
          session.watchers.exited(status) // the live view: the exit, after all the output
        })
      ),
      Effect.flatMap((status) => Deferred.succeed(session.drained, status)),
      Effect.forkScoped
    )
  })

/** A fresh emulator for a session, with its marker decoding and query answers wired. */
export const makeEmulator = (
  config: TerminalConfig,
  size: { readonly cols: number; readonly rows: number },
  nonce: string | undefined,
  shell: ShellState,
  replies: Array<string>
): Emulator.Emulator =>
  new Emulator.Emulator({
    cols: size.cols,
    rows: size.rows,
    scrollbackLines: config.scrollbackLines,
    scrollbackMaxBytes: config.scrollbackMaxBytes
  }, {
    onReply: (data) => replies.push(data),
    onMarker: (payload, at) => {
      if (nonce === undefined) return
      const marker = ShellMarkers.decode(payload, nonce)
      if (marker !== undefined) shell.record(marker, at)
    }
  })

/** A random hex nonce for the markers of one session. */
export const makeNonce = (): string => {
  const bytes = new Uint8Array(12)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
}
