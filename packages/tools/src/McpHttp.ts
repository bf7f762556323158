/**
 * The terminal tools over MCP Streamable HTTP (protocol 2025-06-18): one endpoint (`POST` / `DELETE`; `GET`
 * answers 405, no server-initiated stream), one owner per MCP session.
 *
 * `@effect/ai`'s `McpServer.layerHttp` gives every HTTP request a fresh client id and issues no
 * `Mcp-Session-Id`, so it cannot tell which requests belong together. Here every MCP session gets its own
 * `McpServer` over its own `RpcServer` HTTP protocol, inside its own scope: an `initialize` without a session
 * id creates one and answers with its `Mcp-Session-Id`; later requests carrying the id go to that session's
 * server; `DELETE`, an idle expiry or the server's shutdown close the scope, and with it every terminal and
 * task the session's owner opened. An unknown id is a 404, so the client initializes again.
 *
 * @since 0.1.0
 */
import { Ids, PtyService, TaskRuntime } from "@agent-terminal/core"
import { McpServer, type Tool } from "@effect/ai"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as McpTools from "./McpTools.js"
import type { TerminalToolkit } from "./TerminalTools.js"

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
  /** Close an MCP session (and its terminals) after this long without a request; default 30 minutes. */
  readonly sessionIdleMs?: number | undefined
  /** Browser origins allowed besides loopback ones (`Origin` is checked against DNS rebinding). */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}

/**
 * The header carrying the MCP session id.
 *
 * @since 0.1.0
 */
export const sessionHeader = "mcp-session-id"

/**
 * The default idle expiry of an MCP session: 30 minutes.
 *
 * @since 0.1.0
 */
export const defaultSessionIdleMs = 30 * 60 * 1000

interface McpSession {
  readonly id: string
  readonly owner: Ids.OwnerId
  readonly scope: Scope.CloseableScope
  readonly closed: Deferred.Deferred<void>
  readonly app: Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    never,
    HttpServerRequest.HttpServerRequest | Scope.Scope
  >
  lastSeen: number
  inFlight: number
}

const rpcError = (status: number, code: number, message: string) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", error: { code, message }, id: null }, { status })

const messagesOf = (body: unknown): ReadonlyArray<Record<string, unknown>> =>
  (Array.isArray(body) ? body : [body]).filter((message): message is Record<string, unknown> =>
    typeof message === "object" && message !== null
  )

const isInitialize = (body: unknown) => messagesOf(body).some((message) => message.method === "initialize")

/** Only notifications or responses: nothing to answer but 202 Accepted. */
const expectsNoResponse = (body: unknown) =>
  messagesOf(body).every((message) => !("method" in message) || !("id" in message) || message.id === null)

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const originAllowed = (origin: string | undefined, allowed: ReadonlyArray<string>): boolean => {
  if (origin === undefined || allowed.includes(origin)) return true
  try {
    return loopbackHosts.has(new URL(origin).hostname)
  } catch {
    return false
  }
}

/** End everything an owner left open: its background tasks, then its terminals. */
const closeOwner = (owner: Ids.OwnerId) =>
  Effect.gen(function*() {
    const tasks = yield* Effect.serviceOption(TaskRuntime.TaskRuntime)
    if (Option.isSome(tasks)) yield* tasks.value.removeOwner(owner)
    const terminals = yield* PtyService.PtyService
    yield* terminals.closeOwner(owner)
  })

const newSessionId = () => globalThis.crypto.randomUUID()

/**
 * The MCP endpoint as an HTTP handler, to mount at a path of any router: it dispatches on the method and
 * the `Mcp-Session-Id` header. The sessions live in the scope this is built in.
 *
 * @since 0.1.0
 */
export const makeApp = (
  options: Options
): Effect.Effect<
  Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Scope.Scope>,
  never,
  Scope.Scope | PtyService.PtyService | Tool.HandlersFor<typeof TerminalToolkit.tools>
