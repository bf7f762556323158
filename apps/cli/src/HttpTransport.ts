/**
 * `agent-terminal mcp --http <port>`: the server the options of the HTTP transport (`HttpOptions`) describe —
 * `McpHttp` at `/mcp` behind `HttpGuard` (the bearer token, `Host`, `Origin`, body bound) on a Node server
 * with `HttpListener`'s limits.
 */
import {
  Audit,
  type Exec,
  type Oversight,
  type PtyService,
  type TaskRuntime,
  type TerminalConfig
} from "@agent-terminal/core"
import { TerminalRegistry } from "@agent-terminal/daemon"
import type { Bubblewrap } from "@agent-terminal/node"
import {
  Deployment,
  Handlers,
  HttpGuard,
  HttpListener,
  HttpPath,
  HttpToken,
  LiveView,
  McpHttp,
  WebSessions
} from "@agent-terminal/tools"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { HttpOptions } from "./HttpOptions.js"

export { flags, type HttpOptions, httpOptions } from "./HttpOptions.js"

/** An option the server cannot start with. */
export interface Invalid {
  readonly field: string
  readonly message: string
}

/** The server's settings, checked. */
export interface HttpSettings {
  readonly port: number
  readonly host: string
  readonly sessionIdleMs: number | undefined
  readonly ownerIdleMs: number | undefined
  readonly allowedOrigins: ReadonlyArray<string>
  readonly allowedHosts: ReadonlyArray<string>
  readonly maxBodyBytes: number
  readonly maxSessions: number
  readonly limits: HttpListener.Limits
}

const given = <A>(value: Option.Option<A>): A | undefined => Option.getOrUndefined(value)

const fromEnvironment = (values: ReadonlyArray<string>, variable: string): ReadonlyArray<string> => {
  if (values.length > 0) return values
  const raw = process.env[variable]
  return raw === undefined ? [] : raw.split(",").map((value) => value.trim()).filter((value) => value !== "")
}

const positive = (field: string, value: number | undefined, fallback: number): Either.Either<number, Invalid> =>
  value === undefined
    ? Either.right(fallback)
    : Number.isSafeInteger(value) && value > 0
    ? Either.right(value)
    : Either.left({ field, message: `invalid configuration ${field}: must be a positive integer, got ${value}` })

const originOk = (origin: string) => {
  try {
    return origin !== "null" && new URL(origin).origin === origin
  } catch {
    return false
  }
}

/** Check the HTTP options (`port` already given). */
export const settingsFrom = (port: number, options: HttpOptions): Either.Either<HttpSettings, Invalid> =>
  Either.gen(function*() {
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return yield* Either.left({
        field: "http",
        message: `invalid configuration http: a port is 0-65535, got ${port}`
      })
    }
    const sessionIdleMs = given(options.sessionIdleMs)
    if (sessionIdleMs !== undefined) yield* positive("sessionIdleMs", sessionIdleMs, 0)
    const ownerIdleMs = given(options.ownerIdleMs)
    if (ownerIdleMs !== undefined) yield* positive("ownerIdleMs", ownerIdleMs, 0)
    const allowedOrigins = fromEnvironment(options.allowedOrigin, "AGENT_TERMINAL_ALLOWED_ORIGINS")
    const bad = allowedOrigins.find((origin) => !originOk(origin))
    if (bad !== undefined) {
      return yield* Either.left({
        field: "allowedOrigin",
        message: `invalid configuration allowedOrigin: ${JSON.stringify(bad.slice(0, 100))} is not an origin ` +
          "(scheme://host[:port], no path; \"null\" is never allowed)"
      })
    }
    return {
      port,
      host: given(options.host) ?? "127.0.0.1",
      sessionIdleMs,
      ownerIdleMs,
      allowedOrigins,
      allowedHosts: fromEnvironment(options.allowedHost, "AGENT_TERMINAL_ALLOWED_HOSTS"),
      maxBodyBytes: yield* positive("maxBodyBytes", given(options.maxBodyBytes), HttpGuard.defaultMaxBodyBytes),
      maxSessions: yield* positive("maxSessions", given(options.maxSessions), McpHttp.defaultMaxSessions),
      limits: {
        maxConnections: yield* positive(
          "maxConnections",
          given(options.maxConnections),
          HttpListener.defaultLimits.maxConnections
        ),
        headersTimeoutMs: yield* positive(
          "headersTimeoutMs",
          given(options.headersTimeoutMs),
          HttpListener.defaultLimits.headersTimeoutMs
        ),
        requestTimeoutMs: yield* positive(
          "requestTimeoutMs",
          given(options.requestTimeoutMs),
          HttpListener.defaultLimits.requestTimeoutMs
        ),
        keepAliveTimeoutMs: yield* positive(
          "keepAliveTimeoutMs",
          given(options.keepAliveTimeoutMs),
          HttpListener.defaultLimits.keepAliveTimeoutMs
        )
      }
    }
  })

