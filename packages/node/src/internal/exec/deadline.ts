/**
 * When a one-shot run must be ended: its overall timeout (from the start) and its no-output watchdog
 * (from the last output or input). Pure, so the rule is tested without processes or clocks.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"

/** Node timers overflow past 2^31 - 1 ms: longer waits are taken in steps. */
const MAX_SLEEP_MS = 2 ** 30

/** The bounds of a run in milliseconds; 0 turns one off. */
export interface Limits {
  readonly timeoutMs: number
  readonly noOutputTimeoutMs: number
}

/** Either a bound has passed (and which), or how long until the next one can. */
export type Verdict =
  | { readonly _tag: "Expired"; readonly reason: "timeout" | "no_output" }
  | { readonly _tag: "Wait"; readonly ms: number }

/**
 * The verdict at `now` for a run started at `startedAt` whose last activity was at `lastActivityAt`.
 * When both bounds have passed, the one that passed first names the reason. `Wait` is `Infinity` when no
 * bound is set; activity only moves the watchdog later, so sleeping `ms` and asking again is never late.
 */
export const verdict = (limits: Limits, startedAt: number, lastActivityAt: number, now: number): Verdict => {
  const deadlines: Array<{ readonly at: number; readonly reason: "timeout" | "no_output" }> = []
  if (limits.timeoutMs > 0) deadlines.push({ at: startedAt + limits.timeoutMs, reason: "timeout" })
  if (limits.noOutputTimeoutMs > 0) {
    deadlines.push({ at: Math.max(startedAt, lastActivityAt) + limits.noOutputTimeoutMs, reason: "no_output" })
  }
  if (deadlines.length === 0) return { _tag: "Wait", ms: Number.POSITIVE_INFINITY }
  const first = deadlines.reduce((a, b) => (b.at < a.at ? b : a))
  return first.at <= now ? { _tag: "Expired", reason: first.reason } : { _tag: "Wait", ms: first.at - now }
}

/**
 * Activity of a run: when output or input last happened, and a wake-up for whoever waits for the next
 * change (output, input, waiting for input, the end). Waiters take `changed` before they look.
 */
export class Activity {
  lastAt: number
  /** Counts the changes (a cache of a view is valid while it stays the same). */
  version = 0
  #changed = Deferred.unsafeMake<void>(FiberId.none)

  constructor(now: number) {
    this.lastAt = now
  }

  get changed(): Deferred.Deferred<void> {
    return this.#changed
  }

  /** Something happened: move the watchdog (when `active`) and wake the waiters. */
  notify(now: number | undefined): void {
    if (now !== undefined) this.lastAt = now
    this.version++
    const done = this.#changed
    this.#changed = Deferred.unsafeMake<void>(FiberId.none)
    Deferred.unsafeDone(done, Effect.void)
  }
}

/**
 * Wait until `limits` end the run (per `clock`), and return why. Sleeps until the earliest deadline,
 * then asks again (activity may have moved the watchdog); never returns when no bound is set.
 */
export const expiry = (
  limits: Limits,
  startedAt: number,
  activity: Activity,
  clock: () => number
): Effect.Effect<"timeout" | "no_output"> =>
  Effect.suspend(() => {
    const result = verdict(limits, startedAt, activity.lastAt, clock())
    if (result._tag === "Expired") return Effect.succeed(result.reason)
    if (!Number.isFinite(result.ms)) return Effect.never
    return Effect.sleep(Math.min(Math.max(1, result.ms), MAX_SLEEP_MS)).pipe(
      Effect.zipRight(expiry(limits, startedAt, activity, clock))
    )
  })
