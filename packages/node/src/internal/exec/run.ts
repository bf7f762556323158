/**
 * One-shot runs as the supervisor holds them, and the views it answers with.
 */
import type { Exec, Ids, TaskRuntime } from "@agent-terminal/core"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Started } from "./process.js"
import type { Bounded } from "./text.js"

/** How a run ended. */
export interface Outcome {
  readonly reason: Exec.Reason
  readonly exitCode: number | undefined
  readonly signal: string | undefined
  readonly survivors: ReadonlyArray<number>
  readonly endedAt: number
}

/** One run: its program, its task id, its scope (the teardown) and, once ended, its outcome. */
export interface Run {
  id: Ids.TaskId | undefined
  readonly owner: Ids.OwnerId
  readonly mode: Exec.Mode
  readonly label: string
  readonly started: Started
  /** The service's clock (taken once, where the service is built): the run's times and elapsed ms. */
  readonly clock: Clock.Clock
  readonly startedAt: number
  readonly scope: Scope.CloseableScope
  readonly done: Deferred.Deferred<void>
  outcome: Outcome | undefined
  cached: { readonly version: number; readonly view: Bounded } | undefined
}

/** A readable label for lists (never run: argv is passed to the program as it is). */
export const labelOf = (spawn: Exec.Spawn): string =>
  spawn._tag === "pty"
    ? spawn.command
    : spawn.argv.map((arg) => /^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg)).join(" ")

/** Where the run is. */
export const statusOf = (run: Run): Exec.Status =>
  run.outcome === undefined
    ? run.started.waitingForInput() ? "waiting_input" : "running"
    : run.outcome.reason === "exited"
    ? "exited"
    : "killed"

/** The whole output, rendered again only when something changed. */
export const fullOf = (run: Run): Bounded => {
  const version = run.started.activity.version
  if (run.cached?.version === version) return run.cached.view
  const view = run.started.transcript.full()
  run.cached = { version, view }
  return view
}

/** The run as a result: `output` is the given view of its output. */
export const viewOf = (run: Run, output: Bounded, withId: boolean): Exec.ExecResult => {
  const outcome = run.outcome
  return {
    ...(withId && run.id !== undefined ? { taskId: run.id } : {}),
    kind: "exec",
    mode: run.mode,
    status: statusOf(run),
    ...(outcome !== undefined ? { reason: outcome.reason } : {}),
    output: output.text,
    ...(outcome?.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
    ...(outcome?.signal !== undefined ? { signal: outcome.signal } : {}),
    truncated: output.truncated,
    ...(outcome !== undefined && outcome.survivors.length > 0 ? { survivors: [...outcome.survivors] } : {}),
    elapsedMs: (outcome?.endedAt ?? run.clock.unsafeCurrentTimeMillis()) - run.startedAt
  }
}

/** A background send's task view in the shape of a run's result. */
export const fromTaskView = (view: TaskRuntime.TaskView): Exec.ExecResult => {
  const result = view.result as { readonly exitCode?: unknown; readonly truncated?: unknown } | undefined
  return {
    taskId: view.taskId,
    kind: view.kind,
    status: view.status,
    output: view.error !== undefined
      ? `${view.output}${view.output === "" ? "" : "\n"}[${view.error._tag}] ${view.error.message}`
      : view.output,
    ...(typeof result?.exitCode === "number" ? { exitCode: result.exitCode } : {}),
    truncated: result?.truncated === true,
    elapsedMs: view.elapsedMs
  }
}

/** Wait until the run ends, waits for input, or `ms` passes (waking on every change to look again). */
export const news = (run: Run, ms: number) =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + ms
    while (run.outcome === undefined && !run.started.waitingForInput()) {
      const remaining = deadline - (yield* Clock.currentTimeMillis)
      if (remaining <= 0) return
      const changed = run.started.activity.changed
      if (run.outcome !== undefined || run.started.waitingForInput()) return
      yield* Effect.raceFirst(Deferred.await(changed), Effect.sleep(remaining))
    }
  })

/** A run as listed. */
export const summaryOf = (run: Run, taskId: string): Exec.TaskSummary => ({
  taskId,
  kind: "exec",
  label: run.label,
  mode: run.mode,
  status: statusOf(run),
  ...(run.outcome !== undefined ? { reason: run.outcome.reason } : {}),
  ...(run.outcome?.exitCode !== undefined ? { exitCode: run.outcome.exitCode } : {}),
  elapsedMs: (run.outcome?.endedAt ?? run.clock.unsafeCurrentTimeMillis()) - run.startedAt
})

/** Another task (a background send) as listed. */
export const summaryOfTask = (view: TaskRuntime.TaskView): Exec.TaskSummary => {
  const result = view.result as { readonly exitCode?: unknown } | undefined
  return {
    taskId: view.taskId,
    kind: view.kind,
    label: view.label,
    ...(view.sessionId !== undefined ? { sessionId: view.sessionId } : {}),
    status: view.status,
    ...(typeof result?.exitCode === "number" ? { exitCode: result.exitCode } : {}),
    elapsedMs: view.elapsedMs
  }
}
