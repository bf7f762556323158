/**
 * The MCP path (issue 19): what the transport adds to a call. The official SDK's server answering a
 * no-op tool over stdio is the baseline; ours answers `terminal_list` (no pty work) and `true` over stdio,
 * and `true` over Streamable HTTP with the bearer token; `true` in process (`PtyService.send`) is the
 * other baseline. The same SDK client drives every server, in blocks interleaved in one run, and each
 * server's own CPU per call is read from `/proc`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import { fileURLToPath } from "node:url"
import type { Group, RunOptions } from "./Harness.js"
import { guard, openShell, promise, size, timed, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, compare, distribution } from "./Metric.js"
import * as NodeFetch from "./NodeFetch.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "mcp"
/**
 * The CLI's bundle, `apps/cli/dist/bin.js` (from the bench's `src/` and `dist/` alike): what a user runs is
 * what the bench measures.
 */
export const cliBin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))

/** The official SDK's no-op server, unbundled (`dist/sdk`, see scripts/bundle.mjs). */
export const sdkServer = fileURLToPath(new URL("./sdk/SdkNoopServer.js", import.meta.url))

/** A client connected to a server process. */
export interface Connection {
  readonly client: Client
  readonly pid: number
  readonly close: () => Promise<void>
}

/** A real MCP client (the official SDK's) over stdio to `node <args>`. */
export const stdio = async (
  args: ReadonlyArray<string>,
  env?: Record<string, string>
): Promise<Connection> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...args],
    stderr: "ignore",
    ...(env === undefined ? {} : { env })
  })
  const client = new Client({ name: "agent-terminal-bench", version: "0.0.0" })
  await client.connect(transport)
  return { client, pid: transport.pid!, close: () => client.close() }
}

/**
 * `agent-terminal mcp --http 0` with a fresh token, and a client that sends it — over `NodeFetch`, or over
 * the global `fetch` (undici) when `globalFetch`.
 */
const http = async (globalFetch: boolean, sdk = false): Promise<Connection> => {
  const token = crypto.randomBytes(32).toString("base64url")
  const child = spawn(process.execPath, sdk ? [sdkServer, "http"] : [cliBin, "mcp", "--http", "0"], {
    env: { ...process.env, AGENT_TERMINAL_TOKEN: token },
    stdio: ["ignore", "ignore", "pipe"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const url = await new Promise<URL>((resolve, reject) => {
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
      const found = /at (http:\/\/\S+\/mcp)/.exec(stderr)
      if (found !== null) resolve(new URL(found[1]!))
    })
    void exited.then(() => reject(new Error(`the HTTP server exited: ${stderr.slice(0, 300)}`)))
  })
  const node = NodeFetch.make()
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    ...(globalFetch ? {} : { fetch: node.fetch })
  })
  const client = new Client({ name: "agent-terminal-bench", version: "0.0.0" })
  await client.connect(transport)
  return {
    client,
    pid: child.pid!,
    close: async () => {
      await transport.terminateSession().catch(() => undefined)
      await client.close()
      node.close()
      child.kill("SIGTERM")
      await exited
    }
  }
}

interface Series {
  readonly samples: Array<number>
  cpuMs: number
  calls: number
}

const series = (): Series => ({ samples: [], cpuMs: 0, calls: 0 })

/** An empty series for each row of the group. */
const seriesOfEachRow = () => ({
  sdk: series(),
  sdkHttp: series(),
  sdkPty: series(),
  list: series(),
  inProcess: series(),
  stdioTrue: series(),
  httpTrue: series(),
  fetchTrue: series()
})

