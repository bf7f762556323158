/**
 * The protocol as the newest MCP clients speak it (issue 30): every JSON-RPC error with the request's own id
 * and the specification's code, over raw stdio and raw HTTP; `initialize` answering 2025-11-25; progress
 * notifications while a call waits; and the official TypeScript SDK clients — 1.x, and 2.x with version
 * negotiation on (it probes `server/discover` first) — connecting without waiting out a timeout, and keeping
 * a call longer than their request timeout alive with `resetTimeoutOnProgress`.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Client as Client2 } from "@modelcontextprotocol/client"
import { StreamableHTTPClientTransport as HttpTransport2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioTransport2 } from "@modelcontextprotocol/client/stdio"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import {
  type HttpServer,
  initialize,
  mcpHeaders,
  rawRequest,
  startHttpServer,
  stopHttpServer
} from "../support/http.js"
import { cliBin, structured, textOf } from "../support/mcp.js"

type Message = Record<string, any>

/**
 * Raw lines to `agent-terminal mcp` on stdio; every message it wrote, until `done` says enough (then stdin
 * ends and the server exits).
 */
const rawStdio = (
  lines: ReadonlyArray<unknown>,
  done: (messages: ReadonlyArray<Message>) => boolean,
  args: ReadonlyArray<string> = []
) =>
  new Promise<Array<Message>>((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, "mcp", ...args], { stdio: ["pipe", "pipe", "ignore"] })
    let out = ""
    const messages: Array<Message> = []
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      let newline = out.indexOf("\n")
      while (newline !== -1) {
        messages.push(JSON.parse(out.slice(0, newline)))
        out = out.slice(newline + 1)
        newline = out.indexOf("\n")
      }
      if (done(messages)) child.stdin.end()
    })
    child.once("exit", () => resolve(messages))
    child.once("error", reject)
    for (const line of lines) child.stdin.write(`${typeof line === "string" ? line : JSON.stringify(line)}\n`)
  })

const init = (id: string | number, protocolVersion = "2025-06-18") => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } }
})

const byId = (messages: ReadonlyArray<Message>, id: string | number) =>
  messages.find((message) => message.id === id && ("result" in message || "error" in message))

const answered = (...ids: Array<string | number>) => (messages: ReadonlyArray<Message>) =>
  ids.every((id) => byId(messages, id) !== undefined)

/** A command that prints a line a second for `seconds` seconds, then `done`. */
const build = (seconds: number) => `for i in $(seq 1 ${seconds}); do echo step $i; sleep 1; done; echo done`

