/**
 * The live view (docs/live-view.md): a web page at `/` of the server that owns the terminals, behind
 * `HttpGuard` — every terminal of every owner live, a control lease a person takes and hands back, the
 * agents' requests for a person, the audit, and the recordings with a player. It runs over `Oversight`
 * (the same sessions the tools drive). xterm.js is served from the installed `@xterm/xterm` and
 * `@xterm/addon-fit` (no CDN); the page's own script is small plain JS (`assets/live`).
 *
 * Signing in: the URL carries the token once, in its fragment (`http://127.0.0.1:7331/#token=…`, never sent
 * to the server); the page posts it as a bearer token to `/live/login`, gets an HttpOnly, SameSite=Strict
 * session cookie (`WebSessions`), drops the fragment and reloads. Without a credential `/` answers 401 with
 * the sign-in page (and its script, `/live/login.js`) — nothing else is served; the streams
 * (WebSockets, refused with the same checks as any request: a foreign `Origin` is 403) need the cookie or
 * the token.
 *
 * @since 0.2.0
 */
import { Oversight } from "@agent-terminal/core"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as HttpGuard from "./HttpGuard.js"
import * as LiveSockets from "./internal/liveSockets.js"
import { WebSessions } from "./WebSessions.js"

/**
 * Options of the live view.
 *
 * @since 0.2.0
 */
export interface Options {
  /** How often the list is refreshed besides its changes (default 1000 ms). */
  readonly refreshMs?: number | undefined
  /** How far a viewer may fall behind a terminal's output before it is dropped (default 4 MiB). */
  readonly maxBufferedBytes?: number | undefined
  /** WebSockets one credential (a signed-in session, or the token) may hold open at once (default 16). */
  readonly maxSocketsPerPerson?: number | undefined
}

const require = createRequire(import.meta.url)

/** A file of the page (`assets/live`, beside `src` and `dist`). */
const own = (name: string) => new URL(`../assets/live/${name}`, import.meta.url)

interface Asset {
  readonly body: Uint8Array
  readonly type: string
}

const load = (file: string | URL, type: string): Asset => ({ body: fs.readFileSync(file), type })

/** Every static file the page needs, read once. */
const loadAssets = (): Record<string, Asset> => ({
  "xterm.js": load(require.resolve("@xterm/xterm/lib/xterm.js"), "text/javascript; charset=utf-8"),
  "xterm.css": load(require.resolve("@xterm/xterm/css/xterm.css"), "text/css; charset=utf-8"),
  "addon-fit.js": load(require.resolve("@xterm/addon-fit/lib/addon-fit.js"), "text/javascript; charset=utf-8"),
  "app.js": load(own("app.js"), "text/javascript; charset=utf-8"),
  "app.css": load(own("app.css"), "text/css; charset=utf-8")
})

const policy = (styleSrc: string) =>
  `default-src 'none'; script-src 'self'; style-src ${styleSrc}; connect-src 'self'; img-src 'self' data:; ` +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * The headers of every page and file of the live view: its own scripts and styles only, no framing
 * (clickjacking a "take control"), no referrer, no caching.
 *
 * @since 0.2.0
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": policy("'self'"),
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/**
 * The page itself, with a nonce new for each response: the policy allows its own style sheets and the
 * `<style>` elements its script stamps with the nonce (xterm.js makes them for its colours and sizes) — no
 * other inline style. The page's script reads the nonce from its own `<script>` element.
 */
const pageWithNonce = (template: string): HttpServerResponse.HttpServerResponse => {
  const nonce = crypto.randomBytes(16).toString("base64")
  return HttpServerResponse.text(template.replace("{{style-nonce}}", nonce), {
    contentType: "text/html; charset=utf-8",
    headers: { ...securityHeaders, "content-security-policy": policy(`'self' 'nonce-${nonce}'`) }
  })
}

