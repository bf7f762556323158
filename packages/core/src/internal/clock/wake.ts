/**
 * The wake-up primitives of the service, in one place: the clock it keeps time with (`Timers`, from Effect's
 * `Clock`, so a `TestClock` drives every wait), a session's output activity (`Activity`), things that happen
 * once (`Once`, and the send's `CancelSignal` and `SendDone`), the event-loop turns a wait for output needs,
 * and a `Schedule` stepped by hand for a wait that must also wake on output (`Cadence`).
 *
 * Hand-built where Effect's own primitive costs more on the hot path (measured: docs/performance.md); each
 * says why.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Runtime from "effect/Runtime"
import type * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as ScheduleIntervals from "effect/ScheduleIntervals"

/**
 * Time as the service keeps it: the current time, a callback after a delay, and a sleep, all on one `Clock`.
 * Callbacks (not fibers) wake the hot path's waits; under another clock than the live one (a `TestClock`)
 * they are fibers sleeping on that clock, so a test moves every wait by adjusting it.
 */
export interface Timers {
  readonly clock: Clock.Clock
  readonly now: () => number
  /** Call `f` after `ms` (never, for an infinite `ms`); the returned function cancels it. */
  readonly after: (ms: number, f: () => void) => () => void
  readonly sleep: (ms: number) => Effect.Effect<void>
}

const never = () => {}

const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

/** The live clock's timers: `Date.now` and `setTimeout`. */
const liveTimers: Timers = {
  clock: liveClock,
  // the live Clock's own time, called directly: the send path reads it several times a send (docs/performance.md)
  now: Date.now,
  after: (ms, f) => {
    if (!Number.isFinite(ms)) return never
    const timer = setTimeout(f, ms)
    return () => clearTimeout(timer)
  },
  sleep: (ms) => liveClock.sleep(Duration.millis(ms))
}

/**
 * The timers of the current fiber's `Clock` (taken once, when the service is built: the service keeps the
 * time of the clock it was built with).
 */
export const makeTimers: Effect.Effect<Timers> = Effect.clockWith((clock) =>
  clock === liveClock ? Effect.succeed(liveTimers) : Effect.map(Effect.runtime<never>(), (runtime) => {
    const runFork = Runtime.runFork(runtime)
    return {
      clock,
      now: () => clock.unsafeCurrentTimeMillis(),
      after: (ms, f) => {
        if (!Number.isFinite(ms)) return never
        const fiber = runFork(Effect.zipRight(clock.sleep(Duration.millis(ms)), Effect.sync(f)))
        return () => fiber.unsafeInterruptAsFork(FiberId.none)
      },
      sleep: (ms) => clock.sleep(Duration.millis(ms))
    } satisfies Timers
  })
)

/** Call `f` in the check phase of this turn of the event loop (after the I/O callbacks being run now). */
export const onNextTurn = (f: () => void): () => void => {
  const immediate = setImmediate(f)
  return () => clearImmediate(immediate)
}

/** Call `f` after the next poll for I/O: output that was readable now has been read by then. */
export const onAfterPoll = (f: () => void): () => void => {
  let immediate = setImmediate(() => {
    immediate = setImmediate(f)
  })
  return () => clearImmediate(immediate)
}

/**
 * The check phase of this turn of the event loop: after the I/O callbacks being run now. A reader that
 * yields here lets node read its ptys before it parses on.
 */
export const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) =>
  Effect.sync(onNextTurn(() => resume(Effect.void)))
)

/** After the next poll for I/O: output that was readable now has been read (and handed on) by then. */
export const afterPoll: Effect.Effect<void> = Effect.async<void>((resume) =>
  Effect.sync(onAfterPoll(() => resume(Effect.void)))
)

/** Every change is one that can end a plain wait. */
const anyChange = (): boolean => true

/**
 * Output activity: when the last bytes arrived, and a wake-up for whoever waits for the next change.
 * Waiters take `version` before they look at the state, so no change between look and wait is missed.
 */
export class Activity {
  /** When output last arrived (never, at first: whatever the clock's epoch). */
  lastOutputAt = Number.NEGATIVE_INFINITY
  bytes = 0
  /** When the emulator's answers to terminal queries were last written back to the program. */
  repliedAt = Number.NEGATIVE_INFINITY
  /** Counts changes: a waiter that took it before looking wakes at once if it moved since. */
  version = 0
  readonly #waiters = new Set<() => void>()

  constructor(readonly timers: Timers) {}

  /**
   * Wait for the first change after `seen` was taken (at once if there was one already) or `ms`, whichever
   * comes first; `true` when output changed. A timer and a callback: no fibers to fork and interrupt, and
   * nothing allocated per chunk of output when nobody waits.
   */
  changeOrSleep(seen: number, ms: number): Effect.Effect<boolean> {
    return this.relevantChangeOrSleep(seen, ms, anyChange)
  }

  /**
   * `changeOrSleep` where a change wakes the waiter only when `relevant()` holds, asked in the change's
   * own callback: while output streams, a wait that only some changes can end (a new marker, a prompt under
   * the cursor) costs a call per chunk, not a fiber woken per chunk.
   */
  relevantChangeOrSleep(seen: number, ms: number, relevant: () => boolean): Effect.Effect<boolean> {
    return Effect.async<boolean>((resume) => {
      if (this.version !== seen && relevant()) return resume(Effect.succeed(true))
      const wake = () => {
        if (!relevant()) return
        cancel()
        this.#waiters.delete(wake)
        resume(Effect.succeed(true))
      }
      this.#waiters.add(wake)
      const cancel = this.timers.after(ms, () => {
        this.#waiters.delete(wake)
        resume(Effect.succeed(false))
      })
      return Effect.sync(() => {
        cancel()
        this.#waiters.delete(wake)
      })
    })
  }

  /** True when nothing changes for `ms` after `seen` was taken. */
  quietFor(seen: number, ms: number): Effect.Effect<boolean> {
    return Effect.map(this.changeOrSleep(seen, ms), (moved) => !moved)
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

/**
 * Something that happens once, seen without a fiber: waits register a callback (`listen`) or await it
 * (`await`, built only when asked for). One is made for every send, and most are never awaited: an Effect
 * `Latch` builds its whole set of effects up front (201 → 193 MB allocated per 6400 sends without it).
 */
export class Once {
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
      return never
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
 * A `Schedule`'s delays, taken one at a time, for a wait that must wake on something else as well (output):
 * the caller sleeps each delay its own way (`Activity.changeOrSleep`), which `Effect.repeat` cannot do.
 * `reset` starts the schedule over.
 */
export class Cadence {
  #state: unknown

  constructor(readonly schedule: Schedule.Schedule<unknown>, readonly timers: Timers) {
    this.#state = schedule.initial
  }

  /** The next delay in ms; `undefined` once the schedule is done. */
  next(): Effect.Effect<number | undefined> {
    const now = this.timers.now()
    return Effect.map(this.schedule.step(now, undefined, this.#state), ([state, , decision]) => {
      this.#state = state
      return ScheduleDecision.isDone(decision)
        ? undefined
        : Math.max(0, ScheduleIntervals.start(decision.intervals) - now)
    })
  }

  reset(): void {
    this.#state = this.schedule.initial
  }
}
