/**
 * The Node HTTP server every listener of the project runs on (MCP, the daemon's HTTP, the live view), with
 * bounded time, connections and WebSocket messages: how long a client may take to send its headers and its
 * whole request, how long an idle keep-alive connection stays, how many connections are open at once, how
 * long a message a WebSocket client may send (checked on the raw bytes, before any of it is buffered).
 * A response may take as long as it needs (a send that waits for a slow command, a stream): only
 * receiving the request is timed.
 *
 * Also the names the server answers to: the `Host` values and browser origins of the address it is bound
 * to, which `HttpGuard` checks every request against (DNS rebinding).
 *
 * @since 0.2.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Headers from "@effect/platform/Headers"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import * as http from "node:http"
import type * as net from "node:net"
import * as os from "node:os"
import * as WsFrames from "./internal/wsFrames.js"

/**
 * Limits of the Node server.
 *
 * @since 0.2.0
 */
export interface Limits {
  /** Time to receive a request's headers (ms; default 10000). */
  readonly headersTimeoutMs?: number | undefined
  /** Time to receive a whole request, body included (ms; default 30000); responses are not timed. */
  readonly requestTimeoutMs?: number | undefined
  /** How long an idle keep-alive connection is kept (ms; default 5000). */
  readonly keepAliveTimeoutMs?: number | undefined
  /** Connections open at once; more are closed as they come (default 256). */
  readonly maxConnections?: number | undefined
  /**
   * The longest message a WebSocket client may send, its frames together (bytes; default 512 KiB): checked
   * on each frame's header as the bytes come, before the WebSocket library buffers the frame.
   */
  readonly maxWebSocketMessageBytes?: number | undefined
  /**
   * How long a stop waits for open connections — a response under way, a WebSocket's closing handshake —
   * before it cuts them (ms; default 2000): a client that never answers cannot hold the server's exit.
   */
  readonly closeGraceMs?: number | undefined
}

/**
 * The defaults of `Limits`.
 *
 * @since 0.2.0
 */
export const defaultLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 256,
  maxWebSocketMessageBytes: 512 * 1024,
  closeGraceMs: 2000
} as const

/**
 * A Node server that can cut its connections a grace after its stop began. Neither Node's `close` nor the
 * WebSocket server's ends an open connection: a WebSocket peer that never answers the close frame held the
 * server's exit for the WebSocket library's 30 s.
 */
class BoundedServer extends http.Server {
  readonly #sockets = new Set<net.Socket>()
  readonly #graceMs: number
  #cut: ReturnType<typeof setTimeout> | undefined

  constructor(options: http.ServerOptions, graceMs: number) {
    super(options)
    this.#graceMs = graceMs
    this.on("connection", (socket: net.Socket) => {
      this.#sockets.add(socket)
      socket.once("close", () => this.#sockets.delete(socket))
    })
    this.once("close", () => clearTimeout(this.#cut))
  }

  /** Destroy every connection still open (upgraded ones too) `graceMs` from now. */
  cutAfterGrace(): void {
    if (this.#cut !== undefined) return
    this.#cut = setTimeout(() => {
      for (const socket of this.#sockets) socket.destroy()
    }, this.#graceMs)
    this.#cut.unref()
  }
}

/** The Node server with the limits set (see `createServer`), able to cut its connections at a stop. */
const boundedServer = (limits: Limits): BoundedServer => {
  const headersTimeout = limits.headersTimeoutMs ?? defaultLimits.headersTimeoutMs
  const requestTimeout = Math.max(limits.requestTimeoutMs ?? defaultLimits.requestTimeoutMs, headersTimeout)
  const server = new BoundedServer({
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeoutMs ?? defaultLimits.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1000,
    maxHeaderSize: 16 * 1024,
    requireHostHeader: true
  }, limits.closeGraceMs ?? defaultLimits.closeGraceMs)
  server.maxConnections = limits.maxConnections ?? defaultLimits.maxConnections
  server.maxHeadersCount = 100
  const maxMessageBytes = limits.maxWebSocketMessageBytes ?? defaultLimits.maxWebSocketMessageBytes
  // before the platform's own upgrade listener: the bound watches the bytes before any WebSocket reads them
  server.prependListener("upgrade", (_request: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    WsFrames.bound(socket, head, maxMessageBytes)
  })
  return server
}

/**
 * A `createServer` for `NodeHttpServer.layer` with the limits set. Node checks the request timeouts
 * every `connectionsCheckingInterval` (30 s by default): here a second, so a slow client is cut close to
 * its deadline. `layer` runs the same server and also bounds its stop (`closeGraceMs`).
 *
 * @since 0.2.0
 */
export const createServer = (limits: Limits = {}) => (): http.Server => boundedServer(limits)

/**
 * The platform's Node `HttpServer` on `createServer(limits)`, listening as `listen` says. Its stop waits at
 * most `closeGraceMs` for open connections (a response under way, a WebSocket's closing handshake), then
 * cuts them: a client that never answers cannot hold the server's exit.
 *
 * @since 0.4.0
 */
export const layer = (limits: Limits, listen: net.ListenOptions) => {
  let server: BoundedServer | undefined
  const node = NodeHttpServer.layer(() => (server = boundedServer(limits)), listen)
  // built after the server, so released before it: the grace runs while the platform closes the server
  const cut = Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => server?.cutAfterGrace())))
  return Layer.provideMerge(cut, node)
}

/**
 * Whether an address is a loopback one (`127.0.0.0/8`, `::1`, `localhost`).
 *
 * @since 0.2.0
 */
export const isLoopback = (hostname: string): boolean => {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "")
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === "::ffff:127.0.0.1"
}

