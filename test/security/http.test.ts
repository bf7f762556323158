/**
 * The HTTP surface attacked for real (issue 15, SCENARIOS 38 and 39): `agent-terminal mcp --http` on
 * loopback, hit with raw requests where the attack is raw (what a browser page, another local user or a
 * flood would send) and with the official MCP client where a client is meant. Each test asserts that
 * the attack fails and that nothing ran.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import {
  connectHttp,
  type HttpServer,
  initialize,
  mcpHeaders,
  rawRequest,
  rssBytes,
  startHttpServer,
  stopHttpServer
} from "../support/http.js"
import { bodyOf, structured, textOf } from "../support/mcp.js"

const servers: Array<HttpServer> = []
const clients: Array<Client> = []
const scratch: Array<string> = []

const start = async (args: ReadonlyArray<string> = [], env: Record<string, string | undefined> = {}) => {
  const server = await startHttpServer(args, env)
  servers.push(server)
  return server
}

const connect = async (server: HttpServer) => {
  const connected = await connectHttp(server)
  clients.push(connected.client)
  return connected
}

const tempDir = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `at-http-${name}-`))
  scratch.push(dir)
  return dir
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)))
  await Promise.all(servers.splice(0).map(stopHttpServer))
  for (const dir of scratch.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A JSON-RPC batch that, if run, creates `file`: what a page sends in one "simple" request. */
const execBatch = (file: string) => [
  initialize(1),
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "exec", arguments: { command: `touch ${file}` } } }
]

/** An initialized raw MCP session: its id. */
const rawSession = async (server: HttpServer) => {
  const response = await fetch(server.url, {
    method: "POST",
    headers: mcpHeaders(server),
    body: JSON.stringify(initialize())
  })
  expect(response.status).toBe(200)
  return response.headers.get("mcp-session-id")!
}

/**
 * Send `total` bytes of body in 64 KiB pieces with `fetch` (as MCP clients do), with a Content-Length or
 * chunked; `onProgress` runs before each piece. Resolve with the status the server answered.
 */
const bigPost = async (
  server: HttpServer,
  total: number,
  options: { readonly declareLength: boolean },
  onProgress: () => void
) => {
  const piece = new Uint8Array(64 * 1024).fill("x".charCodeAt(0))
  let sent = 0
  const body = options.declareLength
    ? new Uint8Array(total).fill("x".charCodeAt(0))
    : new ReadableStream<Uint8Array>({
      pull(controller) {
        onProgress()
        if (sent >= total) return controller.close()
        sent += piece.length
        controller.enqueue(piece)
      }
    })
  const sampler = setInterval(onProgress, 5)
  try {
    const response = await fetch(server.url, {
      method: "POST",
      headers: mcpHeaders(server),
      body,
      duplex: "half"
    } as RequestInit)
    return { status: response.status, body: await response.text() }
  } finally {
    clearInterval(sampler)
  }
}