describe("JSON-RPC over raw stdio", () => {
  it("every error carries its request's id and the specification's code; 2025-11-25 is negotiated", async () => {
    const messages = await rawStdio([
      { jsonrpc: "2.0", id: "probe-1", method: "server/discover", params: {} },
      "{not json",
      init(0, "2025-11-25"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", method: "notifications/unknown-to-this-server" },
      { jsonrpc: "2.0", id: "list-a", method: "tools/list" },
      { jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: 5 } },
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "no_such_tool", arguments: {} } },
      { jsonrpc: "2.0", id: 9, method: "resources/templates/nope" },
      { jsonrpc: "2.0", id: "call-s", method: "tools/call", params: { name: "terminal_list", arguments: {} } },
      { jsonrpc: "2.0", id: 10, method: "tools/call", params: "not an object" },
      init(11, "2099-01-01")
    ], answered("probe-1", 0, "list-a", 7, 8, 9, "call-s", 10, 11))
    expect(byId(messages, "probe-1")).toEqual({
      jsonrpc: "2.0",
      id: "probe-1",
      error: { code: -32601, message: "Method not found: server/discover" }
    })
    expect(messages.find((message) => message.id === null)).toMatchObject({ error: { code: -32700 } })
    expect(byId(messages, 0)).toMatchObject({ result: { protocolVersion: "2025-11-25" } })
    expect(byId(messages, 0)!.result.instructions).toContain("agent-terminal")
    expect(byId(messages, "list-a")!.result.tools.length).toBeGreaterThan(0)
    expect(byId(messages, 7)).toMatchObject({ error: { code: -32602 } })
    expect(byId(messages, 8)).toMatchObject({ error: { code: -32602 } })
    expect(byId(messages, 8)!.error.message).toContain("no_such_tool")
    expect(byId(messages, 9)).toMatchObject({ error: { code: -32601 } })
    expect(byId(messages, "call-s")).toMatchObject({ result: { isError: false, structuredContent: {} } })
    expect(byId(messages, 10)).toMatchObject({ error: { code: -32602 } })
    // a version this server does not speak: it answers the newest it does
    expect(byId(messages, 11)).toMatchObject({ result: { protocolVersion: "2025-11-25" } })
    // nothing answered the notifications, and every error fits in a short line
    for (const message of messages) {
      expect(message.jsonrpc).toBe("2.0")
      if ("error" in message) expect(JSON.stringify(message).length).toBeLessThan(1024)
    }
  })

  it("a long send with a progressToken gets progress notifications before its result", async () => {
    const call = {
      jsonrpc: "2.0",
      id: "build",
      method: "tools/call",
      params: { name: "terminal_send", arguments: { text: build(3) }, _meta: { progressToken: "tok-1" } }
    }
    const messages = await rawStdio([init(1), call], answered("build"), ["--progress-interval-ms", "300"])
    const result = messages.findIndex((message) => message.id === "build")
    const progress = messages.filter((message) => message.method === "notifications/progress")
    expect(progress.length).toBeGreaterThanOrEqual(2)
    expect(messages.indexOf(progress[0]!)).toBeLessThan(result)
    expect(messages.indexOf(progress[progress.length - 1]!)).toBeLessThan(result)
    const values = progress.map((message) => message.params.progress)
    expect(values).toEqual([...values].sort((a, b) => a - b))
    expect(new Set(values).size).toBe(values.length)
    for (const message of progress) {
      expect(message.params.progressToken).toBe("tok-1")
      expect(message.params.message).toMatch(/^waiting, \d+ s/)
    }
    expect(messages[result]!.result.content[0].text).toContain("done")
  })

  it("a cancel names the call by its own id, a string or a number; the other call runs on", async () => {
    const send = (id: string | number, text: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "exec", arguments: { command: text } }
    })
    const messages = await rawStdio([
      init("init"),
      send("1", "sleep 30"),
      send(1, "sleep 1; echo number-one"),
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "1", reason: "test" } }
    ], answered("init", 1))
    // the cancelled call answers nothing; the call with the number id 1 was not the one cancelled
    expect(byId(messages, 1)!.result.content[0].text).toContain("number-one")
    expect(byId(messages, "1")).toBeUndefined()
  })
})

