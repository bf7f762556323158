/**
 * A background run's first return with `waitFor` (`exec` with `background: true`): the output so far once
 * it shows the pattern (`match`; the run goes on), the run waits for input, it ends, or the yield window
 * passes — whichever comes first. The run's own transcript searches its output as it arrives
 * (`Transcript.watch`); `screenStableMs` is the output unchanged for that long.
 */
import type { Exec, Session } from "@agent-terminal/core"
import { Matcher } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { OutputSearch } from "./execProcess.js"
import type { Run } from "./execRun.js"
import { viewOf } from "./execRun.js"

const matchOf = (found: Matcher.Match): Session.Match => ({
  text: found.text,
  ...(found.groups !== undefined ? { groups: found.groups.map((group) => group ?? null) } : {}),
  ...(found.named !== undefined
    ? { named: Object.fromEntries(Object.entries(found.named).map(([key, value]) => [key, value ?? null])) }
    : {})
})

/** Wait as described above for at most `yieldMs`, then the run's view (with `match` when found). */
export const firstReturn = (run: Run, waitFor: Session.WaitFor, yieldMs: number): Effect.Effect<Exec.ExecResult> =>
  Effect.acquireUseRelease(
    Effect.sync(() =>
      waitFor.screenStableMs !== undefined ? undefined : run.started.transcript.watch(Matcher.pattern(
        waitFor.text !== undefined ? { text: waitFor.text } : { regex: waitFor.regex!, flags: waitFor.flags }
      ))
    ),
    (search) => waitWith(run, search, waitFor.screenStableMs, Date.now() + yieldMs),
    (search) => Effect.sync(() => search?.close())
  )

const waitWith = (
  run: Run,
  search: OutputSearch | undefined,
  stableMs: number | undefined,
  deadline: number
): Effect.Effect<Exec.ExecResult> =>
  Effect.gen(function*() {
    let match: Session.Match | undefined
    let changedAt = Date.now()
    while (run.outcome === undefined && !run.started.waitingForInput()) {
      const changed = run.started.activity.changed
      const version = run.started.activity.version
      const found = search?.check()
      if (found !== undefined) {
        match = matchOf(found)
        break
      }
      if (stableMs !== undefined && Date.now() - changedAt >= stableMs) {
        match = { text: "" }
        break
      }
      const remaining = deadline - Date.now()
      if (remaining <= 0) break
      yield* Effect.raceFirst(
        Deferred.await(changed),
        Effect.sleep(stableMs === undefined ? remaining : Math.min(remaining, stableMs))
      )
      if (run.started.activity.version !== version) changedAt = Date.now()
    }
    if (run.outcome !== undefined && match === undefined) yield* Deferred.await(run.done)
    const view = viewOf(run, run.started.transcript.takeNew(), true)
    return match === undefined ? view : { ...view, match }
  })
