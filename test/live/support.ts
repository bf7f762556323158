import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { makeHome, startDaemon, waitUntil } from "../daemon/support.js"
import { newToken, startHttpServer, stopHttpServer } from "../support/http.js"
import { structured, textOf } from "../support/mcp.js"

/** A server that owns terminals and serves MCP and the live view over HTTP. */
export interface LiveServer {
  readonly kind: "mcp --http" | "serve --http"
  readonly base: string
  readonly token: string
  readonly stateDir: string
  readonly log: () => string
  readonly stop: () => Promise<void>
}

/** `agent-terminal mcp --http 0` with its own state directory. */
export const startMcpHttp = async (args: ReadonlyArray<string> = []): Promise<LiveServer> => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "at-live-"))
  const server = await startHttpServer(args, { AGENT_TERMINAL_STATE_DIR: stateDir })
  return {
    kind: "mcp --http",
    base: server.url.origin,
    token: server.token,
    stateDir,
    log: () => server.stderr.join(""),
    stop: async () => {
      await stopHttpServer(server)
      fs.rmSync(stateDir, { recursive: true, force: true })
    }
  }
}

/** `agent-terminal serve --http 0` (the daemon) with its own state directory and socket. */
export const startServeHttp = async (args: ReadonlyArray<string> = []): Promise<LiveServer> => {
  const home = makeHome()
  const token = newToken()
  const daemon = await startDaemon({ ...home.env, AGENT_TERMINAL_TOKEN: token }, ["--http", "0", ...args])
  await waitUntil(() => /at (http:\/\/\S+)\/mcp/.test(daemon.log()))
  const base = /at (http:\/\/\S+)\/mcp/.exec(daemon.log())![1]!
  return {
    kind: "serve --http",
    base,
    token,
    stateDir: home.env.AGENT_TERMINAL_STATE_DIR!,
    log: daemon.log,
    stop: async () => {
      await daemon.stop()
      home.dispose()
    }
  }
}

/** A real MCP client of the server (an agent). */
export const agentOf = async (server: LiveServer) => {
  const client = new Client({ name: "live-view-agent", version: "0.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${server.token}` } }
    })
  )
  const call = async (name: string, args: Record<string, unknown> = {}, timeout = 60_000) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout })
    return { result, structured: structured(result), text: textOf(result), isError: result.isError === true }
  }
  return { client, call }
}

/**
 * A WebSocket handshake with raw headers, over a plain TCP connection: the status the server answers with
 * (101: upgraded).
 */
export const upgradeStatus = (url: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    const target = new URL(url)
    const socket = net.connect(Number(target.port), target.hostname, () => {
      const lines = [
        `GET ${target.pathname}${target.search} HTTP/1.1`,
        `Host: ${target.host}`,
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 13",
        `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString("base64")}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
      ]
      socket.write(`${lines.join("\r\n")}\r\n\r\n`)
    })
    let received = ""
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1")
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)
      if (status !== null) {
        socket.destroy()
        resolve(Number(status[1]))
      }
    })
    socket.on("error", reject)
    socket.on("close", () => reject(new Error(`closed without an answer: ${JSON.stringify(received)}`)))
  })

/** Where the test run's screenshots go: `AGENT_TERMINAL_SCREENSHOTS` (e.g. docs/images), else build/. */
export const screenshotDir = () => {
  const dir = process.env.AGENT_TERMINAL_SCREENSHOTS ?? path.resolve(__dirname, "../../build")
  fs.mkdirSync(dir, { recursive: true })
  return dir
}
