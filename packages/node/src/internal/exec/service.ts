/**
 * The one-shot supervisor: starts a run (child or pty mode) under the owner's sandbox policy and the
 * shared environment policy, makes it a task of the `TaskRuntime`, races its exit against the overall
 * timeout and the no-output watchdog, and ends its whole tree whichever way it finishes. Its parts: the checks
 * of a request (`checks.ts`), the spawn (`spawn.ts`), the book of runs (`book.ts`) and the follow-ups by task
 * id (`followUps.ts`, which pass a background send's to the `TaskRuntime`).
 */
import {
  EnvPolicy,
  Exec,
  type Ids,
  ProcessInspector,
  PtyBackend,
  Sandbox,
  TaskRuntime,
  TerminalConfig
} from "@agent-terminal/core"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type * as Teardown from "../../Teardown.js"
import { makeBook } from "./book.js"
import { checkRequest } from "./checks.js"
import type { Limits } from "./deadline.js"
import { expiry } from "./deadline.js"
import { followUps } from "./followUps.js"
import type { Run } from "./run.js"
import { fullOf, labelOf, news, viewOf } from "./run.js"
import { spawnRun } from "./spawn.js"
import { firstReturn } from "./waitFor.js"

/** What `uninterruptibleMask` hands its body: makes a part of it interruptible again. */
type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** The services the supervisor runs over, besides its containment (cgroups, host-exit guard). */
export type Requirements =
  | TerminalConfig.TerminalSettings
  | PtyBackend.PtyBackend
  | ProcessInspector.ProcessInspector
  | Sandbox.Sandbox
  | EnvPolicy.HostEnvironment
  | TaskRuntime.TaskRuntime
  | Sandbox.OwnerPolicies

/** Build the supervisor in a scope; closing it kills every run still going. */
export const make: Effect.Effect<
  Context.Tag.Service<typeof Exec.Exec>,
  never,
  Requirements | Teardown.Cgroups | Teardown.HostExit | Scope.Scope
