/**
 * The live view's cost: how long a byte takes from the pty to a viewer's WebSocket message, and what a
 * viewer connected or a recording costs the terminal's output throughput.
 *
 * One process serves `WebServer.layer` (MCP and the live view, as `mcp --http` does) over
 * `NodeTerminal.layer`, and runs the viewer: a WebSocket client over a plain TCP socket (a handshake with the
 * bearer token, then unmasked server frames counted). Latency: a shell prints `tick-N` every 20 ms; the
 * moment the session's reader parses each tick is taken where it happens (the session is recorded into a
 * store whose `write` runs synchronously in that parse), the arrival on the viewer's socket after it.
 * Throughput: the ingest group's command through three sessions, interleaved, one round each at a time (in
 * a rotating order): no viewer, a viewer on `/live/terminal/:id` (reconnecting if it is dropped for falling
 * behind), recording on; each judged by the median of its rounds' ratios to the same round's plain one.
 */
import { Ids, PtyService, Recording, TerminalConfig } from "@agent-terminal/core"
import { FileRecordings, NodeTerminal } from "@agent-terminal/node"
import { HttpListener, WebServer } from "@agent-terminal/server"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as childProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import type { Group, RunOptions } from "./Harness.js"
import { guard, owner, pause, promise, size, timed } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { comparePaired, distribution } from "./Metric.js"
import * as Stats from "./Stats.js"

const group = "live"
const MiB = 2 ** 20

