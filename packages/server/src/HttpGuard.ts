/**
 * The checks every HTTP request passes before any route sees it, built once for every listener — MCP, the
 * daemon's HTTP and the live view, all on one server:
 *
 * 0. The path is canonical (`HttpPath`: one spelling, the one the router matches), else 400/404 — so the
 *    credential is decided on the path the router will serve.
 * 1. `Host` names this server (`HttpListener.hostsFor`): anything else is 403 (DNS rebinding: a page on
 *    `evil.example` that resolves to 127.0.0.1 sends `Host: evil.example`).
 * 2. `Origin`, when a browser sends one, is in an exact allow-list (by default the server's own origins);
 *    `null` and every other origin are 403 — a page on `http://localhost:3000` is another origin.
 * 3. A credential: `Authorization: Bearer <token>`, compared in constant time; or, on the routes that
 *    accept it, the session cookie a person got by signing in to the live view (`WebSessions`) — with an
 *    allowed `Origin` on anything but a safe method, so a cross-site form cannot ride it. Otherwise 401
 *    with `WWW-Authenticate: Bearer` (or, where the policy says, a page that signs in: the live view's).
 * 4. A `Content-Length` over the body bound is 413 before a byte of it is read; a body without one is
 *    counted while it is read (`readBody`) and refused the same way at the bound, nothing parsed.
 *
 * @since 0.2.0
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as crypto from "node:crypto"
import * as HttpListener from "./HttpListener.js"
import * as HttpPath from "./HttpPath.js"

/**
 * A way a request may prove it holds the token.
 *
 * @since 0.2.0
 */
export type Credential = "bearer" | "cookie"

/**
 * What the guard lets through.
 *
 * @since 0.2.0
 */
export interface Policy {
  /** The bearer token. */
  readonly token: Redacted.Redacted<string>
  /** Exact `Host` values (lowercase `host:port`). */
  readonly allowedHosts: ReadonlyArray<string>
  /** Exact `Origin` values. */
  readonly allowedOrigins: ReadonlyArray<string>
  /** The bound of a request body in bytes. */
  readonly maxBodyBytes: number
  /** The credentials a request may present, from its method and canonical path (default: the bearer header only). */
  readonly credentials?: ((method: string, path: string) => ReadonlyArray<Credential>) | undefined
  /** Whether a session cookie's value is a live sign-in (without it no cookie counts). */
  readonly sessions?: { readonly valid: (value: string) => boolean } | undefined
  /**
   * The answer to a request refused for want of a credential, instead of the JSON error (`undefined`: the
   * JSON error): the live view answers its root with the page that signs in.
   */
  readonly unauthenticated?:
    | ((request: HttpServerRequest.HttpServerRequest) => HttpServerResponse.HttpServerResponse | undefined)
    | undefined
}

/**
 * The default bound of a request body: 4 MiB.
 *
 * @since 0.2.0
 */
export const defaultMaxBodyBytes = 4 * 1024 * 1024

/**
 * The name of the session cookie a page of this server is given.
 *
 * @since 0.2.0
 */
export const cookieName = "agent_terminal_session"

const digest = (value: string) => crypto.createHash("sha256").update(value).digest()

/**
 * Whether `presented` equals `expected`, in time that does not depend on where they differ (both are
 * hashed first, so the lengths are equal too).
 *
 * @since 0.2.0
 */
export const constantTimeEquals = (presented: string, expected: string): boolean =>
  crypto.timingSafeEqual(digest(presented), digest(expected))

/**
 * Why a request was refused (a plain value, not an `Error`: a refusal is an answer, and taking a stack
 * trace for each one was the largest single cost of answering a 401).
 *
 * @since 0.2.0
 */
export class Refused extends Data.TaggedClass("Refused")<{
  readonly status: 400 | 401 | 403 | 404 | 405 | 406 | 413 | 415 | 503
  readonly reason: string
  readonly headers?: Readonly<Record<string, string>> | undefined
}> {}

/**
 * The response for a refusal: a JSON-RPC error object (what an MCP client shows).
 *
 * @since 0.2.0
 */
export const refusal = (refused: Refused): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    { jsonrpc: "2.0", error: { code: -32000, message: refused.reason }, id: null },
    { status: refused.status, headers: refused.headers ?? {} }
  )

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

