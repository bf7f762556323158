/**
 * `agent-terminal mcp --http <port>` and `serve --http <port>`: the options of the HTTP transport
 * (`HttpOptions`) checked into the settings of `@agent-terminal/server`'s `WebServer` (`McpHttp` at `/mcp`
 * and the live view behind `HttpGuard`, on a Node server with `HttpListener`'s limits), the token they name,
 * the live view's audit and the sandbox that hides the token file.
 */
import { Audit } from "@agent-terminal/core"
import { TerminalRegistry } from "@agent-terminal/daemon"
import type { Bubblewrap } from "@agent-terminal/node"
import { HttpGuard, HttpListener, HttpToken, McpHttp, WebServer } from "@agent-terminal/server"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { HttpOptions } from "./HttpOptions.js"

export { flags, type HttpOptions, httpOptions } from "./HttpOptions.js"
/** The server's settings, checked. */
export type HttpSettings = WebServer.HttpSettings

/** The HTTP server over whatever provides the terminal services (`WebServer.layer`). */
export const layer = WebServer.layer

/** Serve MCP over HTTP until interrupted (`WebServer.serve`). */
export const serve = WebServer.serve

/** An option the server cannot start with. */
export interface Invalid {
  readonly field: string
  readonly message: string
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
