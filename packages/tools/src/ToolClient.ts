/**
 * The terminal tools for an Effect program, without MCP: the same call path as every transport (parameter
 * validation, the caller's owner, the bounded rendering), so an in-process agent loop sees exactly what a
 * model behind MCP sees.
 *
 * ```ts
 * const program = Effect.gen(function*() {
 *   const tools = yield* ToolClient.ToolClient
 *   const opened = yield* tools.call("terminal_open", {})
 *   const sent = yield* tools.call("terminal_send", { sessionId: opened.structured.sessionId, text: "ls" })
 *   yield* Console.log(sent.text) // "[wait: prompt] [exit: 0]\n…"
 * })
 * program.pipe(
 *   Effect.provide(ToolClient.layer({ owner: "agent-1" }).pipe(Layer.provide(NodeTerminal.layer()))),
 *   Effect.runPromise
 * )
 * ```
 *
 * @since 0.1.0
 */
import { Ids, TerminalConfig } from "@agent-terminal/core"
import type { Errors } from "@agent-terminal/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Deployment from "./Deployment.js"
import * as Handlers from "./Handlers.js"
import * as ToolCall from "./ToolCall.js"

/**
 * Options of a call: who calls (default: the client's owner).
 *
 * @since 0.1.0
 */
export interface CallOptions {
  readonly owner?: string | undefined
}

/**
 * Call the terminal tools by name with JSON arguments; a call never fails — a failure is an outcome with
 * `isError: true`, the error's `_tag` and `message` in `structured`, as over MCP.
 *
 * @since 0.1.0
 */
export class ToolClient extends Context.Tag("@agent-terminal/tools/ToolClient")<
  ToolClient,
  {
    readonly call: (name: string, args?: unknown, options?: CallOptions) => Effect.Effect<ToolCall.ToolOutcome>
    /** The bound of every rendered result. */
    readonly maxResultBytes: number
  }
>() {}

/**
 * Options of a client.
 *
 * @since 0.1.0
 */
export interface Options {
  /** Bound of every rendered result (at least 64; default 32768). */
  readonly maxResultBytes?: number | undefined
  /** The owner of the calls (a call may name another); sessions are visible only to their owner. */
  readonly owner: string
  /** The tools and parameters exposed (default: all of them). */
  readonly deployment?: Deployment.Deployment | undefined
}

/**
 * What the tool handlers need (today: `PtyService` and `TaskRuntime.Tasks`) — what `NodeTerminal.layer` provides.
 *
 * @since 0.1.0
 */
export type Requirements = Layer.Layer.Context<typeof Handlers.layer>

/**
 * A client over the tool handlers in context.
 *
 * @since 0.1.0
 */
export const make = (
  options: Options
): Effect.Effect<ToolClient["Type"], Errors.InvalidConfig, Handlers.Handlers> =>
  Effect.gen(function*() {
    const settings = yield* TerminalConfig.make(
      options.maxResultBytes === undefined ? {} : { maxResultBytes: options.maxResultBytes }
    )
    const caller = yield* ToolCall.make({ maxResultBytes: settings.maxResultBytes, deployment: options.deployment })
    const owner = Ids.OwnerId.make(options.owner)
    return ToolClient.of({
      maxResultBytes: settings.maxResultBytes,
      call: (name, args, callOptions) =>
        caller.call(callOptions?.owner === undefined ? owner : Ids.OwnerId.make(callOptions.owner), name, args ?? {})
    })
  })

/**
 * The client with the tool handlers, over whatever provides their services (e.g. `NodeTerminal.layer()`).
 *
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<ToolClient, Errors.InvalidConfig, Requirements> =>
  Layer.effect(ToolClient, make(options)).pipe(Layer.provide(Handlers.layer))