const connectViewer = (
  port: number,
  path: string,
  token: string,
  onMessage: (data: Buffer, at: number) => void,
  onClose: () => void
): Promise<() => void> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.setNoDelay(true)
    let handshake = true
    let pending: Buffer = Buffer.alloc(0)
    socket.on("connect", () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString("base64")}\r\n` +
          `Authorization: Bearer ${token}\r\n\r\n`
      )
    })
    socket.on("data", (chunk: Buffer) => {
      const at = performance.now()
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      if (handshake) {
        const end = pending.indexOf("\r\n\r\n")
        if (end === -1) return
        if (!pending.subarray(0, 12).toString().includes("101")) {
          reject(new Error(`the live view refused the viewer: ${pending.subarray(0, end).toString()}`))
          socket.destroy()
          return
        }
        handshake = false
        pending = pending.subarray(end + 4)
        resolve(() => socket.destroy())
      }
      while (pending.length >= 2) {
        const opcode = pending[0]! & 0x0f
        let length = pending[1]! & 0x7f
        let offset = 2
        if (length === 126) {
          if (pending.length < 4) return
          length = pending.readUInt16BE(2)
          offset = 4
        } else if (length === 127) {
          if (pending.length < 10) return
          length = Number(pending.readBigUInt64BE(2))
          offset = 10
        }
        if (pending.length < offset + length) return
        const payload = pending.subarray(offset, offset + length)
        pending = pending.subarray(offset + length)
        if (opcode === 0x8) {
          socket.destroy()
          return
        }
        onMessage(payload, at)
      }
    })
    socket.on("error", reject)
    socket.on("close", onClose)
  })

/**
 * A viewer in its own process, as a browser is: a WebSocket client counting what it receives, reconnecting
 * when dropped, until its stdin ends; then it prints `{bytes, drops}`.
 */
const viewerScript = `
const net = require("node:net"), crypto = require("node:crypto")
const [port, path, token] = process.argv.slice(1)
let bytes = 0, drops = 0, done = false, socket
const connect = () => {
  socket = net.connect(Number(port), "127.0.0.1")
  let open = false
  socket.on("connect", () => socket.write("GET " + path + " HTTP/1.1\\r\\nHost: 127.0.0.1:" + port +
    "\\r\\nConnection: Upgrade\\r\\nUpgrade: websocket\\r\\nSec-WebSocket-Version: 13\\r\\nSec-WebSocket-Key: " +
    crypto.randomBytes(16).toString("base64") + "\\r\\nAuthorization: Bearer " + token + "\\r\\n\\r\\n"))
  socket.on("data", (chunk) => { if (open) bytes += chunk.length; else open = true })
  socket.on("error", () => {})
  socket.on("close", () => { if (!done) { drops++; setTimeout(connect, 10) } })
}
connect()
process.stdin.on("end", () => { done = true; socket.destroy(); process.stdout.write(JSON.stringify({ bytes, drops })) })
process.stdin.resume()
`

const spawnViewer = (port: number, path: string, token: string) => {
  const child = childProcess.spawn(process.execPath, ["-e", viewerScript, String(port), path, token], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  let out = ""
  child.stdout.on("data", (chunk) => (out += chunk))
  return Object.assign(child, {
    finish: () =>
      new Promise<{ bytes: number; drops: number }>((resolve) => {
        child.once("exit", () => resolve(JSON.parse(out || "{\"bytes\":0,\"drops\":0}")))
        child.stdin.end()
      })
  })
}

/** A store whose recordings are files in `directory`, except the next one asked for: timed, not kept. */
const benchRecordings = (directory: string) => {
  const files = FileRecordings.make({ directory })
  const timing = { next: false, parsed: new Map<number, number>() }
  const store: Recording.Recordings["Type"] = {
    ...files,
    create: (meta) => {
      if (!timing.next) return files.create(meta)
      timing.next = false
      return Effect.succeed(Option.some({
        name: `${meta.sessionId}.timing`,
        write: (line: string) => {
          const at = performance.now()
          for (const match of line.matchAll(/tick-(\d+)/g)) {
            const tick = Number(match[1])
            if (!timing.parsed.has(tick)) timing.parsed.set(tick, at)
          }
        },
        close: Effect.void
      }))
    }
  }
  return { store, timing }
}

const measure = (options: RunOptions) =>
  Effect.gen(function*() {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "at-bench-live-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })))
    const token = crypto.randomBytes(32).toString("base64url")
    const input: TerminalConfig.TerminalConfigInput = { recordingMaxBytes: 4 * 1024 * MiB }
    const settings = yield* TerminalConfig.make(input)
    const { store, timing } = benchRecordings(directory)
    const http: WebServer.HttpSettings = {
      port: 0,
      host: "127.0.0.1",
      sessionIdleMs: undefined,
      ownerIdleMs: undefined,
      allowedOrigins: [],
      allowedHosts: [],
      maxBodyBytes: 4 * MiB,
      maxSessions: 64,
      limits: HttpListener.defaultLimits
    }
    const server = WebServer.layer(settings, http, {
      token: Redacted.make(token),
      source: { _tag: "Environment", variable: "bench" }
    }, { name: "agent-terminal-bench", version: "0" }).pipe(
      Layer.provideMerge(NodeTerminal.layer(input)),
      Layer.provide(Layer.succeed(Recording.Recordings, store))
    )
    return yield* Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("the server is not on TCP")
      const port = address.port
      const pty = yield* PtyService.PtyService
      const openShell = (name: string, record: boolean) =>
        Effect.acquireRelease(
          pty.open(owner, { name, record }),
          (opened) => pty.close(owner, Ids.SessionId.make(opened.sessionId)).pipe(Effect.ignore)
        ).pipe(Effect.map((opened) => Ids.SessionId.make(opened.sessionId)))

      // latency: ticks every 20 ms, the parse in the reader to the viewer's message
      timing.next = true
      const ticking = yield* openShell("live-latency", true)
      const arrived = new Map<number, number>()
      const closeTicks = yield* promise(() =>
        connectViewer(port, `/live/terminal/${ticking}`, token, (data, at) => {
          for (const match of data.toString("latin1").matchAll(/tick-(\d+)/g)) {
            const tick = Number(match[1])
            if (!arrived.has(tick)) arrived.set(tick, at)
          }
        }, () => {})
      )
      yield* pause(200)
      const ticks = size(options, 500, 100)
      yield* pty.send(owner, ticking, {
        text: `for i in $(seq 1 ${ticks}); do echo tick-$i; sleep 0.02; done`,
        timeoutMs: 600_000
      })
      yield* pause(200)
      closeTicks()
      const latencies: Array<number> = []
      for (const [tick, parsed] of timing.parsed) {
        const at = arrived.get(tick)
        // the echo of the command line carries `tick-$i`, not a number: only the printed ticks count
        if (at !== undefined) latencies.push(at - parsed)
      }
      options.progress(`live: latency, ${latencies.length} ticks`)

      // throughput: none, a viewer, recording on — interleaved
      const command = `head -c ${size(options, 60, 20)}M /dev/zero | tr '\\0' a | fold -w 99`
      const plain = yield* openShell("live-plain", false)
      const viewed = yield* openShell("live-viewed", false)
      const recorded = yield* openShell("live-recorded", true)
      const viewer = yield* Effect.acquireRelease(
        Effect.sync(() => spawnViewer(port, `/live/terminal/${viewed}`, token)),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      yield* pause(300)
      const rounds = size(options, 5, 1)
      const rates = { plain: [] as Array<number>, viewed: [] as Array<number>, recorded: [] as Array<number> }
      const cpuMsPerMiB = { plain: [] as Array<number>, viewed: [] as Array<number>, recorded: [] as Array<number> }
      let bytes = 0
      for (let round = 0; round < rounds; round++) {
        // each round in another order (a fixed order would give one of them the machine's same moment each time)
        const order = [["plain", plain], ["viewed", viewed], ["recorded", recorded]] as const
        for (let k = 0; k < order.length; k++) {
          const [key, id] = order[(round + k) % order.length]!
          const cpu = process.cpuUsage()
          const [, ms] = yield* timed(pty.send(owner, id, { text: command, timeoutMs: 600_000 }))
          const used = process.cpuUsage(cpu)
          bytes = size(options, 60, 20) * MiB * 100 / 99
          rates[key].push(bytes / MiB / (ms / 1000))
          cpuMsPerMiB[key].push((used.user + used.system) / 1000 / (bytes / MiB))
        }
        options.progress(`live: throughput round ${round + 1}/${rounds}`)
      }
      const seen = yield* promise(() => viewer.finish())
      const recordedBytes = fs.readdirSync(directory).reduce(
        (sum, name) => sum + fs.statSync(path.join(directory, name)).size,
        0
      )
      return { latencies, rates, cpuMsPerMiB, command, bytes, viewer: seen, recordedBytes, ticks }
    }).pipe(Effect.provide(server))
  }).pipe(Effect.scoped)

const TARGET_LATENCY = "≤ 20 ms p50 from the pty read to the viewer's WebSocket message"
const TARGET_THROUGHPUT = "≥ 90 % of the throughput without"

const cpuOf = (samples: ReadonlyArray<number>) => Stats.round(distribution(samples).p50 ?? 0)

const rows = (options: RunOptions) =>
  Effect.map(measure(options), (m): Array<Metric> => {
    const latency = distribution(m.latencies)
    const plain: Metric = {
      name: "live.ingest.plain",
      group,
      kind: "baseline",
      unit: "MiB/s",
      ...distribution(m.rates.plain),
      compared: [],
      notes: [`\`${m.command}\` through a session nobody watches or records (the same run, interleaved)`]
    }
    const viewed = distribution(m.rates.viewed)
    const recorded = distribution(m.rates.recorded)
    // each round's viewed (recorded) against that round's plain: the machine's drift between rounds cancels
    const viewedRatio = comparePaired(m.rates.viewed, m.rates.plain, plain)
    const recordedRatio = comparePaired(m.rates.recorded, m.rates.plain, plain)
    return [
      {
        name: "live.latency",
        group,
        kind: "ours",
        unit: "ms",
        ...latency,
        compared: [],
        target: { text: TARGET_LATENCY, met: latency.p50 === null ? null : latency.p50 <= 20 },
        notes: [
          `${m.latencies.length} of ${m.ticks} ticks (\`echo tick-$i; sleep 0.02\`): from the reader's parse of the chunk ` +
          "(taken in the parse itself) to the viewer's socket read of the WebSocket message, same process"
        ]
      },
      {
        name: "live.ingest.viewed",
        group,
        kind: "ours",
        unit: "MiB/s",
        ...viewed,
        compared: [viewedRatio],
        target: { text: TARGET_THROUGHPUT, met: viewedRatio.ratio === null ? null : viewedRatio.ratio >= 0.9 },
        detail: { serverCpuMsPerMiB: cpuOf(m.cpuMsPerMiB.viewed), plainCpuMsPerMiB: cpuOf(m.cpuMsPerMiB.plain) },
        notes: [
          `a viewer on /live/terminal/:id (another process, as a browser is) took ${
            Stats.round(m.viewer.bytes / MiB)
          } MiB; ` +
          `dropped for falling behind ${m.viewer.drops} time(s), reconnected each time`
        ]
      },
      {
        name: "live.ingest.recorded",
        group,
        kind: "ours",
        unit: "MiB/s",
        ...recorded,
        compared: [recordedRatio],
        target: { text: TARGET_THROUGHPUT, met: recordedRatio.ratio === null ? null : recordedRatio.ratio >= 0.9 },
        detail: { serverCpuMsPerMiB: cpuOf(m.cpuMsPerMiB.recorded), plainCpuMsPerMiB: cpuOf(m.cpuMsPerMiB.plain) },
        notes: [`recording on (asciicast v2 to a file): ${Stats.round(m.recordedBytes / MiB)} MiB written`]
      },
      plain
    ]
  })

/** The group. */
export const live: Group = {
  name: group,
  description: "the live view: pty → viewer WebSocket latency, throughput with a viewer and with recording on",
  run: (options) =>
    guard(
      [
        { name: "live.latency", group, unit: "ms", target: TARGET_LATENCY },
        { name: "live.ingest.viewed", group, unit: "MiB/s", target: TARGET_THROUGHPUT },
        { name: "live.ingest.recorded", group, unit: "MiB/s", target: TARGET_THROUGHPUT }
      ],
      rows(options)
    )
}
