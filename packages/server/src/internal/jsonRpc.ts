/**
 * JSON-RPC 2.0 as MCP clients speak it, for both transports: a message parsed once into what it is, and the
 * connection's `Codec` between the client's ids and the rpc server's.
 *
 * `@effect/rpc`'s JSON-RPC serialization is not used on this side: it answers an unknown method with a
 * defect under the id `-32603` (the client cannot match it to its request and waits out its timeout: the
 * newest SDKs probe `server/discover` first and stalled 10–64 s), turns the id `0` into a notification and
 * a string id into `null`, and puts the whole cause of a failure in the error. Here every request keeps its
 * own id, whatever its type; the rpc server (under `McpServer`) sees a fresh numeric id per request; and
 * every error has the code the specification gives it: `-32700` parse error (id null), `-32600` invalid
 * request, `-32601` method not found, `-32602` invalid params, `-32603` internal error.
 */
import { Validation } from "@agent-terminal/core"
import { McpSchema } from "@effect/ai"
import type * as RpcMessage from "@effect/rpc/RpcMessage"

/** A request id as the client sent it. */
export type Id = string | number

/** The error codes of JSON-RPC 2.0. */
export const codes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603
} as const

/** What one JSON-RPC message from a client is. */
export type Incoming =
  | { readonly _tag: "Request"; readonly id: Id; readonly method: string; readonly params: unknown }
  | { readonly _tag: "Notification"; readonly method: string; readonly params: unknown }
  /** A response to a request of the server's (this server sends none it waits for): ignored. */
  | { readonly _tag: "Response" }
  /** Not a message: answered with `code` under `id` (null when it has none). */
  | { readonly _tag: "Invalid"; readonly id: Id | null; readonly code: number; readonly message: string }

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isId = (value: unknown): value is Id =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

/** A parsed message (a batch, refused since 2025-06-18, is an invalid request). */
export const classify = (value: unknown): Incoming => {
  if (Array.isArray(value)) {
    return {
      _tag: "Invalid",
      id: null,
      code: codes.invalidRequest,
      message: "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 and later)"
    }
  }
  if (!isObject(value)) {
    return { _tag: "Invalid", id: null, code: codes.invalidRequest, message: "Invalid Request: not a JSON object" }
  }
  const id = value.id
  const validId = isId(id) ? id : null
  if (value.jsonrpc !== "2.0") {
    return {
      _tag: "Invalid",
      id: validId,
      code: codes.invalidRequest,
      message: "Invalid Request: jsonrpc must be \"2.0\""
    }
  }
  if (typeof value.method === "string") {
    if (id === undefined) return { _tag: "Notification", method: value.method, params: value.params }
    if (!isId(id)) {
      return {
        _tag: "Invalid",
        id: null,
        code: codes.invalidRequest,
        message: "Invalid Request: id must be a string or a number"
      }
    }
    if (value.params !== undefined && !isObject(value.params)) {
      return { _tag: "Invalid", id, code: codes.invalidParams, message: "Invalid params: params must be an object" }
    }
    return { _tag: "Request", id, method: value.method, params: value.params }
  }
  if ("result" in value || "error" in value) return { _tag: "Response" }
  return { _tag: "Invalid", id: validId, code: codes.invalidRequest, message: "Invalid Request: no method" }
}

/** A line or body of text, parsed (`-32700` with id null when it is not JSON). */
export const parse = (text: string): Incoming => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { _tag: "Invalid", id: null, code: codes.parseError, message: "Parse error: not JSON" }
  }
  return classify(value)
}

/** The longest error message sent whole (a longer one is cut: no request comes back echoed). */
const maxMessageChars = 512

/** A JSON-RPC error response. */
export const errorResponse = (id: Id | null, code: number, message: string) => ({
  jsonrpc: "2.0" as const,
  id,
  error: { code, message: Validation.shortPrefix(message, maxMessageChars) }
})

/** A JSON-RPC result response. */
export const resultResponse = (id: Id, result: unknown) => ({ jsonrpc: "2.0" as const, id, result })

/** A JSON-RPC notification. */
export const notification = (method: string, params: unknown) => ({ jsonrpc: "2.0" as const, method, params })

/** The requests `McpServer` answers (any other method is `-32601`). */
const served: ReadonlySet<string> = new Set(McpSchema.ClientRequestRpcs.requests.keys())
/** The notifications it takes (any other is dropped, as a notification gets no answer). */
const notifications: ReadonlySet<string> = new Set(McpSchema.ClientNotificationRpcs.requests.keys())

/**
 * The protocol versions this server speaks, newest first. `McpServer` knows 2025-06-18 and older; the
 * newer revisions change nothing a server of tools must do differently (2025-11-25: tool input errors are
 * tool results, which they always were here; icons, tasks, elicitation modes are optional), so a client
 * that asks for 2025-11-25 gets it.
 *
 * @since 0.4.0
 */
export const protocolVersions: ReadonlyArray<string> = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07"
]

/** The version to answer an `initialize` asking for `requested`: it, when spoken here, else the newest. */
export const negotiate = (requested: unknown): string =>
  typeof requested === "string" && protocolVersions.includes(requested) ? requested : protocolVersions[0]!

/** Whether `McpServer` answers a request of this method. */
export const isServed = (method: string): boolean => served.has(method)

/** The message of a `-32601`. */
export const unknownMethod = (method: string): string => `Method not found: ${Validation.shortPrefix(method, 64)}`

/** What the codec makes of an incoming message. */
export type Route =
  | { readonly _tag: "Forward"; readonly message: RpcMessage.FromClientEncoded }
  | { readonly _tag: "Answer"; readonly response: object }
  | { readonly _tag: "Drop" }

const drop: Route = { _tag: "Drop" }

