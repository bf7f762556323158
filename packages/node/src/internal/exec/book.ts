/**
 * The supervisor's book of runs: each run by its task id and owner, kept while the task runtime knows its
 * task, the oldest ended ones forgotten past a bound, and removed ids remembered so a second remove is not an
 * error.
 */
import { type Ids, Registry, type TaskRuntime } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Run } from "./run.js"

/** Ended runs an owner keeps for `poll`/`log` before the oldest are forgotten. */
const MAX_ENDED_PER_OWNER = 32
/** Removed task ids remembered, so removing twice is not an error. */
const REMOVED_MEMORY = 1024

/** The runs, and what keeps them in step with the task runtime. */
export interface Book {
  readonly runs: Registry.Registry<string, Run>
  /** Forget a run: out of the book, its transcript released. */
  readonly forget: (run: Run) => Effect.Effect<void>
  /** Forget runs the task runtime no longer knows (their owner's connection ended), and the oldest ended ones. */
  readonly prune: Effect.Effect<void>
  /** The owner's run with this id; `None` when it is not a run of this owner (maybe a background send). */
  readonly find: (owner: Ids.OwnerId, taskId: string) => Effect.Effect<Option.Option<Run>>
}

/** A book over the task runtime the runs are tasks of. */
export const makeBook = (tasks: TaskRuntime.TaskRuntime["Type"]): Book => {
  const runs = new Registry.Registry<string, Run>((run) => run.owner, REMOVED_MEMORY)

  const forget = (run: Run) =>
    Effect.sync(() => {
      if (run.id === undefined) return
      runs.remove(run.id)
      run.started.transcript.dispose()
    })

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

  const find = (owner: Ids.OwnerId, taskId: string) =>
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

  return { runs, forget, prune, find }
}
