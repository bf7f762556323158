/**
 * The in-memory task runtime (`TaskRuntime.makeWith`): tasks are fibers forked in the runtime's scope, in
 * a registry by owner, with a cap on the live ones per owner (reservations included).
 */
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import type { TerminalError } from "../Errors.js"
import { InvalidInput, LimitReached, TaskNotFound } from "../Errors.js"
import type { OwnerId } from "../Ids.js"
import { TaskId } from "../Ids.js"
import { Registry } from "../Registry.js"
import type { Match } from "../Session.js"
import type {
  Options,
  OutputOptions,
  TaskEvent,
  TaskInput,
  TaskReservation,
  TaskRuntime,
  TaskSpec,
  TaskStatus,
  TaskView
} from "../TaskRuntime.js"

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

/** Build the runtime in a scope; closing the scope interrupts every task. */
export const make = (options: Options): Effect.Effect<Context.Tag.Service<typeof TaskRuntime>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const maxLive = options.maxLivePerOwner ?? 64
    const maxLiveAll = options.maxLive ?? Number.POSITIVE_INFINITY
    const tasks = new Registry<TaskId, Entry>((entry) => entry.owner, 0)
    const completions = yield* PubSub.unbounded<TaskEvent>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(completions))

    const statusOf = (entry: Entry): TaskStatus => {
      const exit = entry.exit
      if (exit === undefined) return entry.spec.waitingForInput() ? "waiting_input" : "running"
      if (Exit.isSuccess(exit)) return "completed"
      return entry.killed || Exit.isInterrupted(exit) ? "killed" : "failed"
    }

    const view = (entry: Entry, consume: boolean, match?: Match): TaskView => {
      const ended = entry.exit
      const status = statusOf(entry)
      const current = ended !== undefined && Exit.isSuccess(ended) && entry.spec.finalOutput !== undefined
        ? entry.spec.finalOutput(ended.value)
        : entry.spec.output()
      const output = consume ? delta(entry.seen, current) : current
      if (consume) {
        entry.seen = current
        entry.spec.onLook?.()
      }
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
        ...(match !== undefined ? { match } : {}),
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
    const heldByAll = () => {
      let live = 0
      for (const entry of tasks.values()) if (entry.exit === undefined) live++
      for (const count of pending.values()) live += count
      return live
    }
    /** The refusal for `owner` now, or `undefined`: its own cap first, then the server's. */
    const refusal = (owner: OwnerId): LimitReached | undefined =>
      held(owner) >= maxLive
        ? new LimitReached({ limit: "tasks", max: maxLive })
        : heldByAll() >= maxLiveAll
        ? new LimitReached({ limit: "tasks", max: maxLiveAll, scope: "server" })
        : undefined

    const reserve = (owner: OwnerId) =>
      Effect.suspend((): Effect.Effect<TaskReservation, LimitReached> => {
        const refused = refusal(owner)
        if (refused !== undefined) return Effect.fail(refused)
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
        else {
          const refused = refusal(owner)
          if (refused !== undefined) return yield* refused
        }
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

    const output = (owner: OwnerId, taskId: string, options: OutputOptions = {}) =>
      Effect.gen(function*() {
        const entry = yield* lookup(owner, taskId)
        const { awaitOutput } = entry.spec
        const condition = options.waitFor
        if (options.wait !== true && (condition === undefined || entry.exit !== undefined)) return view(entry, true)
        const ended = Effect.as(Deferred.await(entry.done), undefined)
        const wait: Effect.Effect<Match | undefined> = condition === undefined || awaitOutput === undefined
          ? ended
          : Effect.raceFirst(ended, awaitOutput(condition))
        const waited = yield* options.timeoutMs === undefined
          ? wait.pipe(Effect.interruptible)
          : wait.pipe(
            Effect.interruptible,
            Effect.timeoutOption(Duration.millis(options.timeoutMs)),
            Effect.map(
              (found) => found._tag === "Some" ? found.value : undefined
            )
          )
        return view(entry, true, entry.exit === undefined ? waited : undefined)
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
