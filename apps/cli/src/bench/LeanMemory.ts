/**
 * What every agent's server holds, read from `/proc/<pid>/status` (VmRSS) one second after the work, against
 * floors read the same way in the same run:
 *
 * - the server and its helpers (the reaper) with one session, against a bare Node process holding node-pty
 *   with one bash; the reaper alone;
 * - a client of the daemon (`mcp --daemon`, a session opened and driven), against the official SDK's no-op
 *   server after initialize and one call;
 * - what one more idle session costs the server: the slope of its RSS from 10 to 100 sessions (fresh
 *   processes, after a GC), beside the same slope of raw node-pty bashes.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Forked from "./Forked.js"
import type { RunOptions } from "./Harness.js"
import { pause, promise, size } from "./Harness.js"
import type { IdleReport } from "./IdleChild.js"
import { cliBin, type Connection, sdkServer, stdio } from "./McpPath.js"
import type { Metric } from "./Metric.js"
import { compare, comparePaired, distribution } from "./Metric.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "lean"
const KiB = 1024

/** The reaper's helper (native, or the Node fallback) among the children of `pid`. */
const helpersOf = (pid: number) =>
  Proc.all().filter((p) => p.ppid === pid && /agent-terminal-reaper|reaperMain\.js/.test(Proc.cmdline(p.pid)))

const settled = <A>(effect: Effect.Effect<A>) => Effect.zipLeft(effect, pause(1000))

/** A session opened and `true` sent through it, over MCP. */
const openAndSend = (connection: Connection) =>
  promise(async () => {
    const opened = await connection.client.callTool({ name: "terminal_open", arguments: {} })
    const { sessionId } = opened.structuredContent as { readonly sessionId: string }
    await connection.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "true" } })
  })

/** `mcp` with one session: the server's RSS and its reaper's, KiB. */
const serverRss = Effect.acquireUseRelease(
  promise(() => stdio([cliBin, "mcp"])),
  (connection) =>
    settled(openAndSend(connection)).pipe(Effect.map(() => {
      const helpers = helpersOf(connection.pid)
      return {
        server: Proc.rssKiB(connection.pid) ?? Number.NaN,
        reaper: helpers.reduce((sum, p) => sum + (Proc.rssKiB(p.pid) ?? 0), 0),
        helpers: helpers.length
      }
    })),
  (connection) => promise(() => connection.close())
)

/** A forked `PtyHolder hold 1`, its RSS once it holds its bash, KiB. */
const ptyHolderRss = Effect.acquireUseRelease(
  Effect.async<ReturnType<typeof Forked.fork>, Error>((resume) => {
    const forked = Forked.fork("./PtyHolder.js", ["hold", "1"])
    forked.once("message", () => resume(Effect.succeed(forked)))
    forked.once("exit", (code) => resume(Effect.fail(new Error(`PtyHolder exited with ${code}`))))
  }),
  (forked) => Effect.map(pause(1000), () => Proc.rssKiB(forked.pid!) ?? Number.NaN),
  (forked) =>
    Effect.async<void>((resume) => {
      forked.once("exit", () => resume(Effect.void))
      forked.kill("SIGTERM")
    })
).pipe(Effect.orDie)

/** The SDK's no-op server after initialize and one call, KiB. */
const sdkRss = Effect.acquireUseRelease(
  promise(() => stdio([sdkServer])),
  (connection) =>
    settled(promise(() => connection.client.callTool({ name: "noop", arguments: {} }))).pipe(
      Effect.map(() => Proc.rssKiB(connection.pid) ?? Number.NaN)
    ),
  (connection) => promise(() => connection.close())
)

/** A daemon in a private state directory, for as long as the scope lasts. */
const daemon = Effect.acquireRelease(
  promise(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-lean-"))
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      AGENT_TERMINAL_STATE_DIR: path.join(dir, "state"),
      AGENT_TERMINAL_SOCKET: path.join(dir, "run", "agent-terminal.sock")
    }
    const child = spawn(process.execPath, [cliBin, "serve"], { env, stdio: ["ignore", "ignore", "pipe"] })
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    let log = ""
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        log += chunk.toString("utf8")
        if (log.includes("daemon: serving on")) resolve()
      })
      void exited.then(() => reject(new Error(`serve exited: ${log.slice(0, 300)}`)))
    })
    return { dir, env, child, exited }
  }),
  ({ child, dir, exited }) =>
    promise(async () => {
      child.kill("SIGTERM")
      await exited
      fs.rmSync(dir, { recursive: true, force: true })
    })
)

/** `mcp --daemon` with a session opened and driven, KiB. */
const daemonClientRss = (env: Record<string, string>) =>
  Effect.acquireUseRelease(
    promise(() => stdio([cliBin, "mcp", "--daemon"], env)),
    (connection) => settled(openAndSend(connection)).pipe(Effect.map(() => Proc.rssKiB(connection.pid) ?? Number.NaN)),
    (connection) => promise(() => connection.close())
  )

