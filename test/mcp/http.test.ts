import { Portable } from "@agent-terminal/tools"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { connectHttp, type HttpServer, mcpHeaders, startHttpServer, stopHttpServer } from "../support/http.js"
import { bodyOf, cliBin, expectToolContract, structured, textOf } from "../support/mcp.js"
import { alive } from "../support/terminal.js"

const waitUntil = async (condition: () => boolean, ms = 15_000) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

const servers: Array<HttpServer> = []
const clients: Array<Client> = []

const startServer = async (args: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const server = await startHttpServer(args, env)
  servers.push(server)
  return server
}

const connect = async (server: HttpServer) => {
  const connected = await connectHttp(server)
  clients.push(connected.client)
  return connected
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)))
  await Promise.all(servers.splice(0).map(stopHttpServer))
})

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args })

describe("MCP over Streamable HTTP with a real client", () => {
  it("lists the same tools, schemas and annotations as the in-process definitions", async () => {
    const server = await startServer()
    const { client, transport } = await connect(server)
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    const { tools } = await client.listTools()
    expectToolContract(tools)
    for (const definition of Portable.toolDefinitions()) {
      const listed = tools.find((tool) => tool.name === definition.name)
      expect(listed).toMatchObject({
        name: definition.name,
        description: definition.description,
        inputSchema: definition.inputSchema,
        annotations: definition.annotations
      })
    }
    expect(tools).toHaveLength(Portable.toolDefinitions().length)
  })

  it("runs the whole lifecycle: open → send → read → signal → close → list (37)", async () => {
    const server = await startServer()
    const { client } = await connect(server)
    const opened = await call(client, "terminal_open", { name: "lifecycle" })
    expect(opened.isError).toBeFalsy()
    const { pid, sessionId } = structured(opened)
    expect(textOf(opened)).toContain(`[session: ${sessionId}] [name: lifecycle]`)

    const sent = await call(client, "terminal_send", { sessionId, text: "cd / && echo \"hello from $PWD\"; (exit 3)" })
    expect(structured(sent)).toMatchObject({ waitReason: "prompt", exitCode: 3 })
    expect(bodyOf(sent)).toBe("hello from /")
    expect(textOf(sent)).toBe("[wait: prompt] [exit: 3]\nhello from /")

    const read = await call(client, "terminal_read", { sessionId })
    expect(bodyOf(read)).toContain("hello from /")

    const slow = await call(client, "terminal_send", { sessionId, text: "sleep 60", timeoutMs: 300 })
    expect(structured(slow).waitReason).toBe("timeout")
    expect(textOf(slow)).toContain("may still be running")
    const signalled = await call(client, "terminal_signal", { sessionId, signal: "SIGINT" })
    expect(structured(signalled).delivered).toBe(true)
    const back = await call(client, "terminal_send", { sessionId, text: "echo back" })
    expect(structured(back)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
    expect(bodyOf(back)).toBe("back")

    const listed = await call(client, "terminal_list")
    expect(structured(listed).sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([sessionId])

    const closed = await call(client, "terminal_close", { sessionId })
    expect(structured(closed)).toMatchObject({ sessionId, outcome: "closed", survivors: [] })
    expect(alive(pid)).toBe(false)
    expect(structured(await call(client, "terminal_list")).sessions).toEqual([])
  })

  it("answers every reachable error with isError, its _tag, its fields and a message", async () => {
    const server = await startServer()
    const { client } = await connect(server)
    const { client: other } = await connect(server)
    const expectError = (result: unknown, tag: string, fields: Record<string, unknown> = {}) => {
      expect((result as { isError?: boolean }).isError).toBe(true)
      expect(structured(result)).toMatchObject({ _tag: tag, ...fields })
      expect(typeof structured(result).message).toBe("string")
      expect(textOf(result)).toMatch(new RegExp(`^\\[error: ${tag}\\]`))
    }

    expectError(await call(client, "terminal_read", { count: 1 }), "InvalidInput", { field: "sessionId" })
    expectError(await call(client, "terminal_open", { cwd: "/no/such/dir" }), "InvalidInput", { field: "cwd" })
    expectError(await call(client, "terminal_send", { sessionId: "s-nosuchsession", text: "x" }), "SessionNotFound", {
      sessionId: "s-nosuchsession"
    })

    const { sessionId } = structured(await call(client, "terminal_open", { name: "dup" }))
    expectError(await call(client, "terminal_open", { name: "dup" }), "DuplicateName", { name: "dup", sessionId })
    expectError(await call(other, "terminal_send", { sessionId, text: "id" }), "ForeignSession", { sessionId })
    expectError(await call(client, "terminal_signal", { sessionId, signal: "SIGKILL" }), "SignalRefused", {
      sessionId,
      signal: "SIGKILL"
    })

    const background = await call(client, "terminal_send", { sessionId, text: "sleep 30", run_in_background: true })
    const taskId = structured(background).taskId
    expect(typeof taskId).toBe("string")
    expectError(await call(client, "terminal_send", { sessionId, text: "echo busy" }), "SendActive", {
      sessionId,
      taskId
    })
    expect(structured(await call(client, "terminal_signal", { sessionId, signal: "SIGINT" })).delivered).toBe(true)
    expect(structured(await call(client, "task_output", { taskId, wait: true }))).toMatchObject({
      status: "completed",
      result: { waitReason: "prompt", exitCode: 130 }
    })
    expectError(await call(client, "task_output", { taskId: "t-0000000000000000" }), "TaskNotFound")

    const exiting = structured(await call(client, "terminal_open", {}))
    const exited = await call(client, "terminal_send", { sessionId: exiting.sessionId, text: "exit 4" })
    expect(structured(exited)).toMatchObject({ waitReason: "session_exit", sessionStatus: { _tag: "exited" } })
    expectError(await call(client, "terminal_send", { sessionId: exiting.sessionId, text: "x" }), "SessionExited", {
      sessionId: exiting.sessionId
    })

    const broken = await startServer(["--shell", "/no/such/bash"])
    const { client: unlucky } = await connect(broken)
    expectError(await call(unlucky, "terminal_open", {}), "SpawnFailed", { command: "/no/such/bash" })

    const emptyBin = fs.mkdtempSync(path.join(os.tmpdir(), "at-no-bwrap-"))
    try {
      const unsandboxable = await startServer(["--sandbox", "read-only", "--workspace", os.tmpdir()], {
        PATH: emptyBin
      })
      const { client: confined } = await connect(unsandboxable)
      expectError(await call(confined, "terminal_open", {}), "SandboxUnavailable", { mode: "read-only" })
    } finally {
      fs.rmSync(emptyBin, { recursive: true, force: true })
    }
    // Not reachable here: CleanupFailed needs a process that survives SIGKILL and cgroup.kill (one stuck in
    // the kernel); InvalidConfig is refused at startup (see below), never per call.
  })

  it("keeps two concurrent clients apart: neither sees, reads, signals nor closes the other's sessions (36)", async () => {
    const server = await startServer()
    const a = await connect(server)
    const b = await connect(server)
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId)
    const [openedA, openedB] = await Promise.all([
      call(a.client, "terminal_open", { name: "same-name" }),
      call(b.client, "terminal_open", { name: "same-name" })
    ])
    const idA = structured(openedA).sessionId
    const idB = structured(openedB).sessionId
    const [sentA, sentB] = await Promise.all([
      call(a.client, "terminal_send", { sessionId: idA, text: "echo a" }),
      call(b.client, "terminal_send", { sessionId: idB, text: "echo b" })
    ])
    expect(bodyOf(sentA)).toBe("a")
    expect(bodyOf(sentB)).toBe("b")
    expect(structured(await call(a.client, "terminal_list")).sessions.map((s: any) => s.sessionId)).toEqual([idA])
    expect(structured(await call(b.client, "terminal_list")).sessions.map((s: any) => s.sessionId)).toEqual([idB])
    for (
      const [tool, args] of [
        ["terminal_read", {}],
        ["terminal_signal", { signal: "SIGINT" }],
        ["terminal_close", {}]
      ] as const
    ) {
      expect(structured(await call(b.client, tool, { sessionId: idA, ...args }))._tag).toBe("ForeignSession")
    }
    expect(bodyOf(await call(a.client, "terminal_send", { sessionId: idA, text: "echo still" })))
      .toBe("still")
  })

  it("closes an MCP session's terminals when the client terminates it, and only those", async () => {
    const server = await startServer()
    const leaving = await connect(server)
    const staying = await connect(server)
    const opened = structured(await call(leaving.client, "terminal_open", {}))
    const child = await call(leaving.client, "terminal_send", {
      sessionId: opened.sessionId,
      text: "sleep 300 & echo $!"
    })
    const childPid = Number(bodyOf(child).trim().split("\n").pop())
    const kept = structured(await call(staying.client, "terminal_open", {}))
    expect(alive(opened.pid) && alive(childPid) && alive(kept.pid)).toBe(true)

    await leaving.transport.terminateSession()
    expect(await waitUntil(() => !alive(opened.pid) && !alive(childPid))).toBe(true)
    expect(alive(kept.pid)).toBe(true)
    expect(
      bodyOf(await call(staying.client, "terminal_send", { sessionId: kept.sessionId, text: "echo ok" }))
    )
      .toBe("ok")
    await expect(call(leaving.client, "terminal_list")).rejects.toThrow(/404|not found|session/i)
  })

  it("closes an idle MCP session's terminals after --session-idle-ms", async () => {
    const server = await startServer(["--session-idle-ms", "1000"])
    const { client } = await connect(server)
    const opened = structured(await call(client, "terminal_open", {}))
    expect(await waitUntil(() => !alive(opened.pid))).toBe(true)
    expect(server.stderr.join("")).toContain("closed (idle)")
    await expect(call(client, "terminal_list")).rejects.toThrow()
  })

  it("closes every session when the server stops", async () => {
    const server = await startServer()
    const { client } = await connect(server)
    const opened = structured(await call(client, "terminal_open", {}))
    server.process.kill("SIGTERM")
    await server.exited
    expect(await waitUntil(() => !alive(opened.pid))).toBe(true)
  })

  it("bounds every result by --max-result-bytes, ids first", async () => {
    const server = await startServer(["--max-result-bytes", "64"])
    const { client } = await connect(server)
    const opened = await call(client, "terminal_open", { name: "n".repeat(100) })
    const { sessionId } = structured(opened)
    expect(Buffer.byteLength(textOf(opened))).toBeLessThanOrEqual(64)
    expect(textOf(opened)).toContain(sessionId)
    const sent = await call(client, "terminal_send", { sessionId, text: "seq 1 5000" })
    expect(Buffer.byteLength(textOf(sent))).toBeLessThanOrEqual(64)
    expect(textOf(sent)).toMatch(/^\[wait: prompt\] \[exit: 0\]/)
    const missing = await call(client, "terminal_send", { sessionId: `s-${"x".repeat(12)}`, text: "x" })
    expect(Buffer.byteLength(textOf(missing))).toBeLessThanOrEqual(64)
    expect(textOf(missing)).toContain("s-xxxxxxxxxxxx")
  })

  it("speaks the transport's rules: 405 for GET, 400 without a session, 404 for an unknown one, 403 for a foreign origin", async () => {
    const server = await startServer()
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(server.url, { method: "POST", headers: mcpHeaders(server, headers), body: JSON.stringify(body) })
    const authorization = { authorization: `Bearer ${server.token}` }
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" }
    expect((await fetch(server.url, { headers: authorization })).status).toBe(405)
    expect((await post(list)).status).toBe(400)
    expect((await post(list, { "mcp-session-id": "no-such-session" })).status).toBe(404)
    expect(
      (await fetch(server.url, { method: "DELETE", headers: { ...authorization, "mcp-session-id": "nope" } })).status
    ).toBe(404)
    expect((await post(list, { origin: "http://evil.example" })).status).toBe(403)
  })

  it("refuses invalid settings at startup, naming the field, with exit code 2", async () => {
    const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [cliBin, "mcp", ...args], {
          env: { ...process.env, ...env },
          stdio: ["ignore", "ignore", "pipe"]
        })
        let stderr = ""
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
        child.once("exit", (code) => resolve({ code, stderr }))
      })
    const small = await run(["--http", "0"], { AGENT_TERMINAL_MAX_RESULT_BYTES: "10" })
    expect(small.code).toBe(2)
    expect(small.stderr).toContain("maxResultBytes")
    expect(small.stderr).toContain("AGENT_TERMINAL_MAX_RESULT_BYTES")
    const negative = await run(["--timeout-ms=-5"], {})
    expect(negative.code).toBe(2)
    expect(negative.stderr).toContain("timeoutMs")
    const port = await run(["--http", "70000"], {})
    expect(port.code).toBe(2)
    expect(port.stderr).toContain("--http")
  })
})