interface Pending {
  readonly id: Id
  /** An `initialize`: its answer gets the negotiated version and the server's instructions. */
  readonly initialize?: { readonly requested: unknown } | undefined
}

const messageOf = (error: unknown): string =>
  isObject(error) && typeof error.message === "string" ? error.message : typeof error === "string" ? error : ""

/**
 * The JSON-RPC error of an rpc failure: a failure with an MCP error's `code` keeps it; a payload the
 * request schema refused (a defect of the rpc server's decode) is `-32602`; anything else is `-32603`.
 */
const failureError = (cause: unknown): { readonly code: number; readonly message: string } => {
  if (isObject(cause) && cause._tag === "Fail" && isObject(cause.error) && typeof cause.error.code === "number") {
    return { code: cause.error.code, message: messageOf(cause.error) || "the request failed" }
  }
  if (isObject(cause) && cause._tag === "Die") {
    const text = messageOf(cause.defect)
    // the rpc server reports a payload its schema refused as a defect carrying the schema's message
    if (/Expected|is missing|is unexpected|ParseError/.test(text)) {
      return { code: codes.invalidParams, message: `Invalid params: ${text}` }
    }
    return { code: codes.internalError, message: `Internal error${text === "" ? "" : `: ${text}`}` }
  }
  if (isObject(cause) && cause._tag === "Interrupt") {
    return { code: codes.internalError, message: "Internal error: the request was interrupted" }
  }
  return { code: codes.internalError, message: "Internal error" }
}

/**
 * One connection's (or one MCP session's) ids: each forwarded request gets a fresh numeric id for the rpc
 * server, and its answer goes back under the client's own id.
 *
 * @since 0.4.0
 */
export interface Codec {
  /** Where an incoming request or notification goes: the rpc server, an answer at once, or nowhere. */
  readonly route: (message: Incoming) => Route
  /** The JSON-RPC message of an rpc server's response (`undefined`: nothing to send). */
  readonly encode: (response: RpcMessage.FromServerEncoded) => object | undefined
  /** The rpc id of a client's request still in flight (for `notifications/cancelled`). */
  readonly internalId: (id: Id) => string | undefined
}

/** A codec; `instructions` are added to every `initialize` answer. */
export const makeCodec = (instructions: string | undefined): Codec => {
  let next = 0
  const pending = new Map<string, Pending>()
  const byClientId = new Map<string, string>()
  const keyOf = (id: Id) => `${typeof id}:${id}`

  const forward = (id: Id, method: string, params: unknown): Route => {
    const internal = String(++next)
    pending.set(internal, {
      id,
      initialize: method === "initialize"
        ? { requested: isObject(params) ? params.protocolVersion : undefined }
        : undefined
    })
    byClientId.set(keyOf(id), internal)
    return {
      _tag: "Forward",
      message: { _tag: "Request", id: internal, tag: method, payload: params ?? {}, headers: [] }
    }
  }

  const route = (message: Incoming): Route => {
    switch (message._tag) {
      case "Invalid":
        return { _tag: "Answer", response: errorResponse(message.id, message.code, message.message) }
      case "Response":
        return drop
      case "Notification": {
        if (!notifications.has(message.method)) return drop
        if (message.method === "notifications/cancelled") {
          const requestId = isObject(message.params) ? message.params.requestId : undefined
          const internal = isId(requestId) ? byClientId.get(keyOf(requestId)) : undefined
          if (internal === undefined) return drop
          return {
            _tag: "Forward",
            message: {
              _tag: "Request",
              id: "",
              tag: message.method,
              payload: { ...(message.params as object), requestId: internal },
              headers: []
            }
          }
        }
        return {
          _tag: "Forward",
          message: { _tag: "Request", id: "", tag: message.method, payload: message.params ?? {}, headers: [] }
        }
      }
      case "Request":
        if (!served.has(message.method)) {
          return {
            _tag: "Answer",
            response: errorResponse(message.id, codes.methodNotFound, unknownMethod(message.method))
          }
        }
        return forward(message.id, message.method, message.params)
    }
  }

  const settle = (requestId: string): Pending | undefined => {
    const found = pending.get(requestId)
    if (found === undefined) return undefined
    pending.delete(requestId)
    byClientId.delete(keyOf(found.id))
    return found
  }

  const encode = (response: RpcMessage.FromServerEncoded): object | undefined => {
    switch (response._tag) {
      case "Exit": {
        const request = settle(response.requestId)
        if (request === undefined) return undefined
        const exit = response.exit
        if (exit._tag === "Success") {
          const value = exit.value
          if (request.initialize !== undefined && isObject(value)) {
            return resultResponse(request.id, {
              ...value,
              protocolVersion: negotiate(request.initialize.requested),
              ...(instructions === undefined ? {} : { instructions })
            })
          }
          return resultResponse(request.id, value)
        }
        const error = failureError(exit.cause)
        return errorResponse(request.id, error.code, error.message)
      }
      case "Defect":
        return errorResponse(null, codes.internalError, `Internal error: ${messageOf(response.defect)}`)
      default:
        // `McpServer` sends its notifications through the same protocol, as requests without an id
        return encodeServerMessage(response as unknown as RpcMessage.FromClientEncoded)
    }
  }

  return {
    route,
    encode,
    internalId: (id) => byClientId.get(keyOf(id))
  }
}

/**
 * A message the rpc server sends on its own (a notification such as `notifications/tools/list_changed`) as
 * JSON-RPC; requests of the server (with an id) are not sent, as nothing here waits for their answers.
 */
export const encodeServerMessage = (message: RpcMessage.FromClientEncoded): object | undefined =>
  message._tag === "Request" && message.id === "" ? notification(message.tag, message.payload) : undefined
