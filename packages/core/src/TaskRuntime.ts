/**
 * Background work: tasks are fibers the runtime owns, keyed by an opaque `TaskId` and scoped to their
 * owner. Each call to `output` returns what is new since the last one, and can block until the task is
 * done or a deadline passes — so an agent never spends its context polling an empty output. Completion is
 * published on a `PubSub` for runtimes that notify. In memory by design: tasks do not survive a restart.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { InvalidConfig, TerminalError } from "./Errors.js"
import { InvalidInput, LimitReached, TaskNotFound } from "./Errors.js"
import type { OwnerId } from "./Ids.js"
import { TaskId } from "./Ids.js"
import { Registry } from "./Registry.js"
import { SendRequest } from "./Session.js"
import * as TerminalConfig from "./TerminalConfig.js"

/**
 * Where a task is: still running, blocked waiting for input on its terminal, or ended (with its result,
 * its failure, or interrupted by a kill).
 *
 * @since 0.1.0
 */
export const TaskStatus = Schema.Literal("running", "waiting_input", "completed", "failed", "killed")
/** @since 0.1.0 */
export type TaskStatus = typeof TaskStatus.Type

/**
 * Input for a task that takes it (the same shapes as a send: text, keys or paste).
 *
 * @since 0.1.0
 */
export const TaskInput = SendRequest.pick("text", "keys", "paste", "submit")
/** @since 0.1.0 */
export type TaskInput = typeof TaskInput.Type

/**
 * What the creator of a task provides: the work, and live views of it.
 *
 * @since 0.1.0
 */
export interface TaskSpec<A> {
  readonly kind: string
  readonly label: string
  readonly sessionId?: string | undefined
  /** The work. Interrupting it is the kill. */
  readonly run: Effect.Effect<A, TerminalError>
  /** Everything the task has printed so far (bounded by its creator). */
  readonly output: () => string
  /** The task is blocked reading its terminal right now. */
  readonly waitingForInput: () => boolean
  /** Write input to the task, when it takes input. */
  readonly input?: ((input: TaskInput) => Effect.Effect<void, TerminalError>) | undefined
  /** The final output once done (defaults to `output()`). */
  readonly finalOutput?: ((result: A) => string) | undefined
  /**
   * Runs once when the task ends, however it ends (killed before its work began included), before the end is
   * reported: where its creator releases what it reserved for the task.
   */
  readonly onEnd?: Effect.Effect<void> | undefined
}

/**
 * One look at a task: its status, the output that is new since the previous look, and when it ended its
 * result or its error.
 *
 * @since 0.1.0
 */
export interface TaskView {
  readonly taskId: TaskId
  readonly kind: string
  readonly label: string
  readonly sessionId?: string | undefined
  readonly status: TaskStatus
  readonly output: string
  readonly result?: unknown
  readonly error?: { readonly _tag: string; readonly message: string } | undefined
  readonly elapsedMs: number
}

/**
 * Published when a task ends.
 *
 * @since 0.1.0
 */
export interface TaskEvent {
  readonly owner: OwnerId
  readonly taskId: TaskId
  readonly status: TaskStatus
}

/**
 * A place within an owner's cap on live tasks, taken before the work exists (so that nothing is started past
 * the cap: a one-shot run reserves before it spawns). Handed to `start`, which uses it, or released.
 *
 * @since 0.2.0
 */
export interface TaskReservation {
  readonly owner: OwnerId
  /** Give the place back (nothing once `start` has used it). */
  readonly release: () => void
}

/**
 * @since 0.1.0
 */
