/**
 * The `inferred_idle` tier: the terminal has been silent long enough. The weakest tier, a guess.
 */
import * as Effect from "effect/Effect"
import { runningAtStart } from "../send/input.js"
import { promptAfter } from "../session/shellState.js"
import type { Decisive, Tier } from "./settled.js"

/**
 * `inferred_idle`: no output for `idleSilenceMs` (plus `handoffGraceMs` while a prompt waits for the
 * foreground hand-back). A guess. While the shell reports a command running, silence only counts when
 * configured, asked for by the send, or when no exact tier can tell a waiting program from a busy one.
 */
export const idleTier: Tier = (watch) =>
  Effect.gen(function*() {
    const { config, inspector, session, timers } = watch
    const bound = watch.idleMs ?? config.idleSilenceMs
    const afterRunning = runningAtStart(watch.kind)
    while (true) {
      const changed = session.activity.version
      const markers = session.shell.since(watch.baseline)
      const running = session.nonce !== undefined &&
        (markers.length === 0 ? afterRunning : markers[markers.length - 1]!.kind === "C")
      const allowed = !running || config.idleWhileRunning || watch.idleMs !== undefined || !inspector.exact
      const pendingPrompt = promptAfter(markers) !== undefined
      const wait = bound + (pendingPrompt ? config.handoffGraceMs : 0)
      const silentFor = timers.now() - Math.max(session.activity.lastOutputAt, watch.writtenAt)
      if (allowed && silentFor >= wait) {
        return { _tag: "InferredIdle", end: session.emulator.cursor() } satisfies Decisive
      }
      // Output only moves the silence's start, which the timer's end checks again; a new marker can change
      // whether silence counts and how long, so only a marker wakes this wait early.
      const seq = session.shell.seq
      yield* session.activity.relevantChangeOrSleep(
        changed,
        allowed ? wait - silentFor : config.pollIntervalMs * 4,
        () => session.shell.seq !== seq
      )
    }
  })
