/**
 * The one-shot supervisor: starts a run (child or pty mode) under the owner's sandbox policy and the
 * shared environment policy, makes it a task of the `TaskRuntime`, races its exit against the overall
 * timeout and the no-output watchdog, and ends its whole tree whichever way it finishes. Follow-ups on a
 * background send are passed to the `TaskRuntime`.
 */
import {
  EnvPolicy,
  Errors,
  Exec,
  type Ids,
  ProcessInspector,
  PtyBackend,
  Registry,
  Sandbox,
  Session,
  TaskRuntime,
  TerminalConfig
} from "@agent-terminal/core"
import { Utf8 } from "@agent-terminal/terminal"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type * as Teardown from "../Teardown.js"
import { spawnChild } from "./execChild.js"
import type { Limits } from "./execDeadline.js"
import { expiry } from "./execDeadline.js"
import { inputPayload } from "./execProcess.js"
import { spawnPty } from "./execPty.js"
import type { Run } from "./execRun.js"
import { fromTaskView, fullOf, labelOf, news, summaryOf, summaryOfTask, viewOf } from "./execRun.js"
import { firstReturn } from "./execWaitFor.js"

/** What `uninterruptibleMask` hands its body: makes a part of it interruptible again. */
type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** Ended runs an owner keeps for `poll`/`log` before the oldest are forgotten. */
const MAX_ENDED_PER_OWNER = 32
/** Removed task ids remembered, so removing twice is not an error. */
const REMOVED_MEMORY = 1024

