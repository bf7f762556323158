import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { describe, expect, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"
import { HttpGuard, HttpListener } from "../src/index.js"
import * as WebSessions from "../src/WebSessions.js"

const token = Redacted.make("t".repeat(43))
const hosts = HttpListener.hostsFor({ hostname: "127.0.0.1", port: 7331 })
const policy: HttpGuard.Policy = {
  token,
  allowedHosts: hosts,
  allowedOrigins: HttpListener.originsFor(hosts),
  maxBodyBytes: 1024
}

/** The guard reads only the method and the headers of a request. */
const request = (headers: Record<string, string>, method = "POST") =>
  ({ method, headers, url: "/mcp", source: undefined }) as unknown as HttpServerRequest.HttpServerRequest

const withToken = (extra: Record<string, string> = {}) => ({
  host: "127.0.0.1:7331",
  authorization: `Bearer ${Redacted.value(token)}`,
  ...extra
})

const statusOf = (headers: Record<string, string>, method?: string, given: HttpGuard.Policy = policy) =>
  HttpGuard.check(request(headers, method), given)?.status ?? 200

describe("HttpGuard.check", () => {
  it("serves a request with the token and a Host naming the server", () => {
    expect(statusOf(withToken())).toBe(200)
    expect(statusOf(withToken({ host: "localhost:7331" }))).toBe(200)
    expect(statusOf(withToken({ host: "[::1]:7331" }))).toBe(200)
    expect(statusOf(withToken({ authorization: `bearer  ${Redacted.value(token)}` }))).toBe(200)
  })

  it("403 for a Host that is not the server's (DNS rebinding), or none", () => {
    for (const host of ["evil.example", "evil.example:7331", "127.0.0.1:7332", "127.0.0.1", "0.0.0.0:7331"]) {
      expect(statusOf(withToken({ host }))).toBe(403)
    }
    const { host: _, ...noHost } = withToken()
    expect(statusOf(noHost)).toBe(403)
  })

  it("403 for an Origin not in the exact list, null included; the server's own origin is served", () => {
    for (const origin of ["http://localhost:3000", "null", "http://127.0.0.1:7331/", "https://127.0.0.1:7331"]) {
      expect(statusOf(withToken({ origin }))).toBe(403)
    }
    expect(statusOf(withToken({ origin: "http://127.0.0.1:7331" }))).toBe(200)
    expect(statusOf(withToken({ origin: "http://localhost:7331" }))).toBe(200)
  })

  it("401 with WWW-Authenticate: Bearer without the token, or with another", () => {
    const none = HttpGuard.check(request({ host: "127.0.0.1:7331" }), policy)
    expect(none).toMatchObject({ status: 401, headers: { "www-authenticate": "Bearer realm=\"agent-terminal\"" } })
    for (
      const authorization of ["Bearer nope", `Bearer ${"t".repeat(42)}`, `Basic ${Redacted.value(token)}`, "Bearer"]
    ) {
      const wrong = HttpGuard.check(request(withToken({ authorization })), policy)
      expect(wrong?.status).toBe(401)
      expect(wrong?.headers?.["www-authenticate"]).toMatch(/^Bearer /)
    }
  })

  it("the session cookie counts only on routes that accept it, and with an Origin on an unsafe method", () => {
    const sessions = WebSessions.make({ now: () => Date.now() })
    const issued = sessions.issue()
    const cookie = `other=1; ${HttpGuard.cookieName}=${issued.value}`
    const headers = { host: "127.0.0.1:7331", cookie }
    expect(statusOf(headers, "GET")).toBe(401)
    const view: HttpGuard.Policy = { ...policy, credentials: () => ["bearer", "cookie"], sessions }
    expect(statusOf(headers, "GET", view)).toBe(200)
    expect(statusOf(headers, "POST", view)).toBe(401)
    expect(statusOf({ ...headers, origin: "http://127.0.0.1:7331" }, "POST", view)).toBe(200)
    expect(statusOf({ ...headers, origin: "http://localhost:3000" }, "POST", view)).toBe(403)
    expect(statusOf({ host: "127.0.0.1:7331", cookie: `${HttpGuard.cookieName}=forged` }, "GET", view)).toBe(401)
    expect(issued.value).not.toContain(Redacted.value(token))
    // a sign-out (or the expiry) ends it
    sessions.revoke(issued.value)
    expect(statusOf(headers, "GET", view)).toBe(401)
  })

  it("a sign-in expires", () => {
    let now = 1000
    const sessions = WebSessions.make({ ttlMs: 100, now: () => now })
    const issued = sessions.issue()
    expect(sessions.valid(issued.value)).toBe(true)
    now += 100
    expect(sessions.valid(issued.value)).toBe(false)
    expect(sessions.valid("")).toBe(false)
  })

  it("413 for a declared body over the bound, before reading it", () => {
    expect(statusOf(withToken({ "content-length": "1024" }))).toBe(200)
    expect(statusOf(withToken({ "content-length": "1025" }))).toBe(413)
    expect(statusOf(withToken({ "content-length": "a lot" }))).toBe(413)
  })

  it("compares tokens in constant time over digests of equal length", () => {
    expect(HttpGuard.constantTimeEquals("abc", "abc")).toBe(true)
    expect(HttpGuard.constantTimeEquals("abc", "abd")).toBe(false)
    expect(HttpGuard.constantTimeEquals("", "abc")).toBe(false)
    expect(HttpGuard.constantTimeEquals("a".repeat(10_000), "a")).toBe(false)
  })
})

describe("HttpListener: the names a server answers to", () => {
  it("a loopback bind answers to the three loopback names with its port", () => {
    expect(HttpListener.hostsFor({ hostname: "127.0.0.1", port: 80 })).toEqual([
      "127.0.0.1:80",
      "localhost:80",
      "[::1]:80"
    ])
    expect(HttpListener.hostsFor({ hostname: "::1", port: 9 })).toContain("[::1]:9")
  })

  it("a specific address answers to itself and the extra names only", () => {
    expect(HttpListener.hostsFor({ hostname: "10.1.2.3", port: 8080 }, ["MCP.example.com"])).toEqual([
      "10.1.2.3:8080",
      "mcp.example.com"
    ])
  })

  it("a wildcard bind answers to this machine's addresses, never to 0.0.0.0", () => {
    const names = HttpListener.hostsFor({ hostname: "0.0.0.0", port: 1 })
    expect(names).toContain("127.0.0.1:1")
    expect(names).not.toContain("0.0.0.0:1")
  })

  it("loopback is 127/8, ::1 and localhost", () => {
    for (const host of ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost", "LOCALHOST"]) {
      expect(HttpListener.isLoopback(host)).toBe(true)
    }
    for (const host of ["0.0.0.0", "10.0.0.1", "::", "localhost.evil.example", "128.0.0.1"]) {
      expect(HttpListener.isLoopback(host)).toBe(false)
    }
  })
})