/** `n` calls of a tool, timed one by one; the server's CPU over them added to `into` (when measured). */
const calls = (
  connection: Connection,
  name: string,
  args: Record<string, unknown>,
  n: number,
  into?: Series
) =>
  promise(async () => {
    const before = Proc.stat(connection.pid)?.cpuMs ?? 0
    for (let i = 0; i < n; i++) {
      const started = performance.now()
      const result = await connection.client.callTool({ name, arguments: args })
      const elapsed = performance.now() - started
      if (result.isError === true) throw new Error(`${name} failed: ${JSON.stringify(result.content).slice(0, 200)}`)
      into?.samples.push(elapsed)
    }
    if (into !== undefined) {
      into.cpuMs += (Proc.stat(connection.pid)?.cpuMs ?? before) - before
      into.calls += n
    }
  })

const measure = (options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const n = size(options, 1000, 300)
      const m = size(options, 200, 60)
      const blocks = 5
      const connections: Array<Connection> = []
      yield* Effect.addFinalizer(() =>
        promise(() => Promise.all(connections.map((connection) => connection.close().catch(() => undefined))))
      )
      const open = (make: () => Promise<Connection>) =>
        Effect.tap(promise(make), (connection) => Effect.sync(() => connections.push(connection)))
      const sdk = yield* open(() => stdio([sdkServer]))
      const sdkHttp = yield* open(() => http(false, true))
      const list = yield* open(() => stdio([cliBin, "mcp"]))
      const sends = yield* open(() => stdio([cliBin, "mcp"]))
      const overHttp = yield* open(() => http(false))
      const overFetch = yield* open(() => http(true))
      const sessionOf = (connection: Connection) =>
        promise(async () => {
          const opened = await connection.client.callTool({ name: "terminal_open", arguments: { name: "bench" } })
          return (opened.structuredContent as { sessionId: string }).sessionId
        })
      const stdioSession = yield* sessionOf(sends)
      const httpSession = yield* sessionOf(overHttp)
      const fetchSession = yield* sessionOf(overFetch)
      const { send } = yield* openShell({ name: "mcp-in-process" })

      // Every server warmed up alike before it is measured: the same number of calls of the tool it is
      // measured with. Without it the rows compared servers at different points of their JIT warm-up (ours
      // runs more code per call, so it reaches its steady state later: docs/performance.md). The first
      // calls after each start are kept, as the cold rows' notes.
      const warmup = size(options, 3000, 500)
      const coldCalls = Math.min(500, warmup)
      const cold = seriesOfEachRow()
      const warm = (
        connection: Connection,
        name: string,
        args: Record<string, unknown>,
        into: Series
      ) =>
        Effect.zipRight(
          calls(connection, name, args, coldCalls, into),
          calls(connection, name, args, warmup - coldCalls)
        )
      yield* warm(sdk, "noop", {}, cold.sdk)
      yield* warm(sdk, "pty_true", {}, cold.sdkPty)
      yield* warm(sdkHttp, "noop", {}, cold.sdkHttp)
      yield* warm(list, "terminal_list", {}, cold.list)
      yield* warm(sends, "terminal_send", { sessionId: stdioSession, text: "true" }, cold.stdioTrue)
      yield* warm(overHttp, "terminal_send", { sessionId: httpSession, text: "true" }, cold.httpTrue)
      yield* warm(overFetch, "terminal_send", { sessionId: fetchSession, text: "true" }, cold.fetchTrue)
      for (let i = 0; i < warmup; i++) {
        const [, ms] = yield* timed(send("true"))
        if (i < coldCalls) cold.inProcess.samples.push(ms)
      }
      options.progress(`mcp: every server warmed up with ${warmup} calls`)

      const rows = seriesOfEachRow()
      for (let block = 0; block < blocks; block++) {
        yield* calls(sdk, "noop", {}, n / blocks, rows.sdk)
        yield* calls(sdkHttp, "noop", {}, n / blocks, rows.sdkHttp)
        yield* calls(list, "terminal_list", {}, n / blocks, rows.list)
        const cpu = Proc.selfCpuMs()
        for (let i = 0; i < m / blocks; i++) {
          const [result, ms] = yield* timed(send("true"))
          if (result.waitReason !== "prompt") throw new Error(`true settled by ${result.waitReason}`)
          rows.inProcess.samples.push(ms)
        }
        rows.inProcess.cpuMs += Proc.selfCpuMs() - cpu
        rows.inProcess.calls += m / blocks
        yield* calls(sdk, "pty_true", {}, m / blocks, rows.sdkPty)
        yield* calls(sends, "terminal_send", { sessionId: stdioSession, text: "true" }, m / blocks, rows.stdioTrue)
        yield* calls(overHttp, "terminal_send", { sessionId: httpSession, text: "true" }, m / blocks, rows.httpTrue)
        yield* calls(overFetch, "terminal_send", { sessionId: fetchSession, text: "true" }, m / blocks, rows.fetchTrue)
        options.progress(`mcp: block ${block + 1}/${blocks}`)
      }
      return { rows, cold, warmup, coldCalls }
    })
  )