const idle = (mode: "ours" | "floor") => Forked.report<IdleReport>("./IdleChild.js", [mode], ["--expose-gc"])

const slopeKiB = (report: IdleReport) => (report.rss[1] - report.rss[0]) / (report.counts[1] - report.counts[0]) / KiB

const row = (fields: Omit<Metric, "group" | "compared" | "notes"> & Partial<Pick<Metric, "compared" | "notes">>) =>
  ({ group, compared: [], notes: [], ...fields }) satisfies Metric

/** The memory rows. */
export const memory = (options: RunOptions) =>
  Effect.gen(function*() {
    const rounds = size(options, 3, 1)
    const server: Array<{ server: number; reaper: number; helpers: number }> = []
    const floor: Array<number> = []
    const client: Array<number> = []
    const sdk: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      server.push(yield* serverRss)
      floor.push(yield* ptyHolderRss)
      client.push(yield* Effect.scoped(Effect.flatMap(daemon, ({ env }) => daemonClientRss(env))))
      sdk.push(yield* sdkRss)
    }
    options.progress(`lean: RSS, ${rounds} rounds`)
    const ourIdle = yield* idle("ours")
    const floorIdle = yield* idle("floor")
    options.progress("lean: idle sessions, 10 → 100")

    const MiB = (kib: number) => Stats.round(kib / 1024)
    const total = server.map((s) => s.server + s.reaper)
    const floorRow = row({
      name: "lean.rss.node-pty",
      kind: "baseline",
      unit: "MiB",
      ...distribution(floor.map(MiB)),
      notes: ["a bare Node process holding node-pty and one bash (PtyHolder), 1 s after the bash's prompt"]
    })
    const serverRatio = comparePaired(total.map(MiB), floor.map(MiB), floorRow)
    const reaper = Math.max(...server.map((s) => s.reaper))
    const sdkRow = row({
      name: "lean.rss.sdk",
      kind: "baseline",
      unit: "MiB",
      ...distribution(sdk.map(MiB)),
      notes: ["the official SDK's no-op server (unbundled), 1 s after initialize and one call"]
    })
    const clientRatio = comparePaired(client.map(MiB), sdk.map(MiB), sdkRow)
    const idleFloor = row({
      name: "lean.idle-session.node-pty",
      kind: "baseline",
      unit: "KiB/session",
      value: Stats.round(slopeKiB(floorIdle)),
      notes: ["raw node-pty bashes in a fresh Node, RSS after GC at 10 and 100"]
    })
    const idleSlope = Stats.round(slopeKiB(ourIdle))
    return [
      row({
        name: "lean.rss.server",
        kind: "ours",
        unit: "MiB",
        ...distribution(total.map(MiB)),
        compared: [serverRatio],
        target: {
          text: "RSS of the server and its helpers, one session ≤ 1.5 × a bare Node process holding node-pty",
          met: serverRatio.ratio === null ? null : serverRatio.ratio <= 1.5
        },
        notes: [
          "agent-terminal mcp (stdio) with one session that ran true, 1 s later: the server's VmRSS + its reaper's",
          `server ${server.map((s) => MiB(s.server)).join(", ")} MiB; reaper ${
            server.map((s) => MiB(s.reaper)).join(", ")
          } MiB (${server[0]?.helpers ?? 0} helper)`
        ]
      }),
      floorRow,
      row({
        name: "lean.rss.reaper",
        kind: "ours",
        unit: "MiB",
        value: MiB(reaper),
        target: {
          text: "the reaper alone ≤ 8 MiB",
          met: server.every((s) => s.helpers === 1)
            ? reaper / 1024 <= 8
            : null
        },
        notes: ["VmRSS of the server's reaper (the largest of the rounds)"]
      }),
      row({
        name: "lean.rss.daemon-client",
        kind: "ours",
        unit: "MiB",
        ...distribution(client.map(MiB)),
        compared: [clientRatio],
        target: {
          text: "an `mcp --daemon` client ≤ 1.25 × the SDK's no-op server",
          met: clientRatio.ratio === null ? null : clientRatio.ratio <= 1.25
        },
        notes: ["agent-terminal mcp --daemon against a daemon in a private directory, a session opened and true sent"]
      }),
      sdkRow,
      row({
        name: "lean.idle-session",
        kind: "ours",
        unit: "KiB/session",
        value: idleSlope,
        compared: [compare(idleSlope, idleFloor)],
        target: { text: "server RSS per idle session (slope from 10 to 100) ≤ 128 KiB", met: idleSlope <= 128 },
        notes: [
          "PtyService in a fresh Node (IdleChild): sessions opened, each ran true, then quiet for 2 × Emulator.QUIET_MS; " +
          "RSS after GC at 10 and 100 " +
          `sessions: ${MiB(ourIdle.rss[0] / KiB)} → ${MiB(ourIdle.rss[1] / KiB)} MiB; heap ${
            MiB(ourIdle.heap[0] / KiB)
          } → ${MiB(ourIdle.heap[1] / KiB)} MiB`
        ]
      }),
      idleFloor
    ]
  })