> =>
  Effect.gen(function*() {
    const parent = yield* Effect.scope
    const context = yield* Effect.context<PtyService.PtyService | Tool.HandlersFor<typeof TerminalToolkit.tools>>()
    const sessions = new Map<string, McpSession>()
    const idleMs = options.sessionIdleMs ?? defaultSessionIdleMs
    const serverInfo = { name: options.name, version: options.version }

    const close = (session: McpSession, reason: string) =>
      Effect.suspend(() => {
        if (sessions.get(session.id) !== session) return Effect.void
        sessions.delete(session.id)
        return Effect.logInfo(`MCP session ${session.id} closed (${reason})`).pipe(
          Effect.zipRight(Scope.close(session.scope, Exit.void))
        )
      })

    const open = Effect.gen(function*() {
      const id = newSessionId()
      const owner = Ids.OwnerId.make(`mcp-http-${id}`)
      const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
      const closed = yield* Deferred.make<void>()
      yield* Scope.addFinalizer(scope, closeOwner(owner).pipe(Effect.provide(context)))
      const app = yield* Effect.gen(function*() {
        const { httpApp, protocol } = yield* RpcServer.makeProtocolWithHttpApp
        const server = yield* McpServer.McpServer.make
        yield* McpTools.register({ maxResultBytes: options.maxResultBytes, ownerOf: () => Effect.succeed(owner) }).pipe(
          Effect.provideService(McpServer.McpServer, server),
          Effect.provide(context)
        )
        yield* McpServer.run(serverInfo).pipe(
          Effect.provideService(McpServer.McpServer, server),
          Effect.provideService(RpcServer.Protocol, protocol),
          Effect.forkScoped
        )
        return httpApp
      }).pipe(Effect.provide(RpcSerialization.layerJsonRpc()), Scope.extend(scope))
      yield* Scope.addFinalizer(scope, Deferred.succeed(closed, undefined))
      const session: McpSession = {
        id,
        owner,
        scope,
        closed,
        app,
        lastSeen: yield* Clock.currentTimeMillis,
        inFlight: 0
      }
      sessions.set(id, session)
      yield* Effect.logInfo(`MCP session ${id} opened (owner ${owner})`)
      return session
    })

    /** Serve one request on its session; a session closed meanwhile answers 404. */
    const serve = (session: McpSession) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          session.inFlight++
        }),
        () =>
          Effect.raceFirst(
            session.app,
            Deferred.await(session.closed).pipe(Effect.as(rpcError(404, -32001, "MCP session closed")))
          ),
        () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.sync(() => {
              session.inFlight--
              session.lastSeen = now
            }))
      ).pipe(Effect.map(HttpServerResponse.setHeader(sessionHeader, session.id)))

    yield* Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      for (const session of Array.from(sessions.values())) {
        if (session.inFlight === 0 && now - session.lastSeen >= idleMs) yield* close(session, "idle")
      }
    }).pipe(
      Effect.repeat(Schedule.spaced(Math.max(1000, Math.min(60_000, Math.floor(idleMs / 4))))),
      Effect.forkScoped
    )

    const post = (request: HttpServerRequest.HttpServerRequest, sessionId: string | undefined) =>
      Effect.gen(function*() {
        const body = yield* Effect.option(request.json)
        if (Option.isNone(body)) return rpcError(400, -32700, "Parse error: the body is not JSON")
        let session: McpSession | undefined
        if (sessionId === undefined) {
          if (!isInitialize(body.value)) {
            return rpcError(400, -32000, `Bad Request: no ${sessionHeader} header; send initialize first`)
          }
          session = yield* open
        } else {
          session = sessions.get(sessionId)
          if (session === undefined) return rpcError(404, -32001, "MCP session not found: initialize again")
        }
        const response = yield* serve(session)
        return expectsNoResponse(body.value) && response.status < 300
          ? HttpServerResponse.empty({ status: 202 }).pipe(HttpServerResponse.setHeader(sessionHeader, session.id))
          : response
      })

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!originAllowed(request.headers["origin"], options.allowedOrigins ?? [])) {
        return rpcError(403, -32000, "Forbidden: origin not allowed")
      }
      const sessionId = request.headers[sessionHeader]
      switch (request.method) {
        case "POST":
          return yield* post(request, sessionId)
        case "DELETE": {
          const session = sessionId === undefined ? undefined : sessions.get(sessionId)
          if (session === undefined) return rpcError(404, -32001, "MCP session not found")
          yield* close(session, "deleted by the client")
          return HttpServerResponse.empty({ status: 204 })
        }
        default:
          return HttpServerResponse.empty({ status: 405, headers: { allow: "POST, DELETE" } })
      }
    })
  })

/**
 * The MCP endpoint on an `HttpLayerRouter` at `path` (default `/mcp`); serve it with
 * `HttpLayerRouter.serve` over any `HttpServer`.
 *
 * @since 0.1.0
 */
export const layer = (
  options: Options & { readonly path?: `/${string}` | undefined }
): Layer.Layer<
  never,
  never,
  HttpLayerRouter.HttpRouter | PtyService.PtyService | Tool.HandlersFor<typeof TerminalToolkit.tools>
> =>
  HttpLayerRouter.use((router) =>
    Effect.flatMap(makeApp(options), (app) => router.add("*", options.path ?? "/mcp", app))
  )
