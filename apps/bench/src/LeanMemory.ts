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

/** A session opened and `true` sent through it, over MCP. */
const openAndSend = (connection: Connection) =>
  promise(async () => {
    const opened = await connection.client.callTool({ name: "terminal_open", arguments: {} })
    const { sessionId } = opened.structuredContent as { readonly sessionId: string }
    await connection.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "true" } })
  })

/** A connected MCP client, closed with the scope. */
const connected = (args: ReadonlyArray<string>, env?: Record<string, string>) =>
  Effect.acquireRelease(promise(() => stdio(args, env)), (connection) => promise(() => connection.close()))

/** A forked `PtyHolder hold 1` once it holds its bash, ended with the scope. */
const ptyHolder = Effect.acquireRelease(
  Effect.async<ReturnType<typeof Forked.fork>, Error>((resume) => {
    const forked = Forked.fork("./PtyHolder.js", ["hold", "1"])
    forked.once("message", () => resume(Effect.succeed(forked)))
    forked.once("exit", (code) => resume(Effect.fail(new Error(`PtyHolder exited with ${code}`))))
  }),
  (forked) =>
    Effect.async<void>((resume) => {
      forked.once("exit", () => resume(Effect.void))
      forked.kill("SIGTERM")
    })
).pipe(Effect.orDie)

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

/** RSS of every process of one round, KiB: 1 s after its work, the steady reading (below), and at `STEADY_MS`. */
interface Round {
  readonly server: ReadonlyArray<number>
  readonly reaper: ReadonlyArray<number>
  readonly helpers: number
  readonly floor: ReadonlyArray<number>
  readonly client: ReadonlyArray<number>
  readonly sdk: ReadonlyArray<number>
}

/**
 * How long the processes are left quiet before their steady RSS is read: V8 returns the young generation it
 * grew for the start's allocations after such a spell (measured: the server 77 → 64 MiB, the SDK's 70 → 60,
 * between 30 and 45 s), which is what a server waiting for its agent holds. When is V8's memory reducer's call:
 * it runs its memory-reducing GC only once the allocation rate it estimates (the start's, against GC speeds
 * measured during the start) reads low, which took ~40 s on a quiet machine and past 60 s on a loaded one
 * (docs/performance.md, "The server's RSS after the code cache"): a reading at one moment caught either state.
 * So each process is read every `STEADY_EVERY_MS` from `STEADY_MS` to `STEADY_UNTIL_MS` and its steady RSS is
 * the least of those readings, the same rule for ours and for the floors.
 */
const STEADY_MS = 60_000
const STEADY_UNTIL_MS = 120_000
const STEADY_EVERY_MS = 10_000

/** The four processes of a round, side by side: they share the wait for the steady reading. */
const round = Effect.scoped(Effect.gen(function*() {
  const { env } = yield* daemon
  const server = yield* connected([cliBin, "mcp"])
  yield* openAndSend(server)
  const holder = yield* ptyHolder
  const client = yield* connected([cliBin, "mcp", "--daemon"], env)
  yield* openAndSend(client)
  const sdk = yield* connected([sdkServer])
  yield* promise(() => sdk.client.callTool({ name: "noop", arguments: {} }))
  const started = performance.now()
  const read = () => {
    const helpers = helpersOf(server.pid)
    return {
      server: Proc.rssKiB(server.pid) ?? Number.NaN,
      reaper: helpers.reduce((sum, p) => sum + (Proc.rssKiB(p.pid) ?? 0), 0),
      helpers: helpers.length,
      floor: Proc.rssKiB(holder.pid!) ?? Number.NaN,
      client: Proc.rssKiB(client.pid) ?? Number.NaN,
      sdk: Proc.rssKiB(sdk.pid) ?? Number.NaN
    }
  }
  yield* pause(1000)
  const early = read()
  const readings: Array<ReturnType<typeof read>> = []
  for (let at = STEADY_MS; at <= STEADY_UNTIL_MS; at += STEADY_EVERY_MS) {
    yield* pause(Math.max(0, at - (performance.now() - started)))
    readings.push(read())
  }
  const least = (pick: (reading: ReturnType<typeof read>) => number) => Math.min(...readings.map(pick))
  const atFirst = readings[0]!
  const withHelpers = readings.reduce((best, reading) =>
    reading.server + reading.reaper < best.server + best.reaper ? reading : best
  )
  return {
    server: [early.server, withHelpers.server, atFirst.server],
    reaper: [early.reaper, withHelpers.reaper, atFirst.reaper],
    helpers: withHelpers.helpers,
    floor: [early.floor, least((r) => r.floor), atFirst.floor],
    client: [early.client, least((r) => r.client), atFirst.client],
    sdk: [early.sdk, least((r) => r.sdk), atFirst.sdk]
  } satisfies Round
}))

const idle = (mode: "ours" | "floor") => Forked.report<IdleReport>("./IdleChild.js", [mode], ["--expose-gc"])

const slopeKiB = (report: IdleReport) => (report.rss[1] - report.rss[0]) / (report.counts[1] - report.counts[0]) / KiB

const row = (fields: Omit<Metric, "group" | "compared" | "notes"> & Partial<Pick<Metric, "compared" | "notes">>) =>
  ({ group, compared: [], notes: [], ...fields }) satisfies Metric