const bearerOf = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)
  return match === null ? undefined : match[1]
}

/**
 * A cookie's value in a `Cookie` header.
 *
 * @since 0.2.0
 */
export const cookieOf = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const index = part.indexOf("=")
    if (index !== -1 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim()
  }
  return undefined
}

/**
 * The checks of one request against the policy (the body's length included, when declared); `undefined`
 * when it may go on.
 *
 * @since 0.2.0
 */
export const check = (request: HttpServerRequest.HttpServerRequest, policy: Policy): Refused | undefined => {
  const path = HttpPath.canonical(request.url)
  if (typeof path !== "string") return new Refused(path)
  const headers = request.headers
  const host = headers["host"]?.toLowerCase()
  if (host === undefined || !policy.allowedHosts.includes(host)) {
    return new Refused({ status: 403, reason: "Forbidden: the Host header does not name this server" })
  }
  const origin = headers["origin"]
  if (origin !== undefined && !policy.allowedOrigins.includes(origin)) {
    return new Refused({ status: 403, reason: "Forbidden: requests from this origin are not allowed" })
  }
  const accepted = policy.credentials?.(request.method, path) ?? ["bearer"]
  const token = Redacted.value(policy.token)
  const bearer = accepted.includes("bearer") ? bearerOf(headers["authorization"]) : undefined
  let authenticated = bearer !== undefined && constantTimeEquals(bearer, token)
  if (!authenticated && accepted.includes("cookie") && policy.sessions !== undefined) {
    const cookie = cookieOf(headers["cookie"], cookieName)
    authenticated = cookie !== undefined && (origin !== undefined || safeMethods.has(request.method)) &&
      policy.sessions.valid(cookie)
  }
  if (!authenticated) {
    const presented = headers["authorization"] !== undefined
    return new Refused({
      status: 401,
      reason: presented ? "Unauthorized: the bearer token is not valid" : "Unauthorized: a bearer token is required",
      headers: {
        "www-authenticate": presented
          ? "Bearer realm=\"agent-terminal\", error=\"invalid_token\""
          : "Bearer realm=\"agent-terminal\""
      }
    })
  }
  const length = headers["content-length"]
  if (length !== undefined && !(Number(length) <= policy.maxBodyBytes)) {
    return tooLarge(policy.maxBodyBytes)
  }
  return undefined
}

const tooLarge = (maxBodyBytes: number) =>
  new Refused({ status: 413, reason: `Payload Too Large: a request body is at most ${maxBodyBytes} bytes` })

/**
 * How long a connection whose body was refused part-way is held open, unread, before it is closed.
 *
 * @since 0.2.0
 */
export const lingerMs = 2000

/** What `readBody` needs of a Node request (the platform's `source` on Node). */
interface NodeReadable {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown
  on(event: "end" | "close", listener: () => void): unknown
  on(event: "error", listener: (error: Error) => void): unknown
  once(event: "close", listener: () => void): unknown
  off(event: string, listener: (...args: Array<any>) => void): unknown
  read(size: number): unknown
  pause(): unknown
  destroy(): unknown
  readonly readableEnded: boolean
}

const isNodeReadable = (source: unknown): source is NodeReadable =>
  typeof source === "object" && source !== null && typeof (source as NodeReadable).on === "function" &&
  typeof (source as NodeReadable).pause === "function" && "readableEnded" in source

/**
 * Stop reading a refused body (before its first byte, or part-way), and hold the connection open,
 * unread, for `lingerMs` before closing it. Nothing more is read or kept (the kernel's socket buffer fills and the client's writes
 * wait); the client meanwhile reads the 413. Closing at once instead makes a client still sending fail
 * its next write, and `fetch` then reports that error instead of the answer (measured: 3 runs of 3); reading
 * the rest and dropping it would keep the answer but costs memory until the collector runs (60 MiB drained
 * grew the RSS by 32 MiB).
 *
 * @since 0.2.0
 */
export const hold = (request: HttpServerRequest.HttpServerRequest): void => {
  const source = request.source
  if (!isNodeReadable(source) || source.readableEnded) return
  // read(0) marks the body as being consumed, so Node does not drain it after the response (it would
  // read the whole body to reuse the connection); it buffers at most the stream's high-water mark
  source.read(0)
  source.pause()
  const timer = setTimeout(() => source.destroy(), lingerMs)
  timer.unref()
  source.once("close", () => clearTimeout(timer))
}

