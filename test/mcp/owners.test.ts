/**
 * Who owns the terminals of an HTTP client (issue 30): a client that names its owner (`Agent-Terminal-Owner`,
 * with the bearer token) finds its terminals again in a new MCP session — after a `DELETE`, or after its old
 * session expired — while another owner's session is refused with a `ForeignSession` that says how ownership
 * is decided; an anonymous session that its client abandons (no `DELETE`, as the Inspector CLI does) takes
 * its terminals with it at the session's expiry.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  type HttpServer,
  initialize,
  mcpHeaders,
  rawRequest,
  startHttpServer,
  stopHttpServer
} from "../support/http.js"
import { structured, textOf } from "../support/mcp.js"
import { alive } from "../support/terminal.js"

const servers: Array<HttpServer> = []
const clients: Array<Client> = []

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)))
  await Promise.all(servers.splice(0).map(stopHttpServer))
})

const start = async (args: ReadonlyArray<string> = []) => {
  const server = await startHttpServer(args)
  servers.push(server)
  return server
}

const connect = async (server: HttpServer, owner?: string) => {
  const transport = new StreamableHTTPClientTransport(server.url, {
    requestInit: {
      headers: {
        Authorization: `Bearer ${server.token}`,
        ...(owner === undefined ? {} : { "Agent-Terminal-Owner": owner })
      }
    }
  })
  const client = new Client({ name: "owners-test", version: "0" })
  await client.connect(transport)
  clients.push(client)
  return { client, transport }
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args })

const waitUntil = async (condition: () => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

describe("owners over HTTP", () => {
  it("a client that reconnects as the same named owner continues its terminal; another owner cannot", async () => {
    const server = await start()
    const first = await connect(server, "alice")
    const { pid, sessionId } = structured(await call(first.client, "terminal_open", { name: "work" }))
    await call(first.client, "terminal_send", { sessionId, text: "export KEEP=still-here; cd /tmp" })
    // a clean goodbye: the MCP session ends, the owner's terminal does not
    await first.transport.terminateSession()
    expect(alive(pid)).toBe(true)

    const again = await connect(server, "alice")
    expect(again.transport.sessionId).not.toBe(first.transport.sessionId)
    const listed = structured(await call(again.client, "terminal_list")).sessions
    expect(listed.map((session: { sessionId: string }) => session.sessionId)).toEqual([sessionId])
    const sent = await call(again.client, "terminal_send", { sessionId, text: "echo $KEEP $PWD" })
    expect(structured(sent)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
    expect(textOf(sent)).toContain("still-here /tmp")

    const bob = await connect(server, "bob")
    expect(structured(await call(bob.client, "terminal_list")).sessions).toEqual([])
    const refused = await call(bob.client, "terminal_send", { sessionId, text: "id" })
    expect(refused.isError).toBe(true)
    expect(structured(refused)).toMatchObject({ _tag: "ForeignSession", sessionId })
    expect(structured(refused).message).toContain("Agent-Terminal-Owner")
    const anonymous = await connect(server)
    expect(structured(await call(anonymous.client, "terminal_send", { sessionId, text: "id" }))).toMatchObject({
      _tag: "ForeignSession"
    })
    expect(alive(pid)).toBe(true)
  })

  it("terminals of an anonymous, abandoned MCP session close at its expiry; a named owner's outlive theirs", async () => {
    const server = await start(["--session-idle-ms", "1500"])
    // the Inspector CLI's way: initialize, one call, never a DELETE
    const anonymous = await connect(server)
    const lost = structured(await call(anonymous.client, "terminal_open", {})).pid
    const named = await connect(server, "carol")
    const kept = structured(await call(named.client, "terminal_open", { name: "kept" }))
    // both sessions are abandoned: no request, no DELETE
    expect(await waitUntil(() => !alive(lost))).toBe(true)
    expect(await waitUntil(() => (server.stderr.join("").match(/closed \(idle\)/g) ?? []).length >= 2)).toBe(true)
    expect(alive(kept.pid)).toBe(true)
    const back = await connect(server, "carol")
    const sent = await call(back.client, "terminal_send", { sessionId: kept.sessionId, text: "echo back" })
    expect(textOf(sent)).toContain("back")
    await call(back.client, "terminal_close", { sessionId: kept.sessionId })
    expect(alive(kept.pid)).toBe(false)
  })

  it("a named owner's terminals close once it has had no MCP session for --owner-idle-ms", async () => {
    const server = await start(["--session-idle-ms", "1000", "--owner-idle-ms", "1500"])
    const { client } = await connect(server, "dave")
    const { pid } = structured(await call(client, "terminal_open", {}))
    expect(await waitUntil(() => !alive(pid))).toBe(true)
    expect(server.stderr.join("")).toContain("owner dave closed (no MCP session of it for ownerIdleMs)")
  })

  it("an owner name outside the allowed form is refused before a session opens", async () => {
    const server = await start()
    for (const name of ["", "-leading", "a".repeat(65), "has space", "x/y"]) {
      const response = await rawRequest(server.url, {
        headers: mcpHeaders(server, { "agent-terminal-owner": name }),
        body: JSON.stringify(initialize(3))
      })
      expect(response.status).toBe(400)
      expect(JSON.parse(response.body)).toMatchObject({ id: 3, error: { message: expect.stringContaining("owner") } })
      expect(response.headers["mcp-session-id"]).toBeUndefined()
    }
  })
})