/** Load the token the options name: `AGENT_TERMINAL_TOKEN`, else the token file (created if missing). */
export const loadToken = (options: HttpOptions) =>
  HttpToken.load({
    token: process.env[HttpToken.environmentVariable],
    file: given(options.tokenFile),
    stateDir: HttpToken.defaultStateDir()
  }).pipe(Effect.mapError((error): Invalid => ({ field: "token", message: error.message })))

/**
 * MCP over Streamable HTTP at `/mcp`, behind the guard, over whatever provides the terminal services: what
 * `mcp --http` serves in-process and `serve --http` serves from the daemon's terminals.
 */
export const layer = (
  settings: TerminalConfig.TerminalConfig,
  http: HttpSettings,
  token: HttpToken.Loaded,
  serverInfo: { readonly name: string; readonly version: string },
  deployment: Deployment.Deployment = Deployment.all
) => {
  const announce = Layer.effectDiscard(
    HttpServer.addressFormattedWith((address) =>
      Console.error(`agent-terminal: MCP over Streamable HTTP at ${address}/mcp`).pipe(
        Effect.zipRight(Console.error(
          `agent-terminal: the live view at ${address}/ — open ${address}/#token=<the token> (sign in once; ` +
            "over SSH: ssh -L <port>:127.0.0.1:<port> <host>, then the same address on your machine)"
        ))
      )
    )
  )
  const warn = HttpListener.isLoopback(http.host) ? Effect.void : Console.error(
    `agent-terminal: listening on ${http.host}, beyond this machine: the traffic, the bearer token included, is ` +
      "plain text. Put TLS in front (a reverse proxy) before using it over a network."
  )
  const app = Layer.mergeAll(
    McpHttp.layer({
      ...serverInfo,
      maxResultBytes: settings.maxResultBytes,
      sessionIdleMs: http.sessionIdleMs,
      ownerIdleMs: http.ownerIdleMs,
      maxSessions: http.maxSessions,
      maxBodyBytes: http.maxBodyBytes,
      deployment,
      path: "/mcp"
    }),
    LiveView.layer(),
    Layer.unwrapEffect(Effect.map(WebSessions.WebSessions, (sessions) =>
      HttpGuard.layer({
        token: token.token,
        allowedHosts: http.allowedHosts,
        allowedOrigins: http.allowedOrigins,
        maxBodyBytes: http.maxBodyBytes,
        credentials: LiveView.credentials,
        sessions,
        unauthenticated: LiveView.unauthenticated
      })))
  ).pipe(Layer.provide(WebSessions.layer()))
  return HttpListener.withServerTracing(
    HttpLayerRouter.serve(app, { disableLogger: true, disableListenLog: true, routerConfig: HttpPath.routerConfig })
  ).pipe(
    Layer.merge(announce),
    Layer.merge(Layer.effectDiscard(
      Console.error(`agent-terminal: ${HttpToken.describe(token.source)}`).pipe(
        Effect.zipRight(warn)
      )
    )),
    Layer.provide(Handlers.layer),
    Layer.provideMerge(
      NodeHttpServer.layer(HttpListener.createServer(http.limits), { port: http.port, host: http.host })
    )
  )
}

/**
 * The audit of the live view in an SQLite file (the registry's `control_audit`), or — if that file cannot be
 * opened — in memory, said on stderr.
 */
export const auditLayer = (filename: string): Layer.Layer<Audit.Audit> =>
  TerminalRegistry.auditLayer.pipe(
    Layer.provide(TerminalRegistry.layerSqlite({ filename })),
    Layer.catchAll((error) =>
      Layer.merge(
        Audit.layerMemory,
        Layer.effectDiscard(Console.error(`agent-terminal: the audit is kept in memory only: ${error.message}`))
      )
    )
  )

/** Serve MCP over HTTP until interrupted. */
export const serve = <E>(
  settings: TerminalConfig.TerminalConfig,
  http: HttpSettings,
  token: HttpToken.Loaded,
  terminals: Layer.Layer<PtyService.PtyService | Oversight.Oversight | TaskRuntime.Tasks | Exec.Exec, E>,
  serverInfo: { readonly name: string; readonly version: string },
  deployment: Deployment.Deployment = Deployment.all
) => Layer.launch(layer(settings, http, token, serverInfo, deployment).pipe(Layer.provide(terminals)))

/**
 * The sandbox with the token file masked too: the default one lies in the state directory, which the sandbox
 * masks anyway; a `--token-file` elsewhere would be readable by a session that can read the host's files.
 */
export const hidingToken = (
  sandbox: Bubblewrap.Options | undefined,
  token: HttpToken.Loaded
): Bubblewrap.Options | undefined =>
  sandbox === undefined || token.source._tag !== "File"
    ? sandbox
    : { ...sandbox, denyRead: [...(sandbox.denyRead ?? []), token.source.path] }
