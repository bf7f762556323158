/**
 * The terminal tools over MCP Streamable HTTP (protocol 2025-06-18): one endpoint (`POST` / `DELETE`; `GET`
 * answers 405, no server-initiated stream), one owner per MCP session. Mount it behind `HttpGuard`, which
 * authenticates every request and checks its `Host`, `Origin` and length first.
 *
 * The transport as the specification writes it: a `POST` body is `application/json` (else 415) and one
 * JSON-RPC message — batches are refused (400), as 2025-06-18 removed them; `Accept` lists
 * `application/json` and `text/event-stream` (else 406); after `initialize` an unsupported
 * `MCP-Protocol-Version` is 400; a notification or response is answered 202 without a body.
 *
 * `@effect/ai`'s `McpServer.layerHttp` gives every HTTP request a fresh client id and issues no
 * `Mcp-Session-Id`, so it cannot tell which requests belong together. Here every MCP session is an entry
 * of an `RcMap` — its own `McpServer` over its own rpc protocol, in the entry's scope. An `initialize`
 * without a session id creates one (past `maxSessions` open: 503 with `Retry-After`) and answers with its
 * `Mcp-Session-Id`; later requests carrying the id go to that session, each holding a reference while it
 * runs; the session's scope closes on `DELETE`, after `sessionIdleMs` (5 minutes) without a request in
 * flight, or when the server stops. An unknown id is a 404, so the client initializes again.
 *
 * Who owns the terminals: the bearer token admits a client; the `Agent-Terminal-Owner` header of its
 * `initialize` names its owner. Without one, the MCP session is an owner of its own (anonymous), and its
 * terminals and tasks end with it — a one-shot client that never sends `DELETE` leaves nothing behind past
 * the session's expiry. With one, every MCP session naming that owner (with the token) sees and continues
 * the same terminals, and they outlive the owner's last session by `ownerIdleMs` (30 minutes): a client
 * that reconnects, or restarts, finds its terminals as it left them. Calls of the terminal tools go to
 * `ToolCall` directly (`internal/toolRequests.ts`); everything else to the session's `McpServer`.
 *
 * Logs name a session by its number and a short hash of its id, never the id itself.
 *
 * @since 0.1.0
 */
import { Ids, PtyService, TaskRuntime } from "@agent-terminal/core"
import { type Deployment, type Handlers, Instructions, McpTools, ToolCall } from "@agent-terminal/tools"
import { McpServer } from "@effect/ai"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as crypto from "node:crypto"
import * as HttpGuard from "./HttpGuard.js"
import * as JsonRpc from "./internal/jsonRpc.js"
import * as SessionProtocol from "./internal/mcpSessionProtocol.js"
import * as Progress from "./internal/progress.js"
import * as ToolRequests from "./internal/toolRequests.js"
import * as McpRegistration from "./McpRegistration.js"

/**
 * Settings of the HTTP endpoint.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The server's name and version, announced in `initialize`. */
  readonly name: string
  readonly version: string
  /** The bound of every rendered tool result. */
  readonly maxResultBytes: number
  /**
   * Close an MCP session after this long without a request in flight (an anonymous session's terminals and
   * tasks with it); default 5 minutes.
   */
  readonly sessionIdleMs?: number | undefined
  /** A named owner's terminals and tasks outlive its last MCP session by this long; default 30 minutes. */
  readonly ownerIdleMs?: number | undefined
  /** MCP sessions open at once; an `initialize` past it is 503 (default 64). */
  readonly maxSessions?: number | undefined
  /** The bound of a request body in bytes (default 4 MiB; `HttpGuard` refuses a longer declared one). */
  readonly maxBodyBytes?: number | undefined
  /** The tools and parameters exposed (default: all). */
  readonly deployment?: Deployment.Deployment | undefined
  /** The guide sent in `initialize` (default: `Instructions.text` of the deployment). */
  readonly instructions?: string | undefined
}

/**
 * The header carrying the MCP session id.
 *
 * @since 0.1.0
 */
export const sessionHeader = "mcp-session-id"

/**
 * The header carrying the protocol version after initialization.
 *
 * @since 0.2.0
 */
export const protocolVersionHeader = "mcp-protocol-version"

/**
 * The protocol versions the server speaks, newest first (2025-11-25 and those of `@effect/ai`'s `McpServer`).
 *
 * @since 0.2.0
 */
export const supportedProtocolVersions: ReadonlyArray<string> = JsonRpc.protocolVersions