describe("JSON-RPC over raw HTTP", () => {
  const servers: Array<HttpServer> = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(stopHttpServer))
  })
  const start = async (args: ReadonlyArray<string> = []) => {
    const server = await startHttpServer(args)
    servers.push(server)
    return server
  }

  it("every error carries its request's id and the specification's code, in a session and before one", async () => {
    const server = await start()
    const post = (body: unknown, extra: Record<string, string> = {}) =>
      rawRequest(server.url, {
        headers: mcpHeaders(server, extra),
        body: typeof body === "string" ? body : JSON.stringify(body)
      })
    const probe = await post({ jsonrpc: "2.0", id: "probe-1", method: "server/discover", params: {} })
    expect(probe.status).toBe(200)
    expect(JSON.parse(probe.body)).toEqual({
      jsonrpc: "2.0",
      id: "probe-1",
      error: { code: -32601, message: "Method not found: server/discover" }
    })
    const noSession = await post({ jsonrpc: "2.0", id: 5, method: "tools/list" })
    expect(noSession.status).toBe(400)
    expect(JSON.parse(noSession.body)).toMatchObject({ id: 5 })
    const parse = await post("{not json")
    expect(parse.status).toBe(400)
    expect(JSON.parse(parse.body)).toMatchObject({ id: null, error: { code: -32700 } })
    const opened = await post({ ...initialize(0), params: { ...initialize(0).params, protocolVersion: "2025-11-25" } })
    expect(JSON.parse(opened.body)).toMatchObject({ id: 0, result: { protocolVersion: "2025-11-25" } })
    const session = { "mcp-session-id": String(opened.headers["mcp-session-id"]) }
    const inSession = (body: unknown) => post(body, { ...session, "mcp-protocol-version": "2025-11-25" })
    expect(JSON.parse((await inSession({ jsonrpc: "2.0", id: "x", method: "server/discover" })).body)).toMatchObject({
      id: "x",
      error: { code: -32601 }
    })
    expect(
      JSON.parse((await inSession({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: 1 } })).body)
    ).toMatchObject({ id: 6, error: { code: -32602 } })
    expect(JSON.parse((await inSession({ jsonrpc: "2.0", id: "l", method: "tools/list" })).body)).toMatchObject({
      id: "l",
      result: { tools: expect.any(Array) }
    })
    const unknown = await post({ jsonrpc: "2.0", id: 9, method: "tools/list" }, { "mcp-session-id": "nope" })
    expect(unknown.status).toBe(404)
    expect(JSON.parse(unknown.body)).toMatchObject({ id: 9 })
  })

  it("notifications/cancelled interrupts a tool call in flight: its program is stopped, its request answers 202", async () => {
    const server = await start()
    const opened = await rawRequest(server.url, { headers: mcpHeaders(server), body: JSON.stringify(initialize(1)) })
    const headers = mcpHeaders(server, { "mcp-session-id": String(opened.headers["mcp-session-id"]) })
    const seconds = 300 + Math.floor(Math.random() * 600)
    const running = rawRequest(server.url, {
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "long",
        method: "tools/call",
        params: { name: "exec", arguments: { command: `sleep ${seconds}` } }
      })
    })
    const sleeping = () =>
      fs.readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).some((pid) => {
        try {
          return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8") === `sleep\0${seconds}\0`
        } catch {
          return false
        }
      })
    const deadline = Date.now() + 15_000
    while (!sleeping() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(sleeping()).toBe(true)
    const cancel = await rawRequest(server.url, {
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "long" } })
    })
    expect(cancel.status).toBe(202)
    expect((await running).status).toBe(202)
    const gone = Date.now() + 15_000
    while (sleeping() && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(sleeping()).toBe(false)
  })

  it("a long send with a progressToken is answered as a stream: progress notifications, then its result", async () => {
    const server = await start(["--progress-interval-ms", "300"])
    const opened = await rawRequest(server.url, { headers: mcpHeaders(server), body: JSON.stringify(initialize(1)) })
    const response = await rawRequest(server.url, {
      headers: mcpHeaders(server, { "mcp-session-id": String(opened.headers["mcp-session-id"]) }),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "build",
        method: "tools/call",
        params: { name: "terminal_send", arguments: { text: build(3) }, _meta: { progressToken: 42 } }
      })
    })
    expect(response.headers["content-type"]).toContain("text/event-stream")
    const events = response.body.split("\n\n").filter((event) => event.trim() !== "").map((event) =>
      JSON.parse(event.split("\n").find((line) => line.startsWith("data: "))!.slice("data: ".length))
    )
    const last = events[events.length - 1]!
    expect(last).toMatchObject({ id: "build", result: { isError: false } })
    const progress = events.slice(0, -1)
    expect(progress.length).toBeGreaterThanOrEqual(2)
    for (const event of progress) {
      expect(event).toMatchObject({ method: "notifications/progress", params: { progressToken: 42 } })
    }
  })
})

