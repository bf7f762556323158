/**
 * `tools/call` requests for the terminal tools, answered by the call path directly.
 *
 * `@effect/ai`'s `McpServer` serves every MCP method over an `@effect/rpc` server. A tool call through it
 * costs a fiber, a span, middleware and two Schema passes over the request and the result on top of the
 * call itself: a `terminal_list` over stdio took ~0.36 ms p50 that way, and ~0.1 ms answered here, the
 * official SDK's no-op tool 0.08–0.17 ms in the same runs (docs/performance.md). The transports hand the
 * calls of the terminal tools to `ToolCall` themselves and everything else (initialize, tools/list,
 * ping, notifications, other tools) to `McpServer`, so the answer is the same `CallToolResult`, made
 * without the detour.
 */
import type { Ids } from "@agent-terminal/core"
import { TerminalTools, type ToolCall } from "@agent-terminal/tools"
import * as Effect from "effect/Effect"
import * as JsonRpc from "./jsonRpc.js"

/** A tool call the transport answers itself. */
export interface ToolRequest {
  readonly id: JsonRpc.Id
  readonly name: string
  readonly arguments: unknown
  /** The client's `_meta.progressToken`: it asked for progress notifications while the call runs. */
  readonly progressToken: string | number | undefined
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The request when it is a `tools/call` of a terminal tool whose shape `McpServer` would accept (a
 * string name, arguments an object or absent); anything else goes to `McpServer`, which answers it as
 * it always does.
 */
export const toolRequest = (message: JsonRpc.Incoming): ToolRequest | undefined => {
  if (message._tag !== "Request" || message.method !== "tools/call") return undefined
  const params = message.params
  if (!isPlainObject(params)) return undefined
  const name = params.name
  if (typeof name !== "string" || !Object.hasOwn(TerminalTools.TerminalToolkit.tools, name)) return undefined
  const args = params.arguments
  if (args !== undefined && !isPlainObject(args)) return undefined
  const meta = params._meta
  const token = isPlainObject(meta) ? meta.progressToken : undefined
  return {
    id: message.id,
    name,
    arguments: args ?? {},
    progressToken: typeof token === "string" || typeof token === "number" ? token : undefined
  }
}

/**
 * The id of a `tools/list` request: the transports answer it themselves, with each tool's `outputSchema`
 * (`McpTools.list`), which `McpServer`'s listing has no field for.
 */
export const toolListId = (message: JsonRpc.Incoming): JsonRpc.Id | undefined =>
  message._tag === "Request" && message.method === "tools/list" ? message.id : undefined

/**
 * The `CallToolResult` of an outcome. A failure whose bound left no room for its structured fields (`{}`)
 * has no `structuredContent`: a failure's, when present, always has its `_tag` (its `outputSchema` says so).
 */
export const callToolResult = (outcome: ToolCall.ToolOutcome) => ({
  content: [{ type: "text", text: outcome.text }],
  ...(outcome.isError && Object.keys(outcome.structured).length === 0 ? {} : { structuredContent: outcome.structured }),
  isError: outcome.isError
})

/** The request id a `notifications/cancelled` names, if the message is one. */
export const cancelledId = (message: JsonRpc.Incoming): JsonRpc.Id | undefined => {
  if (message._tag !== "Notification" || message.method !== "notifications/cancelled") return undefined
  const params = message.params
  if (!isPlainObject(params)) return undefined
  const id = params.requestId
  return typeof id === "string" || typeof id === "number" ? id : undefined
}

/** A key for a request id (`1` and `"1"` are two requests). */
export const idKey = (id: JsonRpc.Id): string => `${typeof id}:${id}`

/**
 * Run a tool request as `call` does and give its JSON-RPC response (an interrupted call answers nothing). A
 * defect on the way (a bug) still answers, with an internal error under the request's id: a client is never
 * left waiting out its timeout.
 */
export const serve = (caller: ToolCall.Caller, owner: Ids.OwnerId, request: ToolRequest): Effect.Effect<object> =>
  Effect.map(
    caller.call(owner, request.name, request.arguments),
    (outcome): object => JsonRpc.resultResponse(request.id, callToolResult(outcome))
  ).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.as(
        Effect.logError("a tool call died", defect),
        JsonRpc.errorResponse(request.id, JsonRpc.codes.internalError, "Internal error: the tool call failed")
      )
    )
  )
