/**
 * The baselines of the `mcp` group: the official TypeScript SDK's MCP server with one tool that does
 * nothing — what an MCP call costs with no work in it, on the same machine, in the same run. Over stdio
 * (no argument), or over Streamable HTTP on a loopback port (`http`: the SDK's Node transport, JSON
 * responses as ours, its address printed on stderr). Its second tool, `pty_true`, is the floor of a
 * `true` over MCP: it writes `true` to a raw bash on node-pty and answers when the bash's prompt is back —
 * a pty round trip with no library in it, behind the SDK's server.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { RawTerminal } from "./RawPty.js"

const server = new McpServer({ name: "sdk-noop", version: "0.0.0" })
server.registerTool("noop", { description: "Does nothing." }, () => ({ content: [{ type: "text", text: "ok" }] }))
let bash: RawTerminal | undefined
server.registerTool("pty_true", { description: "true on a raw bash." }, async () => {
  if (bash === undefined) {
    // loaded at the first call: the no-op server's start (the lean group's cold-start floor) holds no pty
    const { RawTerminal } = await import("./RawPty.js")
    bash = RawTerminal.bash()
    await bash.next()
  }
  await bash.roundTrip("true\r")
  return { content: [{ type: "text", text: "ok" }] }
})
process.once("exit", () => {
  if (bash !== undefined) process.kill(-bash.pty.pid, "SIGKILL")
})

if (process.argv[2] === "http") {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    enableJsonResponse: true
  })
  await server.connect(transport)
  const listener = http.createServer((request, response) => {
    void transport.handleRequest(request, response)
  })
  listener.listen(0, "127.0.0.1", () => {
    process.stderr.write(`sdk-noop at http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp\n`)
  })
} else {
  await server.connect(new StdioServerTransport())
}