> = Effect.gen(function*() {
  const config = yield* TerminalConfig.TerminalSettings
  const backend = yield* PtyBackend.PtyBackend
  const inspector = yield* ProcessInspector.ProcessInspector
  const sandbox = yield* Sandbox.Sandbox
  const environment = yield* EnvPolicy.HostEnvironment
  const tasks = yield* TaskRuntime.TaskRuntime
  const policies = yield* Sandbox.OwnerPolicies
  const containment = yield* Effect.context<Teardown.Cgroups | Teardown.HostExit>()
  const serviceScope = yield* Effect.scope
  // the runs' times (start, end, deadlines, elapsed ms) on the clock the service is built with
  const clock = yield* Effect.clock
  const book = makeBook(tasks)
  const spawnDeps = { config, backend, inspector, sandbox, environment, policies, containment }
  let counter = 0

  const finish = (
    run: Run,
    reason: Exec.Reason,
    status: Option.Option<{ exitCode: number | null; signal: string | null }>
  ) =>
    Effect.gen(function*() {
      yield* run.started.freeze
      const report = yield* run.started.terminate
      const exit = Option.isSome(status)
        ? status
        : yield* run.started.ended.pipe(Effect.interruptible, Effect.timeout(500), Effect.option)
      yield* run.started.drained
      run.outcome = {
        reason,
        exitCode: Option.isSome(exit) && exit.value.exitCode !== null && reason === "exited"
          ? exit.value.exitCode
          : undefined,
        signal: Option.isSome(exit) && exit.value.signal !== null ? exit.value.signal : undefined,
        survivors: report.survivors,
        endedAt: clock.unsafeCurrentTimeMillis()
      }
      if (report.survivors.length > 0) {
        yield* Effect.logWarning("exec teardown left survivors").pipe(
          Effect.annotateLogs({ label: run.label, survivors: report.survivors.join(",") })
        )
      }
      run.started.activity.notify(undefined)
    }).pipe(Effect.uninterruptible)

  /**
   * The task's work: race the exit against the limits, then end the tree. `begun` completes once the run
   * is inside its guarded region: from then on a kill always finishes it and closes its scope.
   */
  const supervise = (run: Run, limits: Limits, begun: Deferred.Deferred<void>): Effect.Effect<Exec.ExecResult> =>
    Deferred.succeed(begun, undefined).pipe(
      Effect.zipRight(
        Effect.raceFirst(
          run.started.ended.pipe(Effect.map((status) => ({ reason: "exited" as const, status: Option.some(status) }))),
          expiry(limits, run.startedAt, run.started.activity, () => clock.unsafeCurrentTimeMillis()).pipe(
            Effect.map((reason) => ({ reason, status: Option.none() }))
          )
        ).pipe(
          // a task may be started from an uninterruptible region: the run must stay killable
          Effect.interruptible,
          Effect.flatMap(({ reason, status }) => finish(run, reason, status))
        )
      ),
      Effect.onInterrupt(() => run.outcome === undefined ? finish(run, "killed", Option.none()) : Effect.void),
      Effect.ensuring(
        Scope.close(run.scope, Exit.void).pipe(Effect.zipRight(Deferred.succeed(run.done, undefined)))
      ),
      Effect.uninterruptible,
      Effect.map(() => viewOf(run, fullOf(run), false))
    )

  /**
   * Spawn a run and make it a task. Run inside `exec`'s uninterruptible region: only the spawn is restored
   * to interruptible. The run's place within the owner's cap is reserved before it is spawned; until the task
   * owns the run's scope, a failure or an interruption closes it (and gives the place back); the run is
   * returned only once it is guarded.
   */
  const start = (owner: Ids.OwnerId, request: Exec.ExecRequest, restore: Restore) =>
    Effect.gen(function*() {
      // The run's place within the owner's cap on live tasks, taken before anything is spawned.
      const reservation = yield* tasks.reserve(owner)
      const scope = yield* Scope.fork(serviceScope, ExecutionStrategy.sequential)
      let owned = false
      const register = Effect.gen(function*() {
        const started = yield* restore(
          spawnRun(spawnDeps, owner, request, `exec-${++counter}`).pipe(Scope.extend(scope))
        )
        const run: Run = {
          id: undefined,
          owner,
          mode: request.spawn._tag,
          label: labelOf(request.spawn),
          started,
          clock,
          startedAt: clock.unsafeCurrentTimeMillis(),
          scope,
          done: yield* Deferred.make<void>(),
          outcome: undefined,
          cached: undefined
        }
        const limits: Limits = {
          timeoutMs: request.timeoutMs ?? config.execTimeoutMs,
          noOutputTimeoutMs: request.noOutputTimeoutMs ?? config.execNoOutputTimeoutMs
        }
        const begun = yield* Deferred.make<void>()
        const id = yield* tasks.start(owner, {
          kind: "exec",
          label: run.label,
          run: supervise(run, limits, begun),
          output: () => fullOf(run).text,
          waitingForInput: () => run.outcome === undefined && started.waitingForInput(),
          input: (input) => started.input(input),
          finalOutput: (result) => result.output
        }, reservation)
        owned = true
        run.id = id
        book.runs.set(id, run)
        // the id is handed out only once the run is guarded (a task killed before its fiber starts never runs
        // its finalizers: the process would be left to the service's scope)
        yield* Deferred.await(begun)
        return run
      })
      return yield* register.pipe(
        Effect.onExit((exit) =>
          owned ? Effect.void : Effect.zipRight(Effect.sync(reservation.release), Scope.close(scope, exit))
        )
      )
    })

  /** An interrupted foreground run leaves nothing: its task is killed (its tree ended) and forgotten. */
  const discard = (owner: Ids.OwnerId, run: Run) =>
    tasks.remove(owner, run.id!).pipe(Effect.ignore, Effect.zipRight(book.forget(run)))

  /** A foreground run: its news within the yield window, then its end (or its task id to follow it). */
  const foreground = (owner: Ids.OwnerId, request: Exec.ExecRequest, run: Run) =>
    Effect.gen(function*() {
      const id = run.id!
      yield* news(run, request.yieldMs ?? config.execYieldMs)
      if (run.outcome === undefined) return viewOf(run, run.started.transcript.takeNew(), true)
      yield* Deferred.await(run.done)
      const result = viewOf(run, fullOf(run), false)
      if (!result.truncated) {
        yield* tasks.remove(owner, id).pipe(Effect.ignore)
        yield* book.forget(run)
        return result
      }
      // the output was cut: keep the run so `log` can page through all of it
      run.started.transcript.takeNew()
      return { ...result, taskId: id }
    })

  const exec = Effect.fn("Exec.exec")(function*(owner: Ids.OwnerId, request: Exec.ExecRequest) {
    yield* checkRequest(config, inspector.listening !== undefined, request)
    yield* book.prune
    // Interrupted at any point (a caller's timeout, a cancelled request), the run leaves no trace.
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(start(owner, request, restore), (run) =>
        request.background === true
          ? request.waitFor === undefined
            ? Effect.succeed(viewOf(run, { text: "", truncated: false }, true))
            : restore(firstReturn(run, request.waitFor, request.yieldMs ?? config.execYieldMs, inspector)).pipe(
              Effect.onInterrupt(() => discard(owner, run))
            )
          : restore(foreground(owner, request, run)).pipe(Effect.onInterrupt(() => discard(owner, run))))
    )
  })

  yield* Effect.addFinalizer(() =>
    Effect.forEach(
      book.runs.values(),
      (run) =>
        (run.outcome === undefined && run.id !== undefined
          ? tasks.kill(run.owner, run.id).pipe(Effect.ignore, Effect.zipRight(Deferred.await(run.done)))
          : Effect.void).pipe(Effect.zipRight(Effect.sync(() => run.started.transcript.dispose()))),
      { discard: true, concurrency: "unbounded" }
    ).pipe(Effect.zipRight(Effect.sync(() => book.runs.clear())))
  )

  return Exec.Exec.of({ shell: config.shell, exec, ...followUps(config, tasks, book) })
})
