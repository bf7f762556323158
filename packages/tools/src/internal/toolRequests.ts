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
import { Validation } from "@agent-terminal/core"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import * as Effect from "effect/Effect"
import { TerminalToolkit } from "../TerminalTools.js"
import type * as ToolCall from "../ToolCall.js"

/** A request id as the rpc server answers it (a bigint: the JSON-RPC id 0 arrives as "" and leaves as "0"). */
export const requestKey = (id: string): string => {
  try {
    return String(BigInt(id))
  } catch {
    return id
  }
}

/** Whether a message is an `initialize` request (its response carries the server's instructions). */
export const isInitialize = (message: RpcMessage.FromClientEncoded): message is RpcMessage.RequestEncoded =>
  message._tag === "Request" && message.tag === "initialize"

/**
 * The response to an `initialize` with the server's `instructions` added (`McpServer` has no option for
 * them; the result's schema has the field).
 */
export const withInstructions = (
  response: RpcMessage.FromServerEncoded,
  instructions: string | undefined
): RpcMessage.FromServerEncoded => {
  if (instructions === undefined || response._tag !== "Exit" || response.exit._tag !== "Success") return response
  const value = response.exit.value
  if (!isPlainObject(value)) return response
  return { ...response, exit: { _tag: "Success", value: { ...value, instructions } } }
}

/** A tool call the transport answers itself. */
export interface ToolRequest {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The request when it is a `tools/call` of a terminal tool whose shape `McpServer` would accept (a
 * string name, arguments an object or absent); anything else goes to `McpServer`, which answers it as
 * it always does.
 */
export const toolRequest = (message: RpcMessage.FromClientEncoded): ToolRequest | undefined => {
  if (message._tag !== "Request" || message.tag !== "tools/call" || message.id === "") return undefined
  const payload = message.payload
  if (!isPlainObject(payload)) return undefined
  const name = payload.name
  if (typeof name !== "string" || !Object.hasOwn(TerminalToolkit.tools, name)) return undefined
  const args = payload.arguments
  if (args !== undefined && !isPlainObject(args)) return undefined
  return { id: message.id, name, arguments: args ?? {} }
}

/** The `CallToolResult` of an outcome, as `McpServer` encodes it. */
export const callToolResult = (outcome: ToolCall.ToolOutcome) => ({
  content: [{ type: "text", text: outcome.text }],
  structuredContent: outcome.structured,
  isError: outcome.isError
})

/** The response to a tool request, as the rpc protocol writes it. */
export const exitOf = (id: string, outcome: ToolCall.ToolOutcome): RpcMessage.FromServerEncoded => ({
  _tag: "Exit",
  requestId: id,
  exit: { _tag: "Success", value: callToolResult(outcome) }
})

/** The request id a `notifications/cancelled` names, if the message is one. */
export const cancelledId = (message: RpcMessage.FromClientEncoded): string | undefined => {
  if (message._tag !== "Request" || message.tag !== "notifications/cancelled") return undefined
  const payload = message.payload
  if (!isPlainObject(payload)) return undefined
  const id = payload.requestId
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined
}

/** Run a tool request as `call` does and give its response (an interrupted call answers nothing). */
export const serve = (
  caller: ToolCall.Caller,
  request: ToolRequest
): Effect.Effect<RpcMessage.FromServerEncoded> =>
  Effect.map(caller.call(request.name, request.arguments), (outcome) => exitOf(request.id, outcome))

/** The largest JSON-RPC error a transport sends whole. */
const maxErrorBytes = 4096

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string"
    ? (error as { message: string }).message
    : "the request failed"

/**
 * A response as the transports send it: an error (a failed request, a defect) whose encoding would be
 * longer than 4 KiB — the rpc server puts the whole cause in `error.data`, a schema failure repeats the
 * value it refused — is cut to its code and a short prefix of its message, so no request comes back
 * echoed whole.
 */
export const bounded = (response: RpcMessage.FromServerEncoded): RpcMessage.FromServerEncoded => {
  if (response._tag === "Exit" && response.exit._tag === "Failure") {
    const cause = response.exit.cause
    if (JSON.stringify(cause).length <= maxErrorBytes) return response
    const error = cause._tag === "Fail" ? cause.error : undefined
    const code = typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "number"
      ? (error as { code: number }).code
      : -32603
    return {
      ...response,
      exit: {
        _tag: "Failure",
        cause: { _tag: "Fail", error: { code, message: Validation.shortPrefix(messageOf(error), 512) } }
      }
    }
  }
  if (response._tag === "Defect" && JSON.stringify(response.defect).length > maxErrorBytes) {
    return { _tag: "Defect", defect: Validation.shortPrefix(messageOf(response.defect), 512) }
  }
  return response
}
