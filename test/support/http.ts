import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import { cliBin } from "./mcp.js"

/** A running `agent-terminal mcp --http` and the token it accepts. */
export interface HttpServer {
  readonly url: URL
  readonly token: string
  readonly process: ChildProcess
  readonly stderr: Array<string>
  readonly exited: Promise<number | null>
}

/** A fresh token (what `AGENT_TERMINAL_TOKEN` takes). */
export const newToken = () => crypto.randomBytes(32).toString("base64url")

/**
 * `agent-terminal mcp --http 0` (any free loopback port) with `AGENT_TERMINAL_TOKEN` set, unless `env` says
 * otherwise; the address is read from its stderr.
 */
export const startHttpServer = async (
  args: ReadonlyArray<string> = [],
  env: Record<string, string | undefined> = {},
  options: { readonly token?: string | undefined } = {}
): Promise<HttpServer> => {
  const token = options.token ?? newToken()
  const child = spawn(process.execPath, [cliBin, "mcp", "--http", "0", "--idle-silence-ms", "1500", ...args], {
    env: { ...process.env, AGENT_TERMINAL_TOKEN: token, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const stderr: Array<string> = []
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const url = await new Promise<URL>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr.push(chunk.toString("utf8"))
      const found = /at (http:\/\/\S+\/mcp)/.exec(stderr.join(""))
      if (found !== null) resolve(new URL(found[1]!))
    })
    void exited.then((code) => reject(new Error(`server exited (${code}): ${stderr.join("")}`)))
  })
  return { url, token, process: child, stderr, exited }
}

/** Stop a server (SIGTERM) and wait for it to exit. */
export const stopHttpServer = async (server: HttpServer) => {
  if (server.process.exitCode === null && server.process.signalCode === null) server.process.kill("SIGTERM")
  await server.exited
}

/** A real MCP client over Streamable HTTP, sending the server's token. */
export const connectHttp = async (server: HttpServer, token: string = server.token) => {
  const transport = new StreamableHTTPClientTransport(server.url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } }
  })
  const client = new Client({ name: "agent-terminal-http-tests", version: "0.0.0" })
  await client.connect(transport)
  return { client, transport }
}

/** The headers a well-formed MCP POST carries, with the server's token. */
export const mcpHeaders = (server: HttpServer, extra: Record<string, string> = {}): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  authorization: `Bearer ${server.token}`,
  ...extra
})

/** The initialize request of a raw client. */
export const initialize = (id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
})

/** A raw request with `node:http` (to send what `fetch` refuses to: any `Host`, any body). */
export const rawRequest = (
  url: URL,
  options: {
    readonly method?: string
    readonly headers?: Record<string, string | number>
    readonly body?: string | Buffer
    /** The request target exactly as sent (default: the URL's path). */
    readonly path?: string
  }
) =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const requestOptions = {
      method: options.method ?? "POST",
      headers: options.headers ?? {},
      ...(options.path !== undefined ? { path: options.path } : {})
    }
    const request = http.request(url, requestOptions, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
    })
    request.on("error", reject)
    request.end(options.body)
  })

/** The resident set size of a process in bytes, from `/proc/<pid>/status`. */
export const rssBytes = (pid: number): number => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)
  return Number(kib?.[1] ?? 0) * 1024
}
