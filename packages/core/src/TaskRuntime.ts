/**
 * Background work: tasks are fibers the runtime owns, keyed by an opaque `TaskId` and scoped to their
 * owner. Each call to `output` returns what is new since the last one, and can block until the task is
 * done or a deadline passes — so an agent never spends its context polling an empty output. Completion is
 * published on a `PubSub` for runtimes that notify. In memory by design: tasks do not survive a restart.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Errors from "./Errors.js"
import type { InvalidConfig, LimitReached, TerminalError } from "./Errors.js"
import { OwnerId, TaskId } from "./Ids.js"
import * as internal from "./internal/taskRuntime.js"
import * as Operation from "./Operation.js"
import { Match, SendRequest, WaitFor } from "./Session.js"
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
   * Wait until the output since the previous look shows `condition`: the match, or `undefined` when the task
   * waits for input first. Without it, a look with `waitFor` waits for the task's end.
   */
  readonly awaitOutput?: ((condition: WaitFor) => Effect.Effect<Match | undefined>) | undefined
  /** Called on every look that consumes the output (the next `awaitOutput` looks from here). */
  readonly onLook?: (() => void) | undefined
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
export const TaskView = Schema.Struct({
  taskId: TaskId,
  kind: Schema.String,
  label: Schema.String,
  sessionId: Schema.optional(Schema.String),
  status: TaskStatus,
  output: Schema.String,
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Struct({ _tag: Schema.String, message: Schema.String })),
  /** What a look with `waitFor` found in the output (the task may still run). */
  match: Schema.optional(Match),
  elapsedMs: Schema.Number
})
/** @since 0.1.0 */
export type TaskView = typeof TaskView.Type

/**
 * Options of a look at a task: `wait` blocks until it ends; `waitFor` until its output since the previous
 * look shows that (or it waits for input, or ends); `timeoutMs` bounds either wait.
 *
 * @since 0.3.0
 */
export const OutputOptions = Schema.Struct({
  wait: Schema.optional(Schema.Boolean),
  timeoutMs: Schema.optional(Schema.Number),
  waitFor: Schema.optional(WaitFor)
})
/** @since 0.3.0 */
export type OutputOptions = typeof OutputOptions.Type

/**
 * Published when a task ends.
 *
 * @since 0.1.0
 */
export const TaskEvent = Schema.Struct({ owner: OwnerId, taskId: TaskId, status: TaskStatus })
/** @since 0.1.0 */
export type TaskEvent = typeof TaskEvent.Type

const taskId = Operation.arg("taskId", Schema.String)

/**
 * The operations on an owner's tasks that clients use (and a daemon serves), one declaration each. Starting
 * a task is not among them: the services that run work start tasks (`start`, `reserve`).
 *
 * @since 0.4.0
 * @category operations
 */
export const operations = {
  /**
   * What is new since the last look; with `wait`, block until the task ends or `timeoutMs` passes; with
   * `waitFor`, also until the output new since the last look shows it (`match`) or the task waits for input.
   */
  output: Operation.make("TaskOutput", {
    args: [taskId, Operation.optionalArg("options", OutputOptions)],
    success: TaskView,
    errors: [Errors.TaskNotFound]
  }),
  /** Interrupt the task (its creator delivers the real signal) and wait until it has ended. */
  kill: Operation.make("TaskKill", { args: [taskId], success: TaskView, errors: [Errors.TaskNotFound] }),
  /** Input for a task that takes it. */
  write: Operation.make("TaskWrite", {
    args: [taskId, Operation.arg("input", TaskInput)],
    success: Schema.Void,
    errors: [Errors.TerminalError]
  }),
  /** The owner's tasks, without consuming their output. */
  list: Operation.make("TaskList", { args: [], success: Schema.Array(TaskView) }),
  /** Forget an ended task (a running one is killed first). */
  remove: Operation.make("TaskRemove", { args: [taskId], success: Schema.Void, errors: [Errors.TaskNotFound] }),
  /** Kill and forget every task of an owner (its connection ended). */
  removeOwner: Operation.make("TaskRemoveOwner", { args: [], success: Schema.Void })
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
 * An owner's tasks as clients use them (the tools, a remote client): look, kill, write, list, remove, and the
 * endings. What a daemon serves; starting a task is not part of it (`TaskRuntime`).
 *
 * @since 0.4.0
 */
export class Tasks extends Context.Tag("@agent-terminal/core/Tasks")<
  Tasks,
  Operation.ServiceOf<typeof operations> & {
    /** Task endings, for runtimes that notify. */
    readonly completions: PubSub.PubSub<TaskEvent>
  }
>() {}

/**
 * The runtime that runs tasks, local to the services that start them (background sends, one-shot runs, a
 * request for a person): `Tasks`, and starting one. A remote client provides `Tasks` only.
 *
 * @since 0.1.0
 */
export class TaskRuntime extends Context.Tag("@agent-terminal/core/TaskRuntime")<
  TaskRuntime,
  Tasks["Type"] & {
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
  }
>() {}

/**
 * Options of the runtime.
 *
 * @since 0.2.0
 */
export interface Options {
  /** Live (not ended) tasks one owner may hold; one more is refused with `LimitReached`. Default 64. */
  readonly maxLivePerOwner?: number | undefined
  /** Live tasks of every owner together; one more is `LimitReached` (scope `server`). Default: no cap. */
  readonly maxLive?: number | undefined
}

/**
 * Build the runtime in a scope with `options`; closing the scope interrupts every task.
 *
 * @since 0.2.0
 */
export const makeWith = (
  options: Options = {}
): Effect.Effect<Context.Tag.Service<typeof TaskRuntime>, never, Scope.Scope> => internal.make(options)

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
export const layer: Layer.Layer<TaskRuntime | Tasks> = Layer.scopedContext(
  Effect.map(make, (runtime) => Context.make(TaskRuntime, runtime).pipe(Context.add(Tasks, runtime)))
)

/**
 * The in-memory runtime with its caps from the settings (`maxTasksPerOwner`, `maxTasks`).
 *
 * @since 0.2.0
 */
export const layerFromSettings: Layer.Layer<TaskRuntime | Tasks, never, TerminalConfig.TerminalSettings> = Layer
  .scopedContext(
    Effect.flatMap(
      TerminalConfig.TerminalSettings,
      (config) =>
        Effect.map(
          makeWith({ maxLivePerOwner: config.maxTasksPerOwner, maxLive: config.maxTasks }),
          (runtime) => Context.make(TaskRuntime, runtime).pipe(Context.add(Tasks, runtime))
        )
    )
  )

/**
 * The in-memory runtime with its cap validated from `config` (fails with `InvalidConfig`).
 *
 * @since 0.2.0
 */
export const layerConfig = (
  config: TerminalConfig.TerminalConfigInput = {}
): Layer.Layer<TaskRuntime | Tasks, InvalidConfig> =>
  layerFromSettings.pipe(Layer.provide(TerminalConfig.layer(config)))