/** Build the supervisor in a scope; closing it kills every run still going. */
/** The services the supervisor runs over, besides its containment (cgroups, host-exit guard). */
export type Requirements =
  | TerminalConfig.TerminalSettings
  | PtyBackend.PtyBackend
  | ProcessInspector.ProcessInspector
  | Sandbox.Sandbox
  | EnvPolicy.HostEnvironment
  | TaskRuntime.TaskRuntime
  | Sandbox.OwnerPolicies

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
  const runs = new Registry.Registry<string, Run>((run) => run.owner, REMOVED_MEMORY)
  let counter = 0

  const forget = (run: Run) =>
    Effect.sync(() => {
      if (run.id === undefined) return
      runs.remove(run.id)
      run.started.transcript.dispose()
    })

  /** Forget runs the task runtime no longer knows (their owner's connection ended), and the oldest ended ones. */
  const prune = Effect.gen(function*() {
    const owners = new Set(runs.values().map((run) => run.owner))
    for (const owner of owners) {
      const known = new Set((yield* tasks.list(owner)).map((view) => view.taskId as string))
      const mine = runs.ownedBy(owner)
      for (const run of mine) if (run.id !== undefined && !known.has(run.id)) yield* forget(run)
      const ended = mine.filter((run) => run.outcome !== undefined && runs.get(run.id!) !== undefined)
      ended.sort((a, b) => a.outcome!.endedAt - b.outcome!.endedAt)
      for (const run of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_PER_OWNER))) {
        yield* tasks.remove(owner, run.id!).pipe(Effect.ignore)
        yield* forget(run)
      }
    }
  })

  /** The owner's run with this id; `None` when it is not a run of this owner (maybe a background send). */
  const findRun = (owner: Ids.OwnerId, taskId: string) =>
    Effect.gen(function*() {
      const found = runs.find(owner, taskId)
      if (found._tag !== "Live") return Option.none<Run>()
      const run = found.entry
      const known = (yield* tasks.list(owner)).some((view) => view.taskId === taskId)
      if (!known) {
        yield* forget(run)
        return Option.none<Run>()
      }
      return Option.some(run)
    })

  const notFound = (taskId: string) => new Errors.TaskNotFound({ taskId })

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

  /** Spawn a run in its own scope (its teardown), under the owner's sandbox policy and the environment policy. */
  const spawn = (owner: Ids.OwnerId, request: Exec.ExecRequest, label: string) =>
    Effect.gen(function*() {
      const policy = yield* policies.policyOf(owner)
      const confined = Sandbox.isConfined(policy.mode) && policy.workspace !== undefined
      const cwd = request.cwd ?? (confined ? policy.workspace! : config.defaultCwd ?? environment.cwd)
      const argv = request.spawn._tag === "child"
        ? request.spawn.argv
        : Exec.shellArgv(config.shell, request.spawn.command)
      const confinement = yield* sandbox.confine({
        file: argv[0],
        args: argv.slice(1),
        cwd,
        env: EnvPolicy.build({ host: environment.host, trusted: environment.trusted }),
        cols: config.cols,
        rows: config.rows,
        label,
        disposeGraceMs: config.disposeGraceMs,
        limits: { pidsMax: config.pidsMax, memoryMaxBytes: config.memoryMaxBytes }
      }, policy)
      const confinedRequest = confinement.request
      if (request.spawn._tag === "child") {
        // On pipes the sandbox's launcher is the spawned process: its whole tree is the run's containment
        // (cgroup or sweep), so `attach` (which finds the program's pid on a pty) is not needed.
        return yield* spawnChild({
          argv: [confinedRequest.file, ...confinedRequest.args],
          cwd: confinedRequest.cwd,
          env: confinedRequest.env,
          label,
          graceMs: config.disposeGraceMs,
          limits: confinedRequest.limits,
          budget: Session.outputRoom(config.maxResultBytes),
          maxLines: config.scrollbackLines,
          maxBytes: config.scrollbackMaxBytes
        }).pipe(Effect.provide(containment))
      }
      return yield* spawnPty(backend, inspector, confinedRequest, confinement.attach, {
        budget: Session.outputRoom(config.maxResultBytes),
        scrollbackLines: config.scrollbackLines,
        scrollbackMaxBytes: config.scrollbackMaxBytes,
        cols: config.cols,
        rows: config.rows
      })
    })

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
        const started = yield* restore(spawn(owner, request, `exec-${++counter}`).pipe(Scope.extend(scope)))
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
        runs.set(id, run)
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
    tasks.remove(owner, run.id!).pipe(Effect.ignore, Effect.zipRight(forget(run)))

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
        yield* forget(run)
        return result
      }
      // the output was cut: keep the run so `log` can page through all of it
      run.started.transcript.takeNew()
      return { ...result, taskId: id }
    })

  const checkMillis = (field: string, value: number | undefined) =>
    value === undefined || (Number.isSafeInteger(value) && value >= 0 && value <= Session.bounds.maxMillis)
      ? Effect.void
      : Effect.fail(
        new Errors.InvalidInput({
          field,
          reason: `must be an integer number of milliseconds from 0 to ${Session.bounds.maxMillis}`
        })
      )

  const checkSize = (field: string, value: string | undefined) =>
    value === undefined || (value.length <= config.maxInputBytes && Session.inputBytes(value) <= config.maxInputBytes)
      ? Effect.void
      : Effect.fail(
        new Errors.InvalidInput({
          field,
          reason: `must be at most ${config.maxInputBytes} bytes (UTF-8; maxInputBytes)`
        })
      )

  const exec = Effect.fn("Exec.exec")(function*(owner: Ids.OwnerId, request: Exec.ExecRequest) {
    yield* checkMillis("timeoutMs", request.timeoutMs)
    yield* checkMillis("noOutputTimeoutMs", request.noOutputTimeoutMs)
    yield* checkMillis("yieldMs", request.yieldMs)
    if (request.waitFor !== undefined && request.background !== true) {
      return yield* new Errors.InvalidInput({
        field: "waitFor",
        reason: "goes with background: true (a foreground run returns at its end or after yieldMs)"
      })
    }
    if (request.waitFor?.listening !== undefined && inspector.listening === undefined) {
      return yield* new Errors.InvalidInput({
        field: "waitFor.listening",
        reason: "cannot be told on this platform (it reads /proc: Linux only); wait for a text or regex instead"
      })
    }
    if (request.spawn._tag === "pty") yield* checkSize("command", request.spawn.command)
    if (request.spawn._tag === "child" && request.spawn.argv.length === 0) {
      return yield* new Errors.InvalidInput({ field: "argv", reason: "is empty" })
    }
    if (request.spawn._tag === "pty" && request.spawn.command.trim() === "") {
      return yield* new Errors.InvalidInput({ field: "command", reason: "is empty" })
    }
    yield* prune
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

  const poll = Effect.fn("Exec.poll")(function*(owner: Ids.OwnerId, taskId: string, options: Exec.PollOptions = {}) {
    const timeoutMs = options.timeoutMs ?? config.execYieldMs
    yield* checkMillis("timeoutMs", options.timeoutMs)
    const found = yield* findRun(owner, taskId)
    if (Option.isNone(found)) {
      const view = yield* tasks.output(owner, taskId, options.wait === true ? { wait: true, timeoutMs } : {}).pipe(
        Effect.mapError(() => notFound(taskId))
      )
      return fromTaskView(view)
    }
    const run = found.value
    if (options.wait === true) yield* news(run, timeoutMs)
    if (run.outcome !== undefined) yield* Deferred.await(run.done)
    return viewOf(run, run.started.transcript.takeNew(), true)
  })

  const log = Effect.fn("Exec.log")(
    function*(
      owner: Ids.OwnerId,
      taskId: string,
      request: { readonly offset?: number | undefined; readonly count?: number | undefined }
    ) {
      const found = yield* findRun(owner, taskId)
      if (Option.isNone(found)) {
        const view = (yield* tasks.list(owner)).find((task) => task.taskId === taskId)
        if (view === undefined) return yield* notFound(taskId)
        return yield* new Errors.InvalidInput({
          field: "taskId",
          reason: `task ${taskId} is a background send${
            view.sessionId !== undefined ? ` on session ${view.sessionId}` : ""
          }: page its output with terminal_read`
        })
      }
      const page = found.value.started.transcript.page({
        ...(request.offset !== undefined ? { offset: request.offset } : {}),
        ...(request.count !== undefined ? { count: request.count } : {}),
        maxBytes: config.maxReadBytes
      })
      if (page._tag === "Left") {
        return yield* new Errors.InvalidInput({ field: page.left.field, reason: page.left.reason })
      }
      return { taskId, ...page.right }
    }
  )

  const write = Effect.fn("Exec.write")(function*(owner: Ids.OwnerId, taskId: string, input: Exec.ExecInput) {
    yield* checkSize("text", input.text)
    yield* checkSize("text", input.paste)
    const payload = inputPayload(input)
    if (payload._tag === "invalid") return yield* new Errors.InvalidInput({ field: "text", reason: payload.reason })
    const found = yield* findRun(owner, taskId)
    if (Option.isNone(found)) {
      if (input.eof === true) {
        return yield* new Errors.InvalidInput({
          field: "eof",
          reason: "a background send's terminal takes keys: send keys [\"C-d\"] for end of input"
        })
      }
      const request = payload._tag === "none"
        ? { text: "", submit: true }
        : {
          ...(input.text !== undefined ? { text: input.text } : {}),
          ...(input.keys !== undefined ? { keys: input.keys } : {}),
          ...(input.paste !== undefined ? { paste: input.paste } : {}),
          ...(input.submit !== undefined ? { submit: input.submit } : {})
        }
      yield* tasks.write(owner, taskId, request)
      const bytes = Utf8.byteLength(input.text ?? input.paste ?? "") + (input.submit === true ? 1 : 0)
      return { taskId, bytes, eof: false }
    }
    const run = found.value
    if (run.outcome !== undefined) {
      return yield* new Errors.InvalidInput({
        field: "taskId",
        reason: `task ${taskId} has ended (${run.outcome.reason})`
      })
    }
    const bytes = yield* run.started.input(input)
    return { taskId, bytes, eof: input.eof === true }
  })

  const kill = Effect.fn("Exec.kill")(function*(owner: Ids.OwnerId, taskId: string) {
    const found = yield* findRun(owner, taskId)
    if (Option.isNone(found)) {
      return fromTaskView(yield* tasks.kill(owner, taskId).pipe(Effect.mapError(() => notFound(taskId))))
    }
    const run = found.value
    yield* tasks.kill(owner, taskId).pipe(Effect.ignore)
    yield* Deferred.await(run.done)
    return viewOf(run, run.started.transcript.takeNew(), true)
  })

  const remove = Effect.fn("Exec.remove")(function*(owner: Ids.OwnerId, taskId: string) {
    const found = yield* findRun(owner, taskId)
    if (Option.isSome(found)) {
      yield* tasks.remove(owner, taskId).pipe(Effect.ignore)
      yield* Deferred.await(found.value.done)
      yield* forget(found.value)
      return { taskId, outcome: "removed" as const }
    }
    return yield* tasks.remove(owner, taskId).pipe(
      Effect.zipRight(Effect.sync(() => runs.remember(taskId, owner))),
      Effect.as({ taskId, outcome: "removed" as const }),
      Effect.catchTag("TaskNotFound", (error) =>
        runs.find(owner, taskId)._tag === "Gone"
          ? Effect.succeed({ taskId, outcome: "already-removed" as const })
          : Effect.fail(error))
    )
  })

  const list = (owner: Ids.OwnerId) =>
    Effect.map(tasks.list(owner), (views) =>
      views.map((view) => {
        const run = runs.get(view.taskId)
        return run !== undefined && run.owner === owner ? summaryOf(run, view.taskId) : summaryOfTask(view)
      }))

  yield* Effect.addFinalizer(() =>
    Effect.forEach(
      runs.values(),
      (run) =>
        (run.outcome === undefined && run.id !== undefined
          ? tasks.kill(run.owner, run.id).pipe(Effect.ignore, Effect.zipRight(Deferred.await(run.done)))
          : Effect.void).pipe(Effect.zipRight(Effect.sync(() => run.started.transcript.dispose()))),
      { discard: true, concurrency: "unbounded" }
    ).pipe(Effect.zipRight(Effect.sync(() => runs.clear())))
  )

  return Exec.Exec.of({ shell: config.shell, exec, poll, log, write, kill, remove, list })
})
