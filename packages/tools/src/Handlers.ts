/**
 * The terminal tools' handlers: one per tool, each called with the calling owner (given by the transport,
 * never defaulted) and its checked parameters, served by `PtyService` (one-shot runs by `Exec`, tasks by
 * `TaskRuntime.Tasks`). The table is total over the tools: a tool without a handler is a type error.
 *
 * @since 0.1.0
 */
import { Exec, Ids, Placement, PtyService, type Session, TaskRuntime } from "@agent-terminal/core"
import type { Tool } from "@effect/ai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as DefaultTerminal from "./internal/defaultTerminal.js"
import * as ExecHandlers from "./internal/execHandlers.js"
import * as Progress from "./internal/progress.js"
import type { TerminalToolkit } from "./TerminalTools.js"

const id = (sessionId: string) => Ids.SessionId.make(sessionId)

type Tools = typeof TerminalToolkit.tools

/**
 * The handler of a tool: its owner and its checked parameters to its result or its typed failure.
 *
 * @since 0.4.0
 */
export type Handler<T> = (
  owner: Ids.OwnerId,
  params: Tool.Parameters<T>
) => Effect.Effect<Tool.Success<T>, Tool.Failure<T>>

/**
 * One handler per tool.
 *
 * @since 0.4.0
 */
export type ToolHandlers = { readonly [K in keyof Tools]: Handler<Tools[K]> }

/**
 * The tools' handlers, for the call path (`ToolCall.make`).
 *
 * @since 0.4.0
 */
export class Handlers extends Context.Tag("@agent-terminal/tools/Handlers")<Handlers, ToolHandlers>() {}

/**
 * The handlers over the services in context.
 *
 * @since 0.4.0
 */
export const make: Effect.Effect<ToolHandlers, never, PtyService.PtyService | TaskRuntime.Tasks> = Effect.gen(
  function*() {
    const service = yield* PtyService.PtyService
    const tasks = yield* TaskRuntime.Tasks
    // optional, so runtimes (and fakes) without one-shot runs still serve the terminal tools
    const oneShot = yield* Effect.serviceOption(Exec.Exec)
    const defaults = DefaultTerminal.make(service)
    const sendTo = (owner: Ids.OwnerId, sessionId: Ids.SessionId, request: Session.SendRequest) =>
      Effect.zipRight(Progress.waitsOn(sessionId), service.send(owner, sessionId, request))
    return {
      terminal_open: (owner, params) => {
        // in a fleet (Deployment.machines) the call may say where the terminal goes
        const { labels, machine, ...request } = params as typeof params & Placement.Request
        const open = service.open(owner, request)
        return machine === undefined && labels === undefined ? open : Placement.placedOn({ machine, labels })(open)
      },
      terminal_send: (owner, { run_in_background, sessionId, ...fields }) => {
        const request = run_in_background === true ? { ...fields, background: true } : fields
        if (sessionId !== undefined) return sendTo(owner, id(sessionId), request)
        return defaults.withDefault(owner, (terminal) =>
          Effect.map(sendTo(owner, terminal.id, request), (result) => ({
            ...result,
            sessionId: terminal.id,
            ...(terminal.opened === undefined ? {} : { motd: terminal.opened.motd })
          })))
      },
      terminal_read: (owner, { sessionId, ...request }) => service.read(owner, id(sessionId), request),
      terminal_snapshot: (owner, { sessionId }) => service.snapshot(owner, id(sessionId)),
      terminal_signal: (owner, { sessionId, signal, timeoutMs, wait }) => {
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
      },
      terminal_close: (owner, { sessionId }) => service.close(owner, id(sessionId)),
      terminal_resize: (owner, { sessionId, ...size }) => service.resize(owner, id(sessionId), size),
      terminal_request_human: (owner, { sessionId, ...request }) =>
        Effect.zipRight(Progress.waitsOn(id(sessionId)), service.requestHuman(owner, id(sessionId), request)),
      terminal_list: (owner) => Effect.map(service.list(owner), (sessions) => ({ sessions })),
      task_output: (owner, { taskId, timeoutMs, wait, waitFor }) =>
        tasks.output(owner, taskId, { wait, timeoutMs, waitFor }),
      task_kill: (owner, { taskId }) => tasks.kill(owner, taskId),
      exec: (owner, params) => ExecHandlers.exec(oneShot, owner, params),
      process: (owner, params) => ExecHandlers.process(oneShot, owner, params)
    }
  }
)

/**
 * The handlers over the services in context, as a layer.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Handlers, never, PtyService.PtyService | TaskRuntime.Tasks> = Layer.effect(
  Handlers,
  make
)
