/**
 * The web server of agent-terminal: `McpHttp` at `/mcp` and the live view at `/` and `/live/*`, behind
 * `HttpGuard` (canonical path, `Host`, `Origin`, bearer token or sign-in cookie, body bound), on a Node
 * server with `HttpListener`'s limits — what `mcp --http` serves in-process and `serve --http` serves from
 * the daemon's terminals.
 *
 * @since 0.4.0
 */
import type { Exec, Oversight, PtyService, TaskRuntime, TerminalConfig } from "@agent-terminal/core"
import { Deployment, Handlers } from "@agent-terminal/tools"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpGuard from "./HttpGuard.js"
import * as HttpListener from "./HttpListener.js"
import * as HttpPath from "./HttpPath.js"
import * as HttpToken from "./HttpToken.js"
import * as LiveView from "./LiveView.js"
import * as McpHttp from "./McpHttp.js"
import * as WebSessions from "./WebSessions.js"

/**
 * The server's settings, checked.
 *
 * @since 0.4.0
 * @category models
 */
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

/**
 * MCP over Streamable HTTP at `/mcp`, behind the guard, over whatever provides the terminal services: what
 * `mcp --http` serves in-process and `serve --http` serves from the daemon's terminals.
 *
 * @since 0.4.0
 * @category layers
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
      HttpListener.layer(http.limits, { port: http.port, host: http.host })
    )
  )
}

/**
 * Serve MCP over HTTP until interrupted.
 *
 * @since 0.4.0
 * @category constructors
 */
export const serve = <E>(
  settings: TerminalConfig.TerminalConfig,
  http: HttpSettings,
  token: HttpToken.Loaded,
  terminals: Layer.Layer<PtyService.PtyService | Oversight.Oversight | TaskRuntime.Tasks | Exec.Exec, E>,
  serverInfo: { readonly name: string; readonly version: string },
  deployment: Deployment.Deployment = Deployment.all
) => Layer.launch(layer(settings, http, token, serverInfo, deployment).pipe(Layer.provide(terminals)))