const cpuNote = (row: Series, who: string) =>
  `${who}'s CPU per call: ${(row.cpuMs * 1000 / Math.max(1, row.calls)).toFixed(0)} µs (utime + stime from /proc)`

const names = {
  sdk: "mcp.noop.sdk",
  sdkHttp: "mcp.noop.sdk.http",
  sdkPty: "mcp.true.sdk-raw-pty",
  list: "mcp.terminal_list.stdio",
  inProcess: "mcp.true.in-process",
  stdioTrue: "mcp.true.stdio",
  httpTrue: "mcp.true.http",
  fetchTrue: "mcp.true.http.fetch"
} as const

/** The group. */
export const mcpPath: Group = {
  name: group,
  description: "the MCP path: the SDK's no-op server vs our terminal_list and true over stdio, true over HTTP",
  run: (options) =>
    guard(
      Object.values(names).map((name) => ({ name, group, unit: "ms" })),
      Effect.map(measure(options), ({ cold, coldCalls, rows, warmup }): Array<Metric> => {
        // the targets compare warmed-up servers: --quick's warm-up does not reach their steady state
        const judged = (met: boolean | null): boolean | null => options.quick ? null : met
        const quickNote = options.quick
          ? [`--quick warms each server up with ${warmup} calls, not 3000: the target is not judged`]
          : []
        const coldNote = (row: Series) =>
          `cold: the first ${coldCalls} calls after its start p50 ${
            Stats.round(distribution(row.samples).value ?? Number.NaN)
          } ms; measured after ${warmup} warm-up calls`
        const sdk: Metric = {
          name: names.sdk,
          group,
          kind: "baseline",
          unit: "ms",
          ...distribution(rows.sdk.samples),
          compared: [],
          notes: [
            "the official TypeScript SDK's McpServer (1.32.2) over stdio, one tool that returns at once; the same SDK client",
            cpuNote(rows.sdk, "the server"),
            coldNote(cold.sdk)
          ]
        }
        const sdkHttp: Metric = {
          name: names.sdkHttp,
          group,
          kind: "baseline",
          unit: "ms",
          ...distribution(rows.sdkHttp.samples),
          compared: [compare(distribution(rows.sdkHttp.samples).value, sdk)],
          notes: [
            "the same no-op tool behind the SDK's own Streamable HTTP transport (node:http, JSON responses), the SDK " +
            "client over NodeFetch: what HTTP itself costs a Node MCP server and client here, no authentication",
            cpuNote(rows.sdkHttp, "the server"),
            coldNote(cold.sdkHttp)
          ]
        }
        const sdkPty: Metric = {
          name: names.sdkPty,
          group,
          kind: "baseline",
          unit: "ms",
          ...distribution(rows.sdkPty.samples),
          compared: [],
          notes: [
            "the SDK's stdio server with a tool that writes true to a raw bash on node-pty and waits for its prompt " +
            "(the roundtrip floor behind MCP): a pty round trip over MCP with no library in it",
            cpuNote(rows.sdkPty, "the server"),
            coldNote(cold.sdkPty)
          ]
        }
        const inProcess: Metric = {
          name: names.inProcess,
          group,
          kind: "baseline",
          unit: "ms",
          ...distribution(rows.inProcess.samples),
          compared: [],
          notes: [
            "PtyService.send({ text: 'true' }) in this process, default settings",
            cpuNote(rows.inProcess, "this process"),
            coldNote(cold.inProcess)
          ]
        }
        const list = distribution(rows.list.samples)
        const stdioTrue = distribution(rows.stdioTrue.samples)
        const httpTrue = distribution(rows.httpTrue.samples)
        const fetchTrue = distribution(rows.fetchTrue.samples)
        const floorOfTrue = sdk.value === null || inProcess.value === null ? null : sdk.value + inProcess.value
        // HTTP costs the SDK's own server this much more than stdio, in the same run: ours may add 0.2 ms to it
        const httpBound = stdioTrue.value === null || sdkHttp.value === null || sdk.value === null
          ? null
          : stdioTrue.value + (sdkHttp.value - sdk.value) + 0.2
        return [
          sdk,
          sdkHttp,
          sdkPty,
          {
            name: names.list,
            group,
            kind: "ours",
            unit: "ms",
            ...list,
            compared: [compare(list.value, sdk)],
            target: {
              text: "≤ 1.5 × the SDK's no-op tool",
              met: judged(allMet([list.value === null || sdk.value === null ? null : list.value <= 1.5 * sdk.value]))
            },
            notes: [
              "agent-terminal mcp over stdio, terminal_list with no session open",
              cpuNote(rows.list, "the server"),
              coldNote(cold.list),
              ...quickNote
            ]
          },
          inProcess,
          {
            name: names.stdioTrue,
            group,
            kind: "ours",
            unit: "ms",
            ...stdioTrue,
            compared: [
              compare(stdioTrue.value, sdk),
              compare(stdioTrue.value, inProcess),
              compare(stdioTrue.value, sdkPty)
            ],
            target: {
              text: "≤ 1.5 × (the SDK's no-op + true in process)",
              met: judged(allMet([
                stdioTrue.value === null || floorOfTrue === null ? null : stdioTrue.value <= 1.5 * floorOfTrue
              ]))
            },
            notes: [
              "terminal_send { text: 'true' } over stdio",
              cpuNote(rows.stdioTrue, "the server"),
              coldNote(cold.stdioTrue),
              ...quickNote
            ]
          },
          {
            name: names.httpTrue,
            group,
            kind: "ours",
            unit: "ms",
            ...httpTrue,
            compared: [compare(httpTrue.value, sdkHttp)],
            target: {
              text: "p50 ≤ true over stdio + the SDK's own HTTP overhead (its HTTP no-op − its stdio no-op) + 0.2 ms",
              met: judged(allMet([httpBound === null || httpTrue.value === null ? null : httpTrue.value <= httpBound]))
            },
            notes: [
              "terminal_send { text: 'true' } over Streamable HTTP on loopback, Authorization: Bearer checked on every " +
              "request; the SDK client over node:http with keep-alive (NodeFetch)",
              cpuNote(rows.httpTrue, "the server"),
              coldNote(cold.httpTrue),
              ...quickNote
            ],
            detail: {
              overStdioMs: httpTrue.value === null || stdioTrue.value === null
                ? null
                : httpTrue.value - stdioTrue.value,
              boundMs: httpBound
            }
          },
          {
            name: names.fetchTrue,
            group,
            kind: "ours",
            unit: "ms",
            ...fetchTrue,
            compared: [],
            notes: [
              "the same over the SDK client's default fetch (Node 20's undici): what an SDK client sees as shipped",
              cpuNote(rows.fetchTrue, "the server"),
              coldNote(cold.fetchTrue)
            ]
          }
        ]
      })
    )
}