/**
 * The header naming a client's owner in its `initialize` request (with the bearer token).
 *
 * @since 0.4.0
 */
export const ownerHeader = "agent-terminal-owner"

/**
 * What an owner's name may be: 1 to 64 letters, digits, `.`, `_`, `@`, `-`, starting with a letter or digit.
 *
 * @since 0.4.0
 */
export const ownerNamePattern = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/

/**
 * The owner id of a named HTTP owner (apart from the daemon's `owner:` names, which need their own secret).
 *
 * @since 0.4.0
 */
export const namedOwner = (name: string): Ids.OwnerId => Ids.OwnerId.make(`mcp-http:${name}`)

/**
 * The default idle expiry of an MCP session: 5 minutes (an anonymous one's terminals end with it).
 *
 * @since 0.1.0
 */
export const defaultSessionIdleMs = 5 * 60 * 1000

/**
 * How long a named owner's terminals outlive its last MCP session by default: 30 minutes.
 *
 * @since 0.4.0
 */
export const defaultOwnerIdleMs = 30 * 60 * 1000

/**
 * The default cap on MCP sessions open at once.
 *
 * @since 0.2.0
 */
export const defaultMaxSessions = 64

/** The seconds a client is told to wait when the sessions are full. */
const retryAfterSeconds = 30

/**
 * How logs name a session: its number and the first hex digits of a SHA-256 of its id (the id is a
 * credential of its client; a hash names it without giving it away).
 *
 * @since 0.2.0
 */
export const sessionLabel = (serial: number, id: string): string =>
  `#${serial} (${crypto.createHash("sha256").update(id).digest("hex").slice(0, 8)})`

interface McpSession {
  readonly label: string
  readonly owner: Ids.OwnerId
  /** The client's ids and the rpc server's, for this session's requests. */
  readonly codec: JsonRpc.Codec
  /** The answers being computed; a `DELETE` interrupts them, and their requests answer 404. */
  readonly inFlight: Set<Fiber.RuntimeFiber<unknown, unknown>>
  /** The tool calls in flight by their request id: a `notifications/cancelled` interrupts one. */
  readonly calls: Map<string, Fiber.RuntimeFiber<unknown, unknown>>
  closed: boolean
  /** Hand a message to the session's `McpServer`; its responses, none for a notification. */
  forward: SessionProtocol.Forward
  closeReason: string
}

class UnknownSession extends Data.TaggedError("UnknownSession") {}

const rpcError = (
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: JsonRpc.Id | null = null
) => HttpServerResponse.unsafeJson(JsonRpc.errorResponse(id, code, message), { status, headers })

/** The id of a message, when it is a request. */
const idOf = (message: JsonRpc.Incoming): JsonRpc.Id | null =>
  message._tag === "Request" || message._tag === "Invalid" ? message.id : null

/** One server-sent event carrying a JSON-RPC message. */
const sseEvent = (message: object) => `event: message\ndata: ${JSON.stringify(message)}\n\n`

const mediaTypes = (header: string | undefined): ReadonlyArray<string> =>
  header === undefined ? [] : header.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase())

const acceptsBoth = (accept: string | undefined) => {
  const types = mediaTypes(accept)
  const json = types.some((type) => type === "application/json" || type === "application/*" || type === "*/*")
  const sse = types.some((type) => type === "text/event-stream" || type === "text/*" || type === "*/*")
  return json && sse
}

/** End everything an owner left open: its background tasks, then its terminals. */
const closeOwner = (owner: Ids.OwnerId) =>
  Effect.gen(function*() {
    const tasks = yield* Effect.serviceOption(TaskRuntime.Tasks)
    if (Option.isSome(tasks)) yield* tasks.value.removeOwner(owner)
    const terminals = yield* PtyService.PtyService
    yield* terminals.closeOwner(owner)
  })

/**
 * The MCP endpoint as an HTTP handler, to mount at a path of any router behind `HttpGuard`: it dispatches
 * on the method and the `Mcp-Session-Id` header. The sessions live in the scope this is built in.
 *
 * @since 0.1.0
 */
export const makeApp = (
  options: Options
): Effect.Effect<
  Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Scope.Scope>,
  never,
  Scope.Scope | PtyService.PtyService | Handlers.Handlers
> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<PtyService.PtyService | Handlers.Handlers>()
    const serverInfo = { name: options.name, version: options.version }
    const maxBodyBytes = options.maxBodyBytes ?? HttpGuard.defaultMaxBodyBytes
    const caller = yield* ToolCall.make(options)
    const instructions = options.instructions ?? Instructions.text(options.deployment)
    const toolList = McpTools.list(options.deployment)
    /** Sessions being created, with the owner name their `initialize` gave (undefined: anonymous). */
    const pending = new Map<string, string | undefined>()
    let serial = 0
    let stopping = false

    /** Named owners: held by each of their MCP sessions, closed `ownerIdleMs` after the last one ended. */
    const owners = yield* RcMap.make({
      lookup: (name: string) =>
        Effect.gen(function*() {
          const owner = namedOwner(name)
          yield* Effect.addFinalizer(() =>
            Effect.logInfo(
              `owner ${name} closed (${stopping ? "the server stops" : "no MCP session of it for ownerIdleMs"})`
            )
              .pipe(Effect.zipRight(closeOwner(owner).pipe(Effect.provide(context))))
          )
          return owner
        }),
      idleTimeToLive: Duration.millis(options.ownerIdleMs ?? defaultOwnerIdleMs)
    })

    const open = (id: string) =>
      Effect.gen(function*() {
        if (!pending.has(id)) return yield* new UnknownSession()
        const name = pending.get(id)
        pending.delete(id)
        const label = sessionLabel(++serial, id)
        const owner = name === undefined ? Ids.OwnerId.make(`mcp-http-${serial}`) : yield* RcMap.get(owners, name)
        const session: McpSession = {
          label,
          owner,
          codec: JsonRpc.makeCodec(instructions),
          inFlight: new Set(),
          calls: new Map(),
          closed: false,
          forward: () => Effect.succeed([]),
          closeReason: "idle"
        }
        yield* Effect.addFinalizer(() =>
          Effect.logInfo(`MCP session ${label} closed (${stopping ? "the server stops" : session.closeReason})`).pipe(
            // a named owner's terminals stay with the owner (`owners`), for its next session
            Effect.zipRight(name === undefined ? closeOwner(owner).pipe(Effect.provide(context)) : Effect.void)
          )
        )
        const server = yield* McpServer.McpServer.make
        yield* McpRegistration.register({
          maxResultBytes: options.maxResultBytes,
          owner,
          deployment: options.deployment
        })
          .pipe(
            Effect.provideService(McpServer.McpServer, server),
            Effect.provide(context)
          )
        const { forward, protocol } = yield* SessionProtocol.sessionProtocol
        yield* McpServer.run(serverInfo).pipe(
          Effect.provideService(McpServer.McpServer, server),
          Effect.provideService(RpcServer.Protocol, protocol),
          Effect.forkScoped
        )
        yield* Effect.logInfo(`MCP session ${label} opened (owner ${owner})`)
        return Object.assign(session, { forward })
      })

    const sessions = yield* RcMap.make({
      lookup: open,
      idleTimeToLive: Duration.millis(options.sessionIdleMs ?? defaultSessionIdleMs),
      capacity: options.maxSessions ?? defaultMaxSessions
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopping = true
      })
    )

    /** The session of an id, held for the rest of the request's scope; `undefined`: no such session. */
    const existing = (id: string) =>
      Effect.flatMap(RcMap.has(sessions, id), (has) =>
        has
          ? RcMap.get(sessions, id).pipe(
            Effect.map((session): McpSession | undefined => session),
            // the entry expired between the two looks: it must not linger as a failed entry
            Effect.catchAll(() => Effect.as(RcMap.invalidate(sessions, id), undefined))
          )
          : Effect.succeed(undefined))

    const created = (ownerName: string | undefined) =>
      Effect.gen(function*() {
        const id = globalThis.crypto.randomUUID()
        pending.set(id, ownerName)
        return yield* RcMap.get(sessions, id).pipe(
          Effect.map((session) => ({ id, session })),
          Effect.ensuring(Effect.sync(() => pending.delete(id)))
        )
      })

    const json = (message: object | undefined, sessionId: string) =>
      message === undefined
        ? HttpServerResponse.empty({ status: 202, headers: { [sessionHeader]: sessionId } })
        : HttpServerResponse.text(JSON.stringify(message), {
          contentType: "application/json",
          headers: { [sessionHeader]: sessionId }
        })

    /** Run `answer` in a fiber of its own that a `DELETE` interrupts (the request then answers 404). */
    const inFlight = <A>(session: McpSession, answer: Effect.Effect<A>) =>
      Effect.flatMap(Effect.fork(answer), (fiber) => {
        session.inFlight.add(fiber)
        return Effect.flatMap(
          Effect.ensuring(Fiber.await(fiber), Effect.sync(() => session.inFlight.delete(fiber))),
          (exit) =>
            Exit.isSuccess(exit)
              ? Effect.succeed(exit.value)
              : session.closed
              ? Effect.fail(new UnknownSession())
              : Effect.failCause(exit.cause)
        )
      })

    /**
     * A tool call that asked for progress: answered as a stream of server-sent events, the progress
     * notifications while it runs and then its result. The call holds its session until it ends; a client
     * that goes away interrupts it (its program gets the SIGINT of a cancelled send).
     */
    const streamed = (session: McpSession, sessionId: string, request: ToolRequests.ToolRequest) =>
      Effect.gen(function*() {
        const held = yield* Scope.make()
        yield* RcMap.get(sessions, sessionId).pipe(Scope.extend(held), Effect.orDie)
        const events = yield* Mailbox.make<string>()
        const call = Progress.reporting(ToolRequests.serve(caller, session.owner, request), {
          token: request.progressToken!,
          owner: session.owner,
          emit: (message) => events.unsafeOffer(sseEvent(message)),
          intervalMs: options.deployment?.progressIntervalMs
        }).pipe(
          Effect.tap((response) => events.offer(sseEvent(response))),
          Effect.ensuring(events.end)
        )
        const key = ToolRequests.idKey(request.id)
        const fiber = yield* Effect.forkDaemon(call)
        session.inFlight.add(fiber)
        session.calls.set(key, fiber)
        const done = Effect.sync(() => {
          session.inFlight.delete(fiber)
          if (session.calls.get(key) === fiber) session.calls.delete(key)
        }).pipe(Effect.zipRight(Fiber.interrupt(fiber)), Effect.zipRight(Scope.close(held, Exit.void)))
        return HttpServerResponse.stream(
          Mailbox.toStream(events).pipe(Stream.encodeText, Stream.ensuring(done)),
          {
            contentType: "text/event-stream",
            headers: { [sessionHeader]: sessionId, "cache-control": "no-cache" }
          }
        )
      })

    /** Serve one message on its session; a session closed meanwhile answers 404. */
    const serve = (
      session: McpSession,
      sessionId: string,
      message: JsonRpc.Incoming,
      request: HttpServerRequest.HttpServerRequest
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, UnknownSession> => {
      const tool = ToolRequests.toolRequest(message)
      if (tool !== undefined) {
        if (tool.progressToken !== undefined) return streamed(session, sessionId, tool)
        const key = ToolRequests.idKey(tool.id)
        const call = ToolRequests.serve(caller, session.owner, tool)
        return Effect.map(
          inFlight(
            session,
            Effect.flatMap(Effect.fork(call), (fiber) => {
              session.calls.set(key, fiber)
              return Effect.ensuring(
                Fiber.join(fiber),
                Effect.sync(() => {
                  if (session.calls.get(key) === fiber) session.calls.delete(key)
                })
              )
            })
          ),
          (response) => json(response, sessionId)
        ).pipe(
          // cancelled by the client (notifications/cancelled): nothing more is sent for it
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause) && !session.closed
              ? Effect.succeed(HttpServerResponse.empty({ status: 202, headers: { [sessionHeader]: sessionId } }))
              : Effect.failCause(cause)
          )
        )
      }
      const listId = ToolRequests.toolListId(message)
      if (listId !== undefined) return Effect.succeed(json(JsonRpc.resultResponse(listId, toolList), sessionId))
      const cancelled = ToolRequests.cancelledId(message)
      const call = cancelled === undefined ? undefined : session.calls.get(ToolRequests.idKey(cancelled))
      if (call !== undefined) return Effect.as(Fiber.interrupt(call), json(undefined, sessionId))
      const route = session.codec.route(message)
      switch (route._tag) {
        case "Answer":
          return Effect.succeed(json(route.response, sessionId))
        case "Drop":
          return Effect.succeed(json(undefined, sessionId))
        case "Forward":
          return Effect.map(
            inFlight(session, session.forward(route.message, Object.entries(request.headers))),
            (responses) => {
              // the answer to this request; a notification the server sent meanwhile goes nowhere (no stream)
              const answer = responses.map(session.codec.encode).find((encoded) =>
                encoded !== undefined && "id" in encoded
              )
              return json(answer, sessionId)
            }
          )
      }
    }

    const post = (request: HttpServerRequest.HttpServerRequest, sessionId: string | undefined) =>
      Effect.gen(function*() {
        const contentType = mediaTypes(request.headers["content-type"])[0]
        if (contentType !== "application/json") {
          return rpcError(415, -32000, "Unsupported Media Type: a POST body is application/json")
        }
        if (!acceptsBoth(request.headers["accept"])) {
          return rpcError(406, -32000, "Not Acceptable: Accept must list application/json and text/event-stream")
        }
        const body = yield* HttpGuard.readBody(request, maxBodyBytes)
        const message = JsonRpc.parse(body)
        if (message._tag === "Invalid") return rpcError(400, message.code, message.message, {}, message.id)
        const id = idOf(message)
        if (message._tag === "Request" && !JsonRpc.isServed(message.method)) {
          return rpcError(200, JsonRpc.codes.methodNotFound, JsonRpc.unknownMethod(message.method), {}, id)
        }
        if (sessionId === undefined) {
          if (message._tag !== "Request" || message.method !== "initialize") {
            return rpcError(400, -32000, `Bad Request: no ${sessionHeader} header; send initialize first`, {}, id)
          }
          const ownerName = request.headers[ownerHeader]
          if (ownerName !== undefined && !ownerNamePattern.test(ownerName)) {
            return rpcError(
              400,
              JsonRpc.codes.invalidRequest,
              `Bad Request: ${ownerHeader} must be 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a ` +
                "letter or digit",
              {},
              id
            )
          }
          const opened = yield* created(ownerName).pipe(
            Effect.catchAll((error) =>
              Effect.fail(
                Cause.isExceededCapacityException(error)
                  ? new HttpGuard.Refused({
                    status: 503,
                    reason: `Service Unavailable: ${options.maxSessions ?? defaultMaxSessions} MCP sessions are open`,
                    headers: { "retry-after": String(retryAfterSeconds) }
                  })
                  : new HttpGuard.Refused({ status: 503, reason: "Service Unavailable: the session could not start" })
              )
            )
          )
          return yield* serve(opened.session, opened.id, message, request).pipe(
            Effect.catchTag("UnknownSession", () => Effect.succeed(rpcError(404, -32001, "MCP session closed", {}, id)))
          )
        }
        const version = request.headers[protocolVersionHeader]
        if (version !== undefined && !supportedProtocolVersions.includes(version)) {
          return rpcError(
            400,
            -32000,
            `Bad Request: unsupported ${protocolVersionHeader} (supported: ${supportedProtocolVersions.join(", ")})`,
            {},
            id
          )
        }
        const session = yield* existing(sessionId)
        if (session === undefined) return rpcError(404, -32001, "MCP session not found: initialize again", {}, id)
        return yield* serve(session, sessionId, message, request).pipe(
          Effect.catchTag("UnknownSession", () => Effect.succeed(rpcError(404, -32001, "MCP session closed", {}, id)))
        )
      }).pipe(Effect.catchTag("Refused", (refused) => Effect.succeed(HttpGuard.refusal(refused))))

    const remove = (sessionId: string | undefined) =>
      Effect.gen(function*() {
        const session = sessionId === undefined ? undefined : yield* existing(sessionId)
        if (session === undefined) return rpcError(404, -32001, "MCP session not found")
        session.closeReason = "deleted by the client"
        session.closed = true
        yield* Fiber.interruptAll(session.inFlight)
        yield* RcMap.invalidate(sessions, sessionId!)
        return HttpServerResponse.empty({ status: 204 })
      })

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const sessionId = request.headers[sessionHeader]
      switch (request.method) {
        case "POST":
          return yield* post(request, sessionId)
        case "DELETE":
          return yield* remove(sessionId)
        default:
          return HttpServerResponse.empty({ status: 405, headers: { allow: "POST, DELETE" } })
      }
    })
  })

/**
 * The MCP endpoint on an `HttpLayerRouter` at `path` (default `/mcp`); serve it with
 * `HttpLayerRouter.serve` over any `HttpServer`, with `HttpGuard.layer` in front.
 *
 * @since 0.1.0
 */
export const layer = (
  options: Options & { readonly path?: `/${string}` | undefined }
): Layer.Layer<
  never,
  never,
  HttpLayerRouter.HttpRouter | PtyService.PtyService | Handlers.Handlers
> =>
  HttpLayerRouter.use((router) =>
    Effect.flatMap(makeApp(options), (app) => router.add("*", options.path ?? "/mcp", app))
  )
