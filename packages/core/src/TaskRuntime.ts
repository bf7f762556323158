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
import type { TerminalError } from "./Errors.js"
import { InvalidInput, TaskNotFound } from "./Errors.js"
import type { OwnerId } from "./Ids.js"
import { TaskId } from "./Ids.js"
import { SendRequest } from "./Session.js"

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
 * @since 0.1.0
 */
export class TaskRuntime extends Context.Tag("@agent-terminal/core/TaskRuntime")<
  TaskRuntime,
  {
    /** Start a task now; its id is returned once the work is forked. */
    readonly start: <A>(owner: OwnerId, spec: TaskSpec<A>) => Effect.Effect<TaskId>
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

const newId = (): TaskId => {
  const bytes = new Uint8Array(8)
  globalThis.crypto.getRandomValues(bytes)
  return TaskId.make(`t-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`)
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
 * Build the runtime in a scope; closing the scope interrupts every task.
 *
 * @since 0.1.0
 */
export const make: Effect.Effect<Context.Tag.Service<typeof TaskRuntime>, never, Scope.Scope> = Effect
  .gen(function*() {
    const scope = yield* Effect.scope
    const tasks = new Map<TaskId, Entry>()
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
        elapsedMs: (entry.endedAt ?? Date.now()) - entry.startedAt
      }
    }

    const lookup = (owner: OwnerId, taskId: string) =>
      Effect.suspend(() => {
        const entry = tasks.get(taskId as TaskId)
        return entry === undefined || entry.owner !== owner
          ? Effect.fail(new TaskNotFound({ taskId }))
          : Effect.succeed(entry)
      })

    const start = <A>(owner: OwnerId, spec: TaskSpec<A>) =>
      Effect.gen(function*() {
        const id = newId()
        const entry: Entry = {
          id,
          owner,
          spec: spec as TaskSpec<unknown>,
          startedAt: Date.now(),
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
      })

    /** Record a task's end once: its exit, the waiters woken, the completion published. */
    const settleEntry = (entry: Entry, exit: Exit.Exit<unknown, TerminalError>) =>
      Effect.suspend(() => {
        if (entry.exit !== undefined) return Effect.void
        entry.endedAt = Date.now()
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

    const list = (owner: OwnerId) =>
      Effect.sync(() => [...tasks.values()].filter((entry) => entry.owner === owner).map((entry) => view(entry, false)))

    const remove = (owner: OwnerId, taskId: string) =>
      kill(owner, taskId).pipe(Effect.zipRight(Effect.sync(() => tasks.delete(taskId as TaskId))), Effect.asVoid)

    const removeOwner = (owner: OwnerId) =>
      Effect.forEach(
        [...tasks.values()].filter((entry) => entry.owner === owner),
        (entry) => remove(owner, entry.id).pipe(Effect.ignore),
        { discard: true }
      )

    return { start, output, kill, write, list, remove, removeOwner, completions }
  })

/**
 * The in-memory runtime.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<TaskRuntime> = Layer.scoped(TaskRuntime, make)