/**
 * Read a request's body as text, at most `maxBytes` of it: past the bound the request is `Refused` with
 * 413 — nothing more is read, buffered or parsed (`hold`), and the 413 still reaches the client.
 *
 * @since 0.2.0
 */
export const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<string, Refused> => {
  const declared = request.headers["content-length"]
  if (declared !== undefined && !(Number(declared) <= maxBytes)) {
    hold(request)
    return Effect.fail(tooLarge(maxBytes))
  }
  const source = request.source
  if (!isNodeReadable(source)) {
    return request.text.pipe(
      Effect.filterOrFail((text) => Buffer.byteLength(text) <= maxBytes, () => tooLarge(maxBytes)),
      Effect.catchTag(
        "RequestError",
        () => Effect.fail(new Refused({ status: 400, reason: "Bad Request: unreadable body" }))
      )
    )
  }
  if (source.readableEnded) return Effect.succeed("")
  return Effect.async<string, Refused>((resume) => {
    const chunks: Array<Uint8Array> = []
    let bytes = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      source.off("close", onClose)
    }
    const onData = (chunk: Uint8Array) => {
      bytes += chunk.length
      if (bytes > maxBytes) {
        cleanup()
        chunks.length = 0
        hold(request)
        return resume(Effect.fail(tooLarge(maxBytes)))
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks, bytes).toString("utf8")))
    }
    const onError = () => {
      cleanup()
      resume(Effect.fail(new Refused({ status: 400, reason: "Bad Request: the body could not be read" })))
    }
    const onClose = () => {
      cleanup()
      resume(Effect.fail(new Refused({ status: 400, reason: "Bad Request: the connection closed mid-body" })))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    source.on("close", onClose)
    return Effect.sync(cleanup)
  })
}

/**
 * Wrap an HTTP app with the checks.
 *
 * @since 0.2.0
 */
export const guard = (policy: Policy) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const refused = check(request, policy)
    if (refused === undefined) return app
    if (refused.status === 413) hold(request)
    const page = refused.status === 401 ? policy.unauthenticated?.(request) : undefined
    return Effect.succeed(page ?? refusal(refused))
  })

/**
 * Options of the guard of a server: the policy without the names the server answers to, which are
 * worked out from the address it is bound to.
 *
 * @since 0.2.0
 */
export interface Options {
  readonly token: Redacted.Redacted<string>
  /** Exact `Host` values besides the bound address's (a proxy's name). */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /** Exact origins allowed (default: the server's own origins). */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  readonly maxBodyBytes?: number | undefined
  readonly credentials?: Policy["credentials"]
  readonly sessions?: Policy["sessions"]
  readonly unauthenticated?: Policy["unauthenticated"]
}

/**
 * The policy for the server in context, from its bound address.
 *
 * @since 0.2.0
 */
export const policyFor = (options: Options): Effect.Effect<Policy, never, HttpServer.HttpServer> =>
  Effect.map(HttpServer.HttpServer, (server) => {
    const address = server.address
    const hosts = address._tag === "TcpAddress"
      ? HttpListener.hostsFor(address, options.allowedHosts ?? [])
      : [...(options.allowedHosts ?? []), "localhost"]
    return {
      token: options.token,
      allowedHosts: hosts,
      allowedOrigins: options.allowedOrigins !== undefined && options.allowedOrigins.length > 0
        ? options.allowedOrigins
        : HttpListener.originsFor(hosts),
      maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
      credentials: options.credentials,
      sessions: options.sessions,
      unauthenticated: options.unauthenticated
    }
  })

/**
 * The guard as global middleware of an `HttpLayerRouter`: every request of every route (and of no
 * route: a 404 is only given to a request that passed) goes through `check`.
 *
 * @since 0.2.0
 */
export const layer = (options: Options) =>
  HttpLayerRouter.middleware(
    Effect.map(
      policyFor(options),
      (policy) => (app: Effect.Effect<HttpServerResponse.HttpServerResponse, HttpLayerRouter.unhandled>) =>
        guard(policy)(app)
    ),
    { global: true }
  )
