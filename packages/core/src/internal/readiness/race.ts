/**
 * The readiness race: the tiers of a send, each a racer that decides on its own (`Tier`), raced as fibers;
 * the first decisive one wins and the others are interrupted. A shell's quick command settles before the
 * race (`promptFirst`). A new way to settle is one more racer in `tiersOf`.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { CancelSignal } from "../clock/wake.js"
import { promptComesNext, rearmed } from "../send/input.js"
import { idleTier } from "./idle.js"
import { matchTier } from "./match.js"
import { promptFirst, type PromptProgress, promptTier } from "./prompt.js"
import type { Decisive, Settled, Tier, Watch } from "./settled.js"
import { stdinTier } from "./stdin.js"

/** `timeout`: `timeoutMs` after the write. Nothing is killed. */
export const timeoutTier: Tier = (watch) =>
  Effect.map(
    watch.timers.sleep(Math.max(0, watch.writtenAt + watch.timeoutMs - watch.timers.now())),
    (): Decisive => ({ _tag: "Timeout", end: watch.session.emulator.cursor() })
  )

/** `session_exit`: the program exited and all its output was read. */
export const exitTier: Tier = (watch) =>
  Effect.map(
    Deferred.await(watch.session.drained),
    (): Decisive => ({ _tag: "SessionExit", end: watch.session.emulator.cursor() })
  )

const cancelledSettled: Settled = { _tag: "Cancelled" }

/** A cancel of the send, as a tier: it ends the race with `Cancelled`. */
const cancelTier = (cancel: CancelSignal): Effect.Effect<Settled> => Effect.as(cancel.await, cancelledSettled)

/** Every racer of a foreground send's race. */
const tiersOf = (watch: Watch, progress: PromptProgress, probeAtOnce: boolean): Array<Effect.Effect<Settled>> => {
  const tiers: Array<Effect.Effect<Settled>> = []
  if (watch.cancel !== undefined) tiers.push(cancelTier(watch.cancel))
  if (watch.session.nonce !== undefined) tiers.push(promptTier(watch, progress))
  tiers.push(exitTier(watch), timeoutTier(watch))
  const waitFor = watch.waitFor
  const matched = waitFor === undefined ? undefined : matchTier(watch, waitFor)
  if (matched !== undefined) tiers.push(matched)
  // Waiting for something in particular, silence is no answer (unless the send asked for it with idleMs);
  // and a full-screen program waits for a key between redraws, so its screen settling is the answer.
  if (waitFor === undefined || watch.idleMs !== undefined) tiers.push(idleTier(watch))
  if (waitFor?.screenStableMs === undefined) tiers.push(stdinTier(watch, { probeAtOnce }))
  return tiers
}

/**
 * The readiness race: every tier runs as its own fiber; the first decisive one wins and the others are
 * interrupted. A shell's quick command is settled before the race (`promptFirst`), which then starts
 * only when that could not decide.
 */
export const settle = (watch: Watch): Effect.Effect<Settled> => {
  const progress: PromptProgress = { rebased: false }
  const first = watch.session.nonce !== undefined && promptComesNext(watch.kind)
  const race = () => Effect.raceAll(tiersOf(watch, progress, first))
  if (!first) return race()
  return Effect.flatMap(
    promptFirst(watch, progress),
    (settled) => settled !== undefined ? Effect.succeed(settled) : race()
  )
}

/**
 * The race of a background send: it ends only when the shell's prompt is back, the session ends, or its
 * explicit deadline passes. Meanwhile the `stdin_read` tier keeps telling whether the program waits for
 * input (`onWaiting`), re-armed after every change of output.
 */
export const settleBackground = (
  watch: Watch,
  onWaiting: (waiting: boolean) => void
): Effect.Effect<Decisive> => {
  const { activity } = watch.session
  const monitor = Effect.gen(function*() {
    let current = watch
    while (true) {
      yield* stdinTier(current)
      onWaiting(true)
      yield* activity.change(activity.version)
      onWaiting(false)
      current = { ...watch, kind: rearmed(watch.kind), before: undefined, written: 0, bytesAtWrite: activity.bytes }
    }
  })
  const tiers: Array<Effect.Effect<Decisive>> = [exitTier(watch), monitor]
  if (watch.session.nonce !== undefined) tiers.push(promptTier(watch, { rebased: false }))
  if (Number.isFinite(watch.timeoutMs)) tiers.push(timeoutTier(watch))
  return Effect.raceAll(tiers)
}
