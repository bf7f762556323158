import { afterEach, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { initialize, newToken } from "../support/http.js"
import { bodyOf, structured } from "../support/mcp.js"
import { built, makeHome, startDaemon, waitUntil } from "./support.js"

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe.runIf(built)("serve --http: MCP from the daemon's terminals, behind the same guard as mcp --http", () => {
  it("refuses a request without the bearer token or from another origin; serves one that has it", async () => {
    const made = makeHome()
    cleanups.push(made.dispose)
    const token = newToken()
    const daemon = await startDaemon({ ...made.env, AGENT_TERMINAL_TOKEN: token }, ["--http", "0"])
    cleanups.push(() => daemon.stop())
    await waitUntil(() => /at (http:\/\/\S+\/mcp)/.test(daemon.log()))
    const url = new URL(/at (http:\/\/\S+\/mcp)/.exec(daemon.log())![1]!)
    const post = (headers: Record<string, string>) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(initialize())
      })
    expect((await post({})).status).toBe(401)
    expect((await post({ authorization: `Bearer ${newToken()}` })).status).toBe(401)
    expect((await post({ authorization: `Bearer ${token}`, origin: "http://localhost:3000" })).status).toBe(403)

    const client = new Client({ name: "daemon-http-test", version: "0.0.0" })
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
    )
    cleanups.push(() => client.close())
    const { sessionId } = structured(await client.callTool({ name: "terminal_open", arguments: {} }))
    const sent = await client.callTool({
      name: "terminal_send",
      arguments: { sessionId, text: "echo from-the-daemon" }
    })
    expect(structured(sent)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
    expect(bodyOf(sent)).toBe("from-the-daemon")
    expect(daemon.log()).not.toContain(token)
  })
})