/** The memory rows. */
export const memory = (options: RunOptions) =>
  Effect.gen(function*() {
    const rounds: Array<Round> = []
    for (let i = 0; i < size(options, 3, 1); i++) {
      rounds.push(yield* round)
      options.progress(
        `lean: RSS round ${i + 1} (read 1 s after the work, and from ${STEADY_MS / 1000} to ${
          STEADY_UNTIL_MS / 1000
        } s quiet)`
      )
    }
    const ourIdle = yield* idle("ours")
    const floorIdle = yield* idle("floor")
    options.progress("lean: idle sessions, 10 → 100")

    const MiB = (kib: number) => Stats.round(kib / 1024)
    const steady = (pick: (r: Round) => ReadonlyArray<number>) => rounds.map((r) => MiB(pick(r)[1]!))
    const early = (pick: (r: Round) => ReadonlyArray<number>) => rounds.map((r) => MiB(pick(r)[0]!)).join(", ")
    const total = (r: Round) => [r.server[0]! + r.reaper[0]!, r.server[1]! + r.reaper[1]!]
    const floorRow = row({
      name: "lean.rss.node-pty",
      kind: "baseline",
      unit: "MiB",
      ...distribution(steady((r) => r.floor)),
      notes: [
        `a bare Node process holding node-pty and one bash (PtyHolder); 1 s after its prompt: ${early((r) => r.floor)}`
      ]
    })
    const serverRatio = comparePaired(steady(total), steady((r) => r.floor), floorRow)
    const reaper = Math.max(...rounds.flatMap((r) => r.reaper))
    const sdkRow = row({
      name: "lean.rss.sdk",
      kind: "baseline",
      unit: "MiB",
      ...distribution(steady((r) => r.sdk)),
      notes: [
        `the official SDK's no-op server (unbundled) after initialize and one call; 1 s after: ${early((r) => r.sdk)}`
      ]
    })
    const clientRatio = comparePaired(steady((r) => r.client), steady((r) => r.sdk), sdkRow)
    const idleFloor = row({
      name: "lean.idle-session.node-pty",
      kind: "baseline",
      unit: "KiB/session",
      value: Stats.round(slopeKiB(floorIdle)),
      notes: ["raw node-pty bashes in a fresh Node, RSS after GC at 10 and 100"]
    })
    const idleSlope = Stats.round(slopeKiB(ourIdle))
    const quiet = `the least of the readings every ${STEADY_EVERY_MS / 1000} s from ${STEADY_MS / 1000} to ${
      STEADY_UNTIL_MS / 1000
    } s quiet (once V8's memory reducer gives back the young generation the start grew; the same rule for the floors)`
    const atFirst = (pick: (r: Round) => ReadonlyArray<number>) => rounds.map((r) => MiB(pick(r)[2]!)).join(", ")
    return [
      row({
        name: "lean.rss.server",
        kind: "ours",
        unit: "MiB",
        ...distribution(steady(total)),
        compared: [serverRatio],
        target: {
          text: "RSS of the server and its helpers, one session ≤ 1.5 × a bare Node process holding node-pty",
          met: serverRatio.ratio === null ? null : serverRatio.ratio <= 1.5
        },
        notes: [
          `agent-terminal mcp (stdio) with one session that ran true: the server's VmRSS + its reaper's, ${quiet}`,
          `1 s after the send: ${rounds.map((r) => MiB(total(r)[0]!)).join(", ")} MiB (the node-pty floor: ${
            early((r) => r.floor)
          })`,
          `at ${STEADY_MS / 1000} s alone: ${
            rounds.map((r) => MiB(r.server[2]! + r.reaper[2]!)).join(", ")
          } MiB (the node-pty floor: ${atFirst((r) => r.floor)})`,
          `server ${steady((r) => r.server).join(", ")} MiB; reaper ${steady((r) => r.reaper).join(", ")} MiB (${
            rounds[0]?.helpers ?? 0
          } helper)`
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
          met: rounds.every((r) => r.helpers === 1) ? reaper / 1024 <= 8 : null
        },
        notes: ["VmRSS of the server's reaper (the largest reading)"]
      }),
      row({
        name: "lean.rss.daemon-client",
        kind: "ours",
        unit: "MiB",
        ...distribution(steady((r) => r.client)),
        compared: [clientRatio],
        target: {
          text: "an `mcp --daemon` client ≤ 1.25 × the SDK's no-op server",
          met: clientRatio.ratio === null ? null : clientRatio.ratio <= 1.25
        },
        notes: [
          `agent-terminal mcp --daemon against a daemon in a private directory, a session opened and true sent, ${quiet}`,
          `1 s after: ${early((r) => r.client)} MiB`
        ]
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
          "PtyService in a fresh Node (IdleChild) after a warm-up of 40 sessions: sessions opened, each ran true, " +
          "then quiet for 2 × Emulator.QUIET_MS; RSS after GC at 10 and 100 sessions: " +
          `${MiB(ourIdle.rss[0] / KiB)} → ${MiB(ourIdle.rss[1] / KiB)} MiB; heap ${MiB(ourIdle.heap[0] / KiB)} → ${
            MiB(ourIdle.heap[1] / KiB)
          } MiB`
        ]
      }),
      idleFloor
    ]
  })