const respond = (asset: Asset, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.uint8Array(asset.body, {
    status,
    contentType: asset.type,
    headers: { ...securityHeaders, ...headers }
  })

const signIn = {
  page: load(own("login.html"), "text/html; charset=utf-8"),
  script: load(own("login.js"), "text/javascript; charset=utf-8")
}

/**
 * What the guard answers a request without a credential on the live view's paths: the sign-in page at
 * `/`, its script; `undefined` (the JSON 401) for everything else.
 *
 * @since 0.2.0
 */
export const unauthenticated = (
  request: HttpServerRequest.HttpServerRequest
): HttpServerResponse.HttpServerResponse | undefined => {
  if (request.method !== "GET") return undefined
  // the guard refused it for want of a credential: its path is canonical already
  const path = request.url.split("?")[0]
  if (path === "/" || path === "/index.html") {
    return respond(signIn.page, 401, { "www-authenticate": "Bearer realm=\"agent-terminal\"" })
  }
  if (path === "/live/login.js") return respond(signIn.script)
  return undefined
}

/** The live view's routes a sign-in cookie may reach (exact paths, and the prefixes of a route's one parameter). */
const cookieGets = new Set(["/", "/live/sessions", "/live/recordings", "/live/events"])
const cookiePrefixes = ["/live/assets/", "/live/audit/", "/live/recordings/", "/live/terminal/"]

/**
 * The credentials each request accepts, from its method and canonical path: the sign-in cookie only on the
 * live view's own routes — its page, files, lists, streams and sign-out — and the bearer token everywhere.
 * The MCP endpoint, the sign-in (a cookie never mints another) and any path no live route serves take the
 * bearer token only: a cookie that leaks gives the live view, never a tool.
 *
 * @since 0.2.0
 */
export const credentials = (method: string, path: string): ReadonlyArray<HttpGuard.Credential> => {
  const live = method === "GET" || method === "HEAD"
    ? cookieGets.has(path) ||
      cookiePrefixes.some((prefix) =>
        path.startsWith(prefix) && path.length > prefix.length && !path.includes("/", prefix.length)
      )
    : method === "POST" && path === "/live/logout"
  return live ? ["bearer", "cookie"] : ["bearer"]
}

/**
 * Who a request of the live view is, as a person: the signed-in session its cookie names (`web-<id>`), or
 * `token` for a client that sends the bearer token itself (everyone who holds it is that one credential).
 *
 * @since 0.3.0
 */
export const personOf = (
  request: HttpServerRequest.HttpServerRequest,
  sessions: WebSessions["Type"]
): string => {
  const value = HttpGuard.cookieOf(request.headers["cookie"], HttpGuard.cookieName)
  const live = value === undefined ? undefined : sessions.lookup(value)
  // the guard let the request in: with no live session behind its cookie, it presented the token
  return live?.person ?? "token"
}

const cookie = (value: string, maxAgeSeconds: number) =>
  `${HttpGuard.cookieName}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`

const jsonResponse = (value: unknown, status = 200) =>
  HttpServerResponse.unsafeJson(value, { status, headers: securityHeaders })

const notFound = (what: string) => jsonResponse({ error: `${what} not found` }, 404)

const paramOf = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

const searchParam = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => {
  const query = request.url.indexOf("?")
  return query === -1 ? undefined : new URLSearchParams(request.url.slice(query + 1)).get(name) ?? undefined
}

/**
 * The live view's routes on an `HttpLayerRouter` (serve it behind `HttpGuard.layer` with this module's
 * `credentials`, `unauthenticated` and the same `WebSessions`).
 *
 * @since 0.2.0
 */
export const layer = (options: Options = {}) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const oversight = yield* Oversight.Oversight
      const sessions = yield* WebSessions
      const assets = loadAssets()
      const page = fs.readFileSync(own("index.html"), "utf8")
      const refreshMs = options.refreshMs ?? 1000
      const maxBufferedBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024
      const withOversight = Effect.provideService(Oversight.Oversight, oversight)
      const sockets = new LiveSockets.Sockets(options.maxSocketsPerPerson ?? LiveSockets.DEFAULT_SOCKETS_PER_PERSON)
      /** A socket of `request`'s person, within their share of sockets (429 past it). */
      const socketOf = <E, R>(
        request: HttpServerRequest.HttpServerRequest,
        serve: (person: string) => Effect.Effect<void, E, R>
      ) =>
        Effect.suspend(() => {
          const person = personOf(request, sessions)
          if (!sockets.acquire(person)) {
            return Effect.succeed(jsonResponse({
              error: `too many live sockets open for this sign-in (at most ${sockets.maxPerPerson}): close a tab`
            }, 429))
          }
          return serve(person).pipe(
            Effect.ensuring(Effect.sync(() => sockets.release(person))),
            Effect.as(HttpServerResponse.empty())
          )
        })

      yield* router.add("GET", "/", Effect.sync(() => pageWithNonce(page)))
      yield* router.add("GET", "/live/login.js", Effect.succeed(respond(signIn.script)))
      yield* router.add(
        "POST",
        "/live/login",
        Effect.sync(() => {
          const issued = sessions.issue()
          return HttpServerResponse.empty({
            status: 204,
            headers: { ...securityHeaders, "set-cookie": cookie(issued.value, Math.floor(sessions.ttlMs / 1000)) }
          })
        })
      )
      yield* router.add(
        "POST",
        "/live/logout",
        Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
          const value = HttpGuard.cookieOf(request.headers["cookie"], HttpGuard.cookieName)
          if (value !== undefined) sessions.revoke(value)
          return HttpServerResponse.empty({ status: 204, headers: { ...securityHeaders, "set-cookie": cookie("", 0) } })
        })
      )
      yield* router.add(
        "GET",
        "/live/assets/:file",
        Effect.map(paramOf("file"), (file) => {
          const asset = assets[file]
          return asset === undefined ? notFound("asset") : respond(asset)
        })
      )
      yield* router.add("GET", "/live/sessions", Effect.map(oversight.sessions, (list) => jsonResponse(list)))
      yield* router.add(
        "GET",
        "/live/audit/:id",
        Effect.flatMap(paramOf("id"), (id) => Effect.map(oversight.audit(id, 500), (entries) => jsonResponse(entries)))
      )
      yield* router.add("GET", "/live/recordings", Effect.map(oversight.recordings, (list) => jsonResponse(list)))
      yield* router.add(
        "GET",
        "/live/recordings/:name",
        Effect.flatMap(paramOf("name"), (name) =>
          Effect.map(oversight.recording(name), (content) =>
            Option.match(content, {
              onNone: () => notFound("recording"),
              onSome: (body) =>
                HttpServerResponse.uint8Array(body, {
                  contentType: "application/x-asciicast",
                  headers: { ...securityHeaders, "content-disposition": `attachment; filename="${name}"` }
                })
            })))
      )
      yield* router.add(
        "GET",
        "/live/events",
        Effect.flatMap(
          HttpServerRequest.HttpServerRequest,
          (request) => socketOf(request, () => LiveSockets.events(request, refreshMs).pipe(withOversight))
        )
      )
      yield* router.add(
        "GET",
        "/live/terminal/:id",
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const id = yield* paramOf("id")
          const known = (yield* oversight.sessions).some((session) => session.sessionId === id)
          if (!known) return notFound("session")
          const name = Oversight.personId(searchParam(request, "person") ?? "person")
          return yield* socketOf(
            request,
            (person) => LiveSockets.terminal(request, id, { id: person, name }, maxBufferedBytes).pipe(withOversight)
          )
        })
      )
    })
  )