describe("the HTTP surface, attacked", () => {
  it("a page on another localhost origin cannot run a command with one simple request (text/plain batch)", async () => {
    const server = await start()
    const dir = tempDir("csrf")
    const planted = path.join(dir, "planted")
    const attempts = [
      // what the page sends: no token, a "simple" content type, its own origin
      { "content-type": "text/plain", origin: "http://localhost:3000" },
      // even holding the token, a foreign origin is refused
      { "content-type": "text/plain", origin: "http://localhost:3000", authorization: `Bearer ${server.token}` },
      { ...mcpHeaders(server), origin: "http://localhost:3000" },
      { ...mcpHeaders(server), origin: "null" },
      // without an origin but with the token: a text/plain body or a batch runs nothing either
      { "content-type": "text/plain", authorization: `Bearer ${server.token}` },
      mcpHeaders(server)
    ]
    const statuses: Array<number> = []
    for (const headers of attempts) {
      const response = await rawRequest(server.url, { headers, body: JSON.stringify(execBatch(planted)) })
      statuses.push(response.status)
      expect(response.body).not.toContain("result")
    }
    expect(statuses).toEqual([403, 403, 403, 403, 415, 400])
    expect(fs.existsSync(planted)).toBe(false)
    expect(server.stderr.join("")).not.toContain("MCP session #")
  })

  it("no token, a wrong token or a malformed header is 401 with WWW-Authenticate: Bearer", async () => {
    const server = await start()
    const body = JSON.stringify(initialize())
    const base = { "content-type": "application/json", accept: "application/json, text/event-stream" }
    const none = await rawRequest(server.url, { headers: base, body })
    expect(none.status).toBe(401)
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer realm="agent-terminal"$/)
    for (const authorization of [`Bearer ${server.token.slice(0, -1)}x`, `Bearer ${server.token}x`, server.token]) {
      const wrong = await rawRequest(server.url, { headers: { ...base, authorization }, body })
      expect(wrong.status).toBe(401)
      expect(wrong.headers["www-authenticate"]).toContain("Bearer")
      expect(wrong.body).not.toContain(server.token)
    }
    // every route of the server is behind the guard, not only /mcp
    expect((await rawRequest(new URL("/other", server.url), { method: "GET" })).status).toBe(401)
    const right = await rawRequest(server.url, { headers: mcpHeaders(server), body })
    expect(right.status).toBe(200)
  })

  it("a Host that does not name the server is 403 (DNS rebinding), the loopback names are served", async () => {
    const server = await start()
    const body = JSON.stringify(initialize())
    const port = server.url.port
    for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`, "127.0.0.1"]) {
      const response = await rawRequest(server.url, { headers: mcpHeaders(server, { host }), body })
      expect(response.status).toBe(403)
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      const response = await rawRequest(server.url, { headers: mcpHeaders(server, { host }), body })
      expect(response.status).toBe(200)
    }
  })

  for (const declareLength of [true, false]) {
    it(`a 64 MiB body${declareLength ? "" : " without Content-Length"} is 413 and the server's RSS grows < 16 MiB`, async () => {
      const server = await start()
      const pid = server.process.pid!
      const { client } = await connect(server)
      await client.callTool({ name: "terminal_list", arguments: {} })
      const before = rssBytes(pid)
      let peak = before
      const answer = await bigPost(server, 64 * 1024 * 1024, { declareLength }, () => {
        peak = Math.max(peak, rssBytes(pid))
      })
      peak = Math.max(peak, rssBytes(pid))
      expect(answer.status).toBe(413)
      expect(answer.body).toContain("Payload Too Large")
      expect(peak - before).toBeLessThan(16 * 1024 * 1024)
      // and the server goes on serving
      expect(structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions).toEqual([])
    })
  }

  it("MCP sessions past the cap are 503 with Retry-After; a closed one makes room (300 initializes, default 64)", async () => {
    const server = await start()
    const { client } = await connect(server)
    const statuses: Record<number, number> = {}
    let retryAfter: string | null = null
    const ids: Array<string> = []
    for (let i = 0; i < 300; i++) {
      const response = await fetch(server.url, {
        method: "POST",
        headers: mcpHeaders(server),
        body: JSON.stringify(initialize())
      })
      statuses[response.status] = (statuses[response.status] ?? 0) + 1
      if (response.status === 503) retryAfter = response.headers.get("retry-after")
      const id = response.headers.get("mcp-session-id")
      if (id !== null) ids.push(id)
      await response.arrayBuffer()
    }
    // the real client's session is the 64th
    expect(statuses).toEqual({ 200: 63, 503: 237 })
    expect(Number(retryAfter)).toBeGreaterThan(0)
    // the client that got in keeps being served
    expect(structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions).toEqual([])
    const removed = await fetch(server.url, {
      method: "DELETE",
      headers: { authorization: `Bearer ${server.token}`, "mcp-session-id": ids[0]! }
    })
    expect(removed.status).toBe(204)
    expect(await rawSession(server)).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("cols: 100000 is InvalidInput at once, and another client is served meanwhile", async () => {
    const server = await start()
    const attacker = await connect(server)
    const other = await connect(server)
    const { sessionId } = structured(await other.client.callTool({ name: "terminal_open", arguments: {} }))
    const [huge, served] = await Promise.all([
      attacker.client.callTool({ name: "terminal_open", arguments: { cols: 100000, rows: 100000 } }),
      other.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "echo served" } })
    ])
    expect(huge.isError).toBe(true)
    expect(structured(huge)).toMatchObject({ _tag: "InvalidInput", field: "cols" })
    expect(structured(served)).toMatchObject({ waitReason: "prompt" })
    expect(bodyOf(served)).toBe("served")
    for (const args of [{ cols: 1.5 }, { cols: -1 }, { cols: 0, rows: 0 }, { rows: 100000 }, { name: "a\u0000b" }]) {
      const refused = await attacker.client.callTool({ name: "terminal_open", arguments: args })
      expect(structured(refused)._tag).toBe("InvalidInput")
    }
    expect(structured(await attacker.client.callTool({ name: "terminal_list", arguments: {} })).sessions).toEqual([])
  })

  it("an 8 MiB unknown parameter comes back as an error result within maxResultBytes, the value not echoed", async () => {
    const server = await start(["--max-body-bytes", String(16 * 1024 * 1024), "--max-result-bytes", "4096"])
    const { client } = await connect(server)
    const huge = "A".repeat(8 * 1024 * 1024)
    for (const args of [{ bogus: huge }, { [huge.slice(0, 4 * 1024 * 1024)]: 1 }, { cols: huge }]) {
      const result = await client.callTool({ name: "terminal_open", arguments: args })
      expect(result.isError).toBe(true)
      expect(structured(result)._tag).toBe("InvalidInput")
      const whole = Buffer.byteLength(textOf(result)) + Buffer.byteLength(JSON.stringify(structured(result)))
      expect(whole).toBeLessThanOrEqual(4096)
      expect(JSON.stringify(result)).not.toContain("A".repeat(100))
    }
    // the default body bound refuses the same request before it is parsed
    const bounded = await start()
    const response = await rawRequest(bounded.url, {
      headers: mcpHeaders(bounded),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "terminal_open", arguments: { bogus: huge } }
      })
    })
    expect(response.status).toBe(413)
  })

  it("speaks the transport as 2025-06-18 writes it: 415, 406, batches 400, protocol version 400, 202 for a notification", async () => {
    const server = await start()
    const post = (body: unknown, headers: Record<string, string>) =>
      rawRequest(server.url, { headers, body: typeof body === "string" ? body : JSON.stringify(body) })
    expect((await post(initialize(), mcpHeaders(server, { "content-type": "text/plain" }))).status).toBe(415)
    expect(
      (await post(initialize(), mcpHeaders(server, { "content-type": "application/x-www-form-urlencoded" })))
        .status
    ).toBe(415)
    expect((await post(initialize(), mcpHeaders(server, { accept: "application/json" }))).status).toBe(406)
    expect((await post(initialize(), mcpHeaders(server, { accept: "text/event-stream" }))).status).toBe(406)
    expect((await post([initialize()], mcpHeaders(server))).status).toBe(400)
    expect((await post("{not json", mcpHeaders(server))).status).toBe(400)
    const sessionId = await rawSession(server)
    const inSession = (extra: Record<string, string> = {}) =>
      mcpHeaders(server, { "mcp-session-id": sessionId, ...extra })
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" }
    expect((await post([list], inSession())).status).toBe(400)
    const badVersion = await post(list, inSession({ "mcp-protocol-version": "1999-01-01" }))
    expect(badVersion.status).toBe(400)
    expect(badVersion.body).toContain("2025-06-18")
    expect((await post(list, inSession({ "mcp-protocol-version": "2025-06-18" }))).status).toBe(200)
    // no header: the server assumes 2025-03-26, as the specification says
    expect((await post(list, inSession())).status).toBe(200)
    const notification = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, inSession())
    expect(notification.status).toBe(202)
    expect(notification.body).toBe("")
  })

  it("logs name sessions by a short hash, never by their id, and never show the token", async () => {
    const server = await start()
    const { client, transport } = await connect(server)
    await client.callTool({ name: "terminal_list", arguments: {} })
    const sessionId = transport.sessionId!
    await transport.terminateSession()
    const deadline = Date.now() + 10_000
    while (!server.stderr.join("").includes("closed (deleted by the client)") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const logs = server.stderr.join("")
    expect(logs).toMatch(/MCP session #1 \([0-9a-f]{8}\) opened/)
    expect(logs).toContain("closed (deleted by the client)")
    expect(logs).not.toContain(sessionId)
    expect(logs).not.toContain(sessionId.slice(0, 8))
    expect(logs).not.toContain(server.token)
  })

  it("without AGENT_TERMINAL_TOKEN a token file is made (0600 in a 0700 directory), named on stderr, reused", async () => {
    const state = path.join(tempDir("state"), "state")
    const first = await start([], { AGENT_TERMINAL_TOKEN: undefined, AGENT_TERMINAL_STATE_DIR: state })
    const file = path.join(state, "token")
    const token = fs.readFileSync(file, "utf8").trim()
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.statSync(state).mode & 0o777).toBe(0o700)
    expect(first.stderr.join("")).toContain(file)
    expect(first.stderr.join("")).not.toContain(token)
    const { client } = await connectHttp(first, token)
    clients.push(client)
    expect(structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions).toEqual([])
    await stopHttpServer(first)
    const second = await start([], { AGENT_TERMINAL_TOKEN: undefined, AGENT_TERMINAL_STATE_DIR: state })
    expect(fs.readFileSync(file, "utf8").trim()).toBe(token)
    expect((await connectHttp(second, token)).transport.sessionId).toBeDefined()
    // a token file other users can read is refused at startup, not used
    fs.chmodSync(file, 0o644)
    await expect(start([], { AGENT_TERMINAL_TOKEN: undefined, AGENT_TERMINAL_STATE_DIR: state })).rejects.toThrow(
      /accessible to other users/
    )
  })

  it("a --token-file outside the state directory reads as empty inside a confined session", async () => {
    const workspace = tempDir("token-workspace")
    const secrets = path.join(workspace, "secrets")
    fs.mkdirSync(secrets, { mode: 0o700 })
    const file = path.join(secrets, "token")
    const server = await start(["--token-file", file, "--sandbox", "read-only", "--workspace", workspace], {
      AGENT_TERMINAL_TOKEN: undefined,
      AGENT_TERMINAL_STATE_DIR: path.join(tempDir("token-state"), "state")
    })
    const token = fs.readFileSync(file, "utf8").trim()
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const { client } = await connectHttp(server, token)
    clients.push(client)
    const { sessionId } = structured(await client.callTool({ name: "terminal_open", arguments: {} }))
    const read = await client.callTool({
      name: "terminal_send",
      arguments: { sessionId, text: "wc -c < secrets/token" }
    })
    expect(structured(read)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
    expect(bodyOf(read).trim()).toBe("0")
    expect(textOf(read)).not.toContain(token)
  })

  it("a non-loopback --host warns that the traffic is plain text, and still checks Host and the token", async () => {
    const server = await start(["--host", "0.0.0.0"])
    expect(server.stderr.join("")).toContain("plain text")
    const port = server.url.port
    const url = new URL(`http://127.0.0.1:${port}/mcp`)
    const body = JSON.stringify(initialize())
    const headers = (extra: Record<string, string> = {}) => mcpHeaders(server, { host: `127.0.0.1:${port}`, ...extra })
    expect((await rawRequest(url, { headers: headers({ host: `evil.example:${port}` }), body })).status).toBe(403)
    // 0.0.0.0 is where it listens, not a name it answers to
    expect((await rawRequest(url, { headers: headers({ host: `0.0.0.0:${port}` }), body })).status).toBe(403)
    expect((await rawRequest(url, { headers: headers({ authorization: "Bearer nope" }), body })).status).toBe(401)
    expect((await rawRequest(url, { headers: headers(), body })).status).toBe(200)
  })

  it("a client that never finishes its headers is cut off; connections past the cap are closed", async () => {
    const server = await start([
      "--headers-timeout-ms",
      "500",
      "--request-timeout-ms",
      "1000",
      "--max-connections",
      "3"
    ])
    const port = Number(server.url.port)
    const slow = net.connect(port, "127.0.0.1")
    const slowAnswer = new Promise<string>((resolve) => {
      let data = ""
      slow.on("data", (chunk) => (data += chunk.toString()))
      slow.on("close", () => resolve(data))
    })
    slow.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    expect(await slowAnswer).toMatch(/^HTTP\/1\.1 408|^$/)
    const open = await Promise.all([0, 1, 2].map(() =>
      new Promise<net.Socket>((resolve) => {
        const socket = net.connect(port, "127.0.0.1", () => resolve(socket))
      })
    ))
    const extra = net.connect(port, "127.0.0.1")
    const extraClosed = new Promise<string>((resolve) => {
      let data = ""
      extra.on("data", (chunk) => (data += chunk.toString()))
      extra.on("close", () => resolve(data))
      extra.on("error", () => undefined)
    })
    extra.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
    expect(await extraClosed).toBe("")
    for (const socket of open) socket.destroy()
  })
})
