/**
 * A live-view cookie is only a cookie (issue 26, findings 1 and 2; SCENARIOS 49), attacked for real against
 * `agent-terminal mcp --http` with raw requests (`node:http`, so every spelling reaches the server as
 * written): the sign-in cookie, with no bearer token, on every spelling of `/mcp` that the router used to
 * match — trying `initialize` and then `tools/call exec` — and on every spelling of the sign-in route, where
 * it used to mint fresh cookies that outlived its sign-out.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { attemptLog } from "../support/attempts.js"
import {
  connectHttp,
  type HttpServer,
  initialize,
  rawRequest,
  startHttpServer,
  stopHttpServer
} from "../support/http.js"
import { structured } from "../support/mcp.js"

const record = attemptLog("cookie")
let server: HttpServer
let scratch: string

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "at-cookie-"))
  server = await startHttpServer([], { AGENT_TERMINAL_STATE_DIR: scratch })
})

afterAll(async () => {
  await stopHttpServer(server)
  fs.rmSync(scratch, { recursive: true, force: true })
})

const target = (rawPath: string) => new URL(rawPath.startsWith("/") ? `${server.url.origin}${rawPath}` : rawPath)

/** A raw request to exactly `rawPath` (node:http sends the path as given). */
const raw = (rawPath: string, options: Parameters<typeof rawRequest>[1]) =>
  rawRequest(server.url, { ...options, path: rawPath })

/** Sign in as a person does: the token posted once as a bearer header; the cookie that comes back. */
const signIn = async (): Promise<string> => {
  const answer = await rawRequest(target("/live/login"), {
    headers: { authorization: `Bearer ${server.token}`, origin: server.url.origin }
  })
  expect(answer.status).toBe(204)
  const setCookie = String(answer.headers["set-cookie"] ?? "")
  const value = /agent_terminal_session=([^;]+)/.exec(setCookie)?.[1]
  expect(value).toBeDefined()
  return value!
}

const cookieHeaders = (value: string, extra: Record<string, string> = {}) => ({
  cookie: `agent_terminal_session=${value}`,
  origin: server.url.origin,
  ...extra
})

const mcpSpellings = ["//mcp", "/MCP", "/%6dcp", "/%6Dcp", "/mcp/", "/mcp;x", "/./mcp", "/live/../mcp", "/Mcp//"]
const loginSpellings = ["/live/login", "/live/login/", "//live/login", "/LIVE/LOGIN", "/live/login;x", "/live/%6cogin"]

describe("a live-view cookie is only a cookie", () => {
  it("the cookie on every spelling of /mcp: refused before any route, and no command runs", async () => {
    const cookie = await signIn()
    expect((await raw("/live/sessions", { method: "GET", headers: cookieHeaders(cookie) })).status).toBe(200)
    for (const spelling of mcpSpellings) {
      const marker = path.join(scratch, `ran-${Buffer.from(spelling).toString("hex")}`)
      const opened = await raw(spelling, {
        headers: cookieHeaders(cookie, {
          "content-type": "application/json",
          accept: "application/json, text/event-stream"
        }),
        body: JSON.stringify(initialize())
      })
      const sessionId = opened.headers["mcp-session-id"]
      let called = "not tried: no MCP session"
      if (typeof sessionId === "string") {
        const call = await raw(spelling, {
          headers: cookieHeaders(cookie, {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": sessionId,
            "mcp-protocol-version": "2025-06-18"
          }),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "tools/call",
            params: { name: "exec", arguments: { command: `touch ${marker}` } }
          })
        })
        called = `tools/call ${call.status}`
      }
      const ran = fs.existsSync(marker)
      record(
        "mcp --http, /mcp",
        `the live view's cookie, no token: initialize and tools/call exec at ${spelling}`,
        `${opened.status}; ${called}; command ran: ${ran}`,
        !ran && [400, 401, 404].includes(opened.status)
      )
      expect([400, 401, 404]).toContain(opened.status)
      expect(sessionId).toBeUndefined()
      expect(ran).toBe(false)
    }
    // the absolute form of the request target, which the router would read as /mcp
    const absolute = await raw(`${server.url.origin}/mcp`, {
      headers: cookieHeaders(cookie, {
        "content-type": "application/json",
        accept: "application/json, text/event-stream"
      }),
      body: JSON.stringify(initialize())
    })
    record("mcp --http, /mcp", "the cookie at the absolute-form target http://host/mcp", `${absolute.status}`, true)
    expect(absolute.status).toBe(400)
    // the bearer token still works, at the one spelling
    const { client } = await connectHttp(server)
    expect(structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions).toEqual([])
    await client.close()
  })

  it("the cookie cannot mint cookies under any spelling of the sign-in; sign-out ends it", async () => {
    const cookie = await signIn()
    const minted: Array<string> = []
    for (const spelling of loginSpellings) {
      const answer = await raw(spelling, { headers: cookieHeaders(cookie) })
      const setCookie = String(answer.headers["set-cookie"] ?? "")
      const fresh = /agent_terminal_session=([^;]+)/.exec(setCookie)?.[1]
      if (fresh !== undefined && fresh !== "") minted.push(fresh)
      record(
        "mcp --http, /live/login",
        `the cookie alone, POST ${spelling} (mint a fresh cookie)`,
        `${answer.status}${fresh === undefined ? ", no cookie" : ", a cookie"}`,
        fresh === undefined
      )
      expect([400, 401, 404]).toContain(answer.status)
      expect(fresh).toBeUndefined()
    }
    expect(minted).toEqual([])
    // sign-out revokes it: the cookie and anything it could have minted are refused from then on
    const out = await raw("/live/logout", { headers: cookieHeaders(cookie) })
    expect(out.status).toBe(204)
    const after = await raw("/live/sessions", { method: "GET", headers: cookieHeaders(cookie) })
    record("mcp --http, the live view", "the cookie after its sign-out, GET /live/sessions", `${after.status}`, true)
    expect(after.status).toBe(401)
    for (const value of minted) {
      expect((await raw("/live/sessions", { method: "GET", headers: cookieHeaders(value) })).status).toBe(401)
    }
    // the sign-in itself takes the bearer token: a second one is a new session
    const again = await signIn()
    expect(again).not.toBe(cookie)
    expect((await raw("/live/sessions", { method: "GET", headers: cookieHeaders(again) })).status).toBe(200)
  })

  it("non-canonical spellings are refused before any credential, with the token too", async () => {
    const bearer = { authorization: `Bearer ${server.token}` }
    const answers: Array<string> = []
    for (
      const spelling of ["/live//sessions", "/live/sessions/", "/LIVE/sessions", "/live/%73essions", "/live/sessions;a"]
    ) {
      const answer = await raw(spelling, { method: "GET", headers: bearer })
      answers.push(`${spelling} ${answer.status}`)
      expect([400, 404]).toContain(answer.status)
    }
    record("mcp --http, every route", "non-canonical spellings with the bearer token", answers.join(", "), true)
    expect((await raw("/live/sessions", { method: "GET", headers: bearer })).status).toBe(200)
  })
})
