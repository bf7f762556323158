/**
 * What follows a one-shot run once it is started, by its task id: `poll` (its news), `log` (its output,
 * paged), `write` (input), `kill`, `remove` and `list`. An id that is not a run of this owner (a background
 * send's task) goes to the task runtime.
 */
import { Errors, Exec, type Ids, type TaskRuntime, type TerminalConfig } from "@agent-terminal/core"
import { Utf8 } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Book } from "./book.js"
import { checkMillis, checkSize } from "./checks.js"
import { inputPayload } from "./process.js"
import { fromTaskView, news, summaryOf, summaryOfTask, viewOf } from "./run.js"

/** The follow-up operations of `Exec`, over the supervisor's book of runs. */
export const followUps = (
  config: TerminalConfig.TerminalConfig,
  tasks: TaskRuntime.TaskRuntime["Type"],
  book: Book
): Pick<Exec.Exec["Type"], "poll" | "log" | "write" | "kill" | "remove" | "list"> => {
  const poll = Effect.fn("Exec.poll")(function*(owner: Ids.OwnerId, taskId: string, options: Exec.PollOptions = {}) {
    const timeoutMs = options.timeoutMs ?? config.execYieldMs
    yield* checkMillis("timeoutMs", options.timeoutMs)
    const found = yield* book.find(owner, taskId)
    if (Option.isNone(found)) {
      const view = yield* tasks.output(owner, taskId, options.wait === true ? { wait: true, timeoutMs } : {}).pipe(
        Effect.mapError(() => new Errors.TaskNotFound({ taskId }))
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
      const found = yield* book.find(owner, taskId)
      if (Option.isNone(found)) {
        const view = (yield* tasks.list(owner)).find((task) => task.taskId === taskId)
        if (view === undefined) return yield* new Errors.TaskNotFound({ taskId })
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
    yield* checkSize(config, "text", input.text)
    yield* checkSize(config, "text", input.paste)
    const payload = inputPayload(input)
    if (payload._tag === "invalid") return yield* new Errors.InvalidInput({ field: "text", reason: payload.reason })
    const found = yield* book.find(owner, taskId)
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
    const found = yield* book.find(owner, taskId)
    if (Option.isNone(found)) {
      return fromTaskView(
        yield* tasks.kill(owner, taskId).pipe(Effect.mapError(() => new Errors.TaskNotFound({ taskId })))
      )
    }
    const run = found.value
    yield* tasks.kill(owner, taskId).pipe(Effect.ignore)
    yield* Deferred.await(run.done)
    return viewOf(run, run.started.transcript.takeNew(), true)
  })

  const remove = Effect.fn("Exec.remove")(function*(owner: Ids.OwnerId, taskId: string) {
    const found = yield* book.find(owner, taskId)
    if (Option.isSome(found)) {
      yield* tasks.remove(owner, taskId).pipe(Effect.ignore)
      yield* Deferred.await(found.value.done)
      yield* book.forget(found.value)
      return { taskId, outcome: "removed" as const }
    }
    return yield* tasks.remove(owner, taskId).pipe(
      Effect.zipRight(Effect.sync(() => book.runs.remember(taskId, owner))),
      Effect.as({ taskId, outcome: "removed" as const }),
      Effect.catchTag("TaskNotFound", (error) =>
        book.runs.find(owner, taskId)._tag === "Gone"
          ? Effect.succeed({ taskId, outcome: "already-removed" as const })
          : Effect.fail(error))
    )
  })

  const list = (owner: Ids.OwnerId) =>
    Effect.map(tasks.list(owner), (views) =>
      views.map((view) => {
        const run = book.runs.get(view.taskId)
        return run !== undefined && run.owner === owner ? summaryOf(run, view.taskId) : summaryOfTask(view)
      }))

  return { poll, log, write, kill, remove, list }
}
