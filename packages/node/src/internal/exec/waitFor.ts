/**
 * A background run's first return with `waitFor` (`exec` with `background: true`): the output so far once
 * it shows the pattern (`match`; the run goes on), the run waits for input, it ends, or the yield window
 * passes — whichever comes first. The run's own transcript searches its output as it arrives
 * (`Transcript.watch`); `screenStableMs` is the output unchanged for that long; `listening` is a process of
 * the run listening on that port (or any socket), from `/proc` (`ProcessInspector.listening`).
 */
import type { Exec, ProcessInspector, Session } from "@agent-terminal/core"
import { Matcher } from "@agent-terminal/terminal"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { OutputSearch } from "./process.js"
import type { Run } from "./run.js"
import { viewOf } from "./run.js"

const matchOf = (found: Matcher.Match): Session.Match => ({
  text: found.text,
  ...(found.groups !== undefined ? { groups: found.groups.map((group) => group ?? null) } : {}),
  ...(found.named !== undefined
    ? { named: Object.fromEntries(Object.entries(found.named).map(([key, value]) => [key, value ?? null])) }
    : {})
})

/** How often a `listening` wait looks at the run's sockets while nothing is printed. */
const LISTENING_POLL_MS = 100

/** Wait as described above for at most `yieldMs`, then the run's view (with `match` when found). */
export const firstReturn = (
  run: Run,
  waitFor: Session.WaitFor,
  yieldMs: number,
  inspector: ProcessInspector.ProcessInspector["Type"]
): Effect.Effect<Exec.ExecResult> =>
  Effect.acquireUseRelease(
    Effect.sync(() =>
      waitFor.screenStableMs !== undefined || waitFor.listening !== undefined
        ? undefined
        : run.started.transcript.watch(Matcher.pattern(
          waitFor.text !== undefined ? { text: waitFor.text } : { regex: waitFor.regex!, flags: waitFor.flags }
        ))
    ),
    (search) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        waitWith(run, search, waitFor.screenStableMs, now + yieldMs, {
          wanted: waitFor.listening,
          inspector
        })),
    (search) => Effect.sync(() => search?.close())
  )

/** A listener a `listening` wait asks for, among the run's (a fresh tree: any of them is new). */
const listenerFound = (
  run: Run,
  listening: {
    readonly wanted: true | number | undefined
    readonly inspector: ProcessInspector.ProcessInspector["Type"]
  }
): Effect.Effect<Session.Listener | undefined> => {
  const { inspector, wanted } = listening
  if (wanted === undefined || inspector.listening === undefined) return Effect.succeed(undefined)
  return Effect.map(
    inspector.listening(run.started.pid),
    (listeners) =>
      listeners.find((listener) => wanted === true || (listener.protocol !== "unix" && listener.port === wanted))
  )
}

const waitWith = (
  run: Run,
  search: OutputSearch | undefined,
  stableMs: number | undefined,
  deadline: number,
  listening: {
    readonly wanted: true | number | undefined
    readonly inspector: ProcessInspector.ProcessInspector["Type"]
  }
): Effect.Effect<Exec.ExecResult> =>
  Effect.gen(function*() {
    let match: Session.Match | undefined
    let changedAt = yield* Clock.currentTimeMillis
    while (run.outcome === undefined && !run.started.waitingForInput()) {
      const changed = run.started.activity.changed
      const version = run.started.activity.version
      const found = search?.check()
      if (found !== undefined) {
        match = matchOf(found)
        break
      }
      if (stableMs !== undefined && (yield* Clock.currentTimeMillis) - changedAt >= stableMs) {
        match = { text: "" }
        break
      }
      const listener = yield* listenerFound(run, listening)
      if (listener !== undefined) {
        match = { text: "", listening: listener }
        break
      }
      const remaining = deadline - (yield* Clock.currentTimeMillis)
      if (remaining <= 0) break
      const pause = listening.wanted !== undefined
        ? Math.min(remaining, LISTENING_POLL_MS)
        : stableMs === undefined
        ? remaining
        : Math.min(remaining, stableMs)
      yield* Effect.raceFirst(Deferred.await(changed), Effect.sleep(pause))
      if (run.started.activity.version !== version) changedAt = yield* Clock.currentTimeMillis
    }
    if (run.outcome !== undefined && match === undefined) yield* Deferred.await(run.done)
    const view = viewOf(run, run.started.transcript.takeNew(), true)
    return match === undefined ? view : { ...view, match }
  })