const isWildcard = (hostname: string) => hostname === "0.0.0.0" || hostname === "::" || hostname === ""

const hostPort = (hostname: string, port: number) =>
  `${hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname}:${port}`.toLowerCase()

/**
 * The `Host` header values that name a server bound to `hostname:port`: for a loopback bind
 * `127.0.0.1`, `localhost` and `[::1]` with the port; for a wildcard bind every address of this machine's
 * interfaces and its host name; otherwise the bound address itself — plus `extra`, exact `Host` values
 * (the name a proxy in front uses, e.g. `mcp.example.com`).
 *
 * @since 0.2.0
 */
export const hostsFor = (
  address: { readonly hostname: string; readonly port: number },
  extra: ReadonlyArray<string> = []
): ReadonlyArray<string> => {
  const { hostname, port } = address
  const names = new Set<string>()
  const loopback = ["127.0.0.1", "localhost", "::1"]
  if (isLoopback(hostname)) {
    for (const name of [hostname, ...loopback]) names.add(hostPort(name, port))
  } else if (isWildcard(hostname)) {
    for (const name of loopback) names.add(hostPort(name, port))
    names.add(hostPort(os.hostname(), port))
    for (const addresses of Object.values(os.networkInterfaces())) {
      for (const info of addresses ?? []) names.add(hostPort(info.address.replace(/%.*$/, ""), port))
    }
  } else {
    names.add(hostPort(hostname, port))
  }
  for (const name of extra) names.add(name.toLowerCase())
  return Array.from(names)
}

/**
 * The server's own origins: `http://` and each of its `Host` values — the default allow-list of
 * `Origin` (a page the server itself serves).
 *
 * @since 0.2.0
 */
export const originsFor = (hosts: ReadonlyArray<string>): ReadonlyArray<string> => hosts.map((host) => `http://${host}`)

/**
 * Header names never written into a span: the platform's defaults (`authorization`, `cookie`…) and the
 * MCP session id, which is a credential of its client.
 *
 * @since 0.2.0
 */
export const redactedHeaders: ReadonlyArray<string | RegExp> = [
  "authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "mcp-session-id"
]

const builtInTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * Build a server's layer with the credentials redacted from request spans, and without the per-request
 * span under Effect's built-in tracer, whose spans reach no one (as `PtyService.send` does; measured in
 * docs/performance.md) — taken as usual when a tracer that exports spans is installed.
 *
 * @since 0.2.0
 */
export const withServerTracing = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.unwrapEffect(
    Effect.map(Effect.tracer, (tracer) => {
      const redacted = Layer.locally(layer, Headers.currentRedactedNames, redactedHeaders)
      return tracer === builtInTracer ? HttpMiddleware.withTracerDisabledWhen(redacted, () => true) : redacted
    })
  )