export class TaskRuntime extends Context.Tag("@agent-terminal/core/TaskRuntime")<
  TaskRuntime,
  {
    /**
     * Start a task now; its id is returned once the work is forked. Refused with `LimitReached` (nothing is
     * run) when the owner has as many live tasks as the runtime allows.
     */
    readonly start: <A>(
      owner: OwnerId,
      spec: TaskSpec<A>,
      reservation?: TaskReservation
    ) => Effect.Effect<TaskId, LimitReached>
    /** Take a place within the owner's cap for a task to start later; `LimitReached` when there is none. */
    readonly reserve: (owner: OwnerId) => Effect.Effect<TaskReservation, LimitReached>
    /** What is new since the last look; with `wait`, block until the task ends or `timeoutMs` passes. */
    readonly output: (
      owner: OwnerId,
      taskId: string,
      options?: { readonly wait?: boolean | undefined; readonly timeoutMs?: number | undefined }
    ) => Effect.Effect<TaskView, TaskNotFound>
    /** Interrupt the task (its creator delivers the real signal) and wait until it has ended. */
    readonly kill: (owner: OwnerId, taskId: string) => Effect.Effect<TaskView, TaskNotFound>
    /** Input for a task that takes it. */
    readonly write: (
      owner: OwnerId,
      taskId: string,
      input: TaskInput
    ) => Effect.Effect<void, TaskNotFound | TerminalError>
    /** The owner's tasks, without consuming their output. */
    readonly list: (owner: OwnerId) => Effect.Effect<ReadonlyArray<TaskView>>
    /** Forget an ended task (a running one is killed first). */
    readonly remove: (owner: OwnerId, taskId: string) => Effect.Effect<void, TaskNotFound>
    /** Kill and forget every task of an owner (its connection ended). */
    readonly removeOwner: (owner: OwnerId) => Effect.Effect<void>
    /** Task endings, for runtimes that notify. */
    readonly completions: PubSub.PubSub<TaskEvent>
  }
>() {}

interface Entry {
  readonly id: TaskId
  readonly owner: OwnerId
  readonly spec: TaskSpec<unknown>
  readonly startedAt: number
  readonly done: Deferred.Deferred<Exit.Exit<unknown, TerminalError>>
  fiber: Fiber.RuntimeFiber<unknown, TerminalError> | undefined
  exit: Exit.Exit<unknown, TerminalError> | undefined
  endedAt: number | undefined
  killed: boolean
  /** How much of the output the owner has seen. */
  seen: string
}

/** A task id of 96 random bits. */
const newId = (): TaskId => {
  const bytes = new Uint8Array(12)
  globalThis.crypto.getRandomValues(bytes)
  let hex = ""
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0")
  return TaskId.make(`t-${hex}`)
}

/** The part of `current` the owner has not seen yet. */
const delta = (seen: string, current: string): string => {
  if (current.startsWith(seen)) return current.slice(seen.length)
  // Redrawn (a `\r` overwrite changed a line already returned): give the lines from the first change.
  let common = 0
  while (common < seen.length && common < current.length && seen[common] === current[common]) common++
  const lineStart = current.lastIndexOf("\n", common - 1) + 1
  return current.slice(lineStart)
}

/**
 * Options of the runtime.
 *
 * @since 0.2.0
 */
export interface Options {
  /** Live (not ended) tasks one owner may hold; one more is refused with `LimitReached`. Default 64. */
  readonly maxLivePerOwner?: number | undefined
}

/**
 * Build the runtime in a scope with `options`; closing the scope interrupts every task.
 *
 * @since 0.2.0
 */
