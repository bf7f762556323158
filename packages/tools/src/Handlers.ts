/**
 * The terminal tools' handlers: each call is checked against the calling owner and served by
 * `PtyService`.
 *
 * @since 0.1.0
 */
import { Ids, PtyService } from "@agent-terminal/core"
import type { Tool } from "@effect/ai"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
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
  PtyService.PtyService
> = TerminalToolkit.toLayer(Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  return {
    terminal_open: (params) => Effect.flatMap(CurrentOwner, (owner) => service.open(owner, params)),
    terminal_send: ({ sessionId, ...request }) =>
      Effect.flatMap(CurrentOwner, (owner) => service.send(owner, id(sessionId), request)),
    terminal_read: ({ sessionId, ...request }) =>
      Effect.flatMap(CurrentOwner, (owner) => service.read(owner, id(sessionId), request)),
    terminal_signal: ({ sessionId, signal }) =>
      Effect.flatMap(CurrentOwner, (owner) => service.signal(owner, id(sessionId), signal)),
    terminal_close: ({ sessionId }) => Effect.flatMap(CurrentOwner, (owner) => service.close(owner, id(sessionId))),
    terminal_list: () =>
      Effect.flatMap(CurrentOwner, (owner) => service.list(owner)).pipe(Effect.map((sessions) => ({ sessions })))
  }
}))
