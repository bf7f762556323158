/**
 * The terminal tools' handlers: each call is checked against the calling owner and served by
 * `PtyService` (one-shot runs by `Exec`, tasks by `TaskRuntime`).
 *
 * @since 0.1.0
 */
import { Exec, Ids, Placement, PtyService, type Session, TaskRuntime } from "@agent-terminal/core"
import type { Tool } from "@effect/ai"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as DefaultTerminal from "./internal/defaultTerminal.js"
import * as ExecHandlers from "./internal/execHandlers.js"
import * as Progress from "./internal/progress.js"
import { CurrentOwner } from "./Owner.js"
import { TerminalToolkit } from "./TerminalTools.js"

const id = (sessionId: string) => Ids.SessionId.make(sessionId)

/**
 * Handlers for every terminal tool, over the `PtyService` in context.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<
  Tool.HandlersFor<typeof TerminalToolkit.tools>,
  never,
  PtyService.PtyService | TaskRuntime.TaskRuntime
> = TerminalToolkit.toLayer(Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const tasks = yield* TaskRuntime.TaskRuntime
  // optional, so runtimes (and fakes) without one-shot runs still serve the terminal tools
  const oneShot = yield* Effect.serviceOption(Exec.Exec)
  const defaults = DefaultTerminal.make(service)
  const sendTo = (owner: Ids.OwnerId, sessionId: Ids.SessionId, request: Session.SendRequest) =>
    Effect.zipRight(Progress.waitsOn(sessionId), service.send(owner, sessionId, request))
  return {
    terminal_open: (params) =>
      Effect.flatMap(CurrentOwner, (owner) => {
        // in a fleet (Deployment.machines) the call may say where the terminal goes
        const { labels, machine, ...request } = params as typeof params & Placement.Request
        const open = service.open(owner, request)
        return machine === undefined && labels === undefined ? open : Placement.placedOn({ machine, labels })(open)
      }),
    terminal_send: ({ run_in_background, sessionId, ...fields }) =>
      Effect.flatMap(CurrentOwner, (owner) => {
        const request = run_in_background === true ? { ...fields, background: true } : fields
        if (sessionId !== undefined) return sendTo(owner, id(sessionId), request)
        return defaults.withDefault(owner, (terminal) =>
          Effect.map(sendTo(owner, terminal.id, request), (result) => ({
            ...result,
            sessionId: terminal.id,
            ...(terminal.opened === undefined ? {} : { motd: terminal.opened.motd })
          })))
      }),
    terminal_read: ({ sessionId, ...request }) =>
      Effect.flatMap(CurrentOwner, (owner) => service.read(owner, id(sessionId), request)),
    terminal_signal: ({ sessionId, signal, timeoutMs, wait }) =>
      Effect.flatMap(CurrentOwner, (owner) => {
        const target = id(sessionId)
        if (wait === false) return service.signal(owner, target, signal)
        return sendTo(owner, target, { signal, ...(timeoutMs === undefined ? {} : { timeoutMs }) }).pipe(
          Effect.map(({ signalled, ...result }) => ({
            delivered: signalled?.delivered ?? false,
            targetPgid: signalled?.targetPgid ?? 0,
            ...result
          })),
          // a send or a background task holds the terminal: the signal goes now, its end is theirs to tell
          Effect.catchTag("SendActive", () => service.signal(owner, target, signal))
        )
      }),
    terminal_close: ({ sessionId }) => Effect.flatMap(CurrentOwner, (owner) => service.close(owner, id(sessionId))),
    terminal_resize: ({ sessionId, ...size }) =>
      Effect.flatMap(CurrentOwner, (owner) => service.resize(owner, id(sessionId), size)),
    terminal_request_human: ({ sessionId, ...request }) =>
      Effect.flatMap(
        CurrentOwner,
        (owner) => Effect.zipRight(Progress.waitsOn(id(sessionId)), service.requestHuman(owner, id(sessionId), request))
      ),
    terminal_list: () =>
      Effect.flatMap(CurrentOwner, (owner) => service.list(owner)).pipe(Effect.map((sessions) => ({ sessions }))),
    task_output: ({ taskId, timeoutMs, wait, waitFor }) =>
      Effect.flatMap(CurrentOwner, (owner) => tasks.output(owner, taskId, { wait, timeoutMs, waitFor })),
    task_kill: ({ taskId }) => Effect.flatMap(CurrentOwner, (owner) => tasks.kill(owner, taskId)),
    exec: (params) => Effect.flatMap(CurrentOwner, (owner) => ExecHandlers.exec(oneShot, owner, params)),
    process: (params) => Effect.flatMap(CurrentOwner, (owner) => ExecHandlers.process(oneShot, owner, params))
  }
}))