export const makeWith = (
  options: Options = {}
): Effect.Effect<Context.Tag.Service<typeof TaskRuntime>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const maxLive = options.maxLivePerOwner ?? 64
    const tasks = new Registry<TaskId, Entry>((entry) => entry.owner, 0)
    const completions = yield* PubSub.unbounded<TaskEvent>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(completions))

    const statusOf = (entry: Entry): TaskStatus => {
      const exit = entry.exit
      if (exit === undefined) return entry.spec.waitingForInput() ? "waiting_input" : "running"
      if (Exit.isSuccess(exit)) return "completed"
      return entry.killed || Exit.isInterrupted(exit) ? "killed" : "failed"
    }

    const view = (entry: Entry, consume: boolean): TaskView => {
      const ended = entry.exit
      const status = statusOf(entry)
      const current = ended !== undefined && Exit.isSuccess(ended) && entry.spec.finalOutput !== undefined
        ? entry.spec.finalOutput(ended.value)
        : entry.spec.output()
      const output = consume ? delta(entry.seen, current) : current
      if (consume) entry.seen = current
      const failure = ended !== undefined && Exit.isFailure(ended) && ended.cause._tag === "Fail"
        ? ended.cause.error
        : undefined
      return {
        taskId: entry.id,
        kind: entry.spec.kind,
        label: entry.spec.label,
        ...(entry.spec.sessionId !== undefined ? { sessionId: entry.spec.sessionId } : {}),
        status,
        output,
        ...(ended !== undefined && Exit.isSuccess(ended) ? { result: ended.value } : {}),
        ...(failure !== undefined ? { error: { _tag: failure._tag, message: failure.message } } : {}),
        elapsedMs: (entry.endedAt ?? now()) - entry.startedAt
      }
    }

    const lookup = (owner: OwnerId, taskId: string) =>
      Effect.suspend(() => {
        const entry = tasks.get(taskId as TaskId)
        return entry === undefined || entry.owner !== owner
          ? Effect.fail(new TaskNotFound({ taskId }))
          : Effect.succeed(entry)
      })

    /** Places taken by reservations not used yet, per owner. */
    const pending = new Map<OwnerId, number>()
    const held = (owner: OwnerId) =>
      tasks.countOf(owner, (entry) => entry.exit === undefined) + (pending.get(owner) ?? 0)
    const limitReached = () => new LimitReached({ limit: "tasks", max: maxLive })

    const reserve = (owner: OwnerId) =>
      Effect.suspend((): Effect.Effect<TaskReservation, LimitReached> => {
        if (held(owner) >= maxLive) return Effect.fail(limitReached())
        pending.set(owner, (pending.get(owner) ?? 0) + 1)
        let kept = true
        return Effect.succeed({
          owner,
          release: () => {
            if (!kept) return
            kept = false
            const left = (pending.get(owner) ?? 1) - 1
            if (left > 0) pending.set(owner, left)
            else pending.delete(owner)
          }
        })
      })

    // Registered and forked in one uninterruptible step: an interrupted start leaves no task without a fiber.
    const start = <A>(owner: OwnerId, spec: TaskSpec<A>, reservation?: TaskReservation) =>
      Effect.gen(function*() {
        if (reservation !== undefined && reservation.owner === owner) reservation.release()
        else if (held(owner) >= maxLive) return yield* limitReached()
        const id = tasks.mint(newId)
        if (id === undefined) return yield* Effect.dieMessage("task ids keep colliding: the random source is broken")
        const entry: Entry = {
          id,
          owner,
          spec: spec as TaskSpec<unknown>,
          startedAt: now(),
          done: yield* Deferred.make<Exit.Exit<unknown, TerminalError>>(),
          fiber: undefined,
          exit: undefined,
          endedAt: undefined,
          killed: false,
          seen: ""
        }
        tasks.set(id, entry)
        // Recorded in `onExit` (uninterruptible): a killed task's fiber runs nothing after its work. The work
        // itself is interruptible even when started from an uninterruptible region, or it could not be killed.
        entry.fiber = yield* spec.run.pipe(
          Effect.interruptible,
          Effect.onExit((exit) => settleEntry(entry, exit)),
          Effect.forkIn(scope)
        )
        return id
      }).pipe(Effect.uninterruptible)

    /** Record a task's end once: its exit, the waiters woken, the completion published. */
    const settleEntry = (entry: Entry, exit: Exit.Exit<unknown, TerminalError>) =>
      Effect.suspend(() => {
        if (entry.exit !== undefined) return Effect.void
        entry.endedAt = now()
        entry.exit = exit
        return (entry.spec.onEnd ?? Effect.void).pipe(
          Effect.zipRight(Deferred.succeed(entry.done, exit)),
          Effect.zipRight(
            PubSub.publish(completions, { owner: entry.owner, taskId: entry.id, status: statusOf(entry) })
          ),
          Effect.asVoid
        )
      })

    const output = (
      owner: OwnerId,
      taskId: string,
      options: { readonly wait?: boolean | undefined; readonly timeoutMs?: number | undefined } = {}
    ) =>
      Effect.gen(function*() {
        const entry = yield* lookup(owner, taskId)
        if (options.wait === true) {
          const wait = Deferred.await(entry.done)
          yield* options.timeoutMs === undefined
            ? wait
            : wait.pipe(Effect.interruptible, Effect.timeoutOption(Duration.millis(options.timeoutMs)))
        }
        return view(entry, true)
      })

    const kill = (owner: OwnerId, taskId: string) =>
      Effect.gen(function*() {
        const entry = yield* lookup(owner, taskId)
        if (entry.exit === undefined && entry.fiber !== undefined) {
          entry.killed = true
          const exit = yield* Fiber.interrupt(entry.fiber)
          // A fiber interrupted before it ran never reached its `onExit`: record its end here.
          if (entry.exit === undefined) yield* settleEntry(entry, exit)
          yield* Deferred.await(entry.done)
        }
        return view(entry, true)
      })

    const write = (owner: OwnerId, taskId: string, input: TaskInput) =>
      Effect.gen(function*() {
        const entry = yield* lookup(owner, taskId)
        if (entry.exit !== undefined) {
          return yield* new InvalidInput({ field: "taskId", reason: `task ${taskId} has ended` })
        }
        if (entry.spec.input === undefined) {
          return yield* new InvalidInput({ field: "taskId", reason: `task ${taskId} takes no input` })
        }
        yield* entry.spec.input(input)
      })

    const list = (owner: OwnerId) => Effect.sync(() => tasks.ownedBy(owner).map((entry) => view(entry, false)))

    const remove = (owner: OwnerId, taskId: string) =>
      kill(owner, taskId).pipe(Effect.zipRight(Effect.sync(() => tasks.discard(taskId as TaskId))), Effect.asVoid)

    const removeOwner = (owner: OwnerId) =>
      Effect.forEach(
        tasks.ownedBy(owner),
        (entry) => remove(owner, entry.id).pipe(Effect.ignore),
        { discard: true }
      )

    return { start, reserve, output, kill, write, list, remove, removeOwner, completions }
  })

/**
 * Build the runtime in a scope (the default cap: 64 live tasks per owner); closing the scope interrupts
 * every task.
 *
 * @since 0.1.0
 */
export const make: Effect.Effect<Context.Tag.Service<typeof TaskRuntime>, never, Scope.Scope> = makeWith()

/**
 * The in-memory runtime, with the default cap (64 live tasks per owner).
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<TaskRuntime> = Layer.scoped(TaskRuntime, make)

/**
 * The in-memory runtime with its cap from the settings (`maxTasksPerOwner`).
 *
 * @since 0.2.0
 */
export const layerFromSettings: Layer.Layer<TaskRuntime, never, TerminalConfig.TerminalSettings> = Layer.scoped(
  TaskRuntime,
  Effect.flatMap(TerminalConfig.TerminalSettings, (config) => makeWith({ maxLivePerOwner: config.maxTasksPerOwner }))
)

/**
 * The in-memory runtime with its cap validated from `config` (fails with `InvalidConfig`).
 *
 * @since 0.2.0
 */
export const layerConfig = (
  config: TerminalConfig.TerminalConfigInput = {}
): Layer.Layer<TaskRuntime, InvalidConfig> => layerFromSettings.pipe(Layer.provide(TerminalConfig.layer(config)))