describe("the official TypeScript SDK clients", () => {
  const servers: Array<HttpServer> = []
  const closers: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close().catch(() => undefined)))
    await Promise.all(servers.splice(0).map(stopHttpServer))
  })

  // The probe's own timeout is far beyond the test's: a client that had to wait it out fails the test.
  const negotiation = { versionNegotiation: { mode: "auto" as const, probe: { timeoutMs: 600_000 } } }

  it("2.x with version negotiation on, over stdio: connects without waiting out its probe, 2025-11-25", async () => {
    const client = new Client2({ name: "sdk2", version: "0" }, negotiation)
    await client.connect(new StdioTransport2({ command: process.execPath, args: [cliBin, "mcp"], stderr: "ignore" }))
    closers.push(() => client.close())
    expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25")
    const result = await client.callTool({ name: "terminal_list", arguments: {} })
    expect(result.isError).toBe(false)
  }, 60_000)

  it("2.x with version negotiation on, over HTTP: connects without waiting out its probe", async () => {
    const server = await startHttpServer()
    servers.push(server)
    const client = new Client2({ name: "sdk2", version: "0" }, negotiation)
    await client.connect(
      new HttpTransport2(server.url, { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } })
    )
    closers.push(() => client.close())
    expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25")
    expect((await client.callTool({ name: "terminal_list", arguments: {} })).isError).toBe(false)
  }, 60_000)

  // A 6 s build through a 3 s request timeout that resets on progress (the documented default of a 90 s build
  // through a 60 s timeout, shortened with a 500 ms progress interval).
  const longCall = { timeout: 3000, resetTimeoutOnProgress: true }

  it(
    "1.x over stdio and over HTTP: a 6 s build completes through a 3 s request timeout that resets on progress",
    async () => {
      const overStdio = new Client({ name: "sdk1", version: "0" })
      await overStdio.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [cliBin, "mcp", "--progress-interval-ms", "500"],
          stderr: "ignore"
        })
      )
      closers.push(() => overStdio.close())
      const server = await startHttpServer(["--progress-interval-ms", "500"])
      servers.push(server)
      const overHttp = new Client({ name: "sdk1", version: "0" })
      await overHttp.connect(
        new StreamableHTTPClientTransport(server.url, {
          requestInit: { headers: { Authorization: `Bearer ${server.token}` } }
        })
      )
      closers.push(() => overHttp.close())
      for (const client of [overStdio, overHttp]) {
        const opened = await client.callTool({ name: "terminal_open", arguments: {} })
        const sessionId = structured(opened).sessionId
        const progress: Array<unknown> = []
        const result = await client.callTool(
          { name: "terminal_send", arguments: { sessionId, text: build(6) } },
          undefined,
          { ...longCall, onprogress: (value) => progress.push(value) }
        )
        expect(textOf(result)).toContain("[wait: prompt] [exit: 0]")
        expect(textOf(result)).toContain("step 6")
        expect(progress.length).toBeGreaterThanOrEqual(4)
        // the messages count the build's new lines and say what its foreground program is doing
        const messages = progress.map((value) => (value as { message: string }).message)
        expect(messages.some((message) => /; [1-6] new lines? of output/.test(message))).toBe(true)
        expect(messages.some((message) => /foreground: sleep \(pid \d+\) sleeping/.test(message))).toBe(true)
        // without progress, the same client gives up at its timeout (and its cancel interrupts the build)
        await expect(
          client.callTool({ name: "terminal_send", arguments: { sessionId, text: build(6) } }, undefined, {
            timeout: 3000
          })
        ).rejects.toThrow(/timed out/i)
      }
    },
    120_000
  )

  it("2.x over stdio: a 6 s build completes through a 3 s request timeout that resets on progress", async () => {
    const client = new Client2({ name: "sdk2", version: "0" }, negotiation)
    await client.connect(
      new StdioTransport2({
        command: process.execPath,
        args: [cliBin, "mcp", "--progress-interval-ms", "500"],
        stderr: "ignore"
      })
    )
    closers.push(() => client.close())
    const progress: Array<unknown> = []
    const result = await client.callTool({ name: "exec", arguments: { command: build(6) } }, {
      ...longCall,
      onprogress: (value: unknown) => progress.push(value)
    })
    expect(textOf(result)).toContain("step 6")
    expect(progress.length).toBeGreaterThanOrEqual(4)
  }, 120_000)
})
