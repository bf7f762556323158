/**
 * The daemon beside in-process, in the same run: a real `agent-terminal serve` on a private socket and the
 * remote layer (`RemoteTerminal.layer`), against `NodeTerminal.layer` in this process, interleaved in blocks
 * — `true` round trips, opens, output streamed to a watching client, and the reaper: the time from the
 * owner's SIGKILL to the last process of its sessions gone.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { RemoteTerminal } from "@agent-terminal/daemon"
import { NodeTerminal } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as childProcess from "node:child_process"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Forked from "./Forked.js"
import type { Group, RunOptions } from "./Harness.js"
import { guard, owner, promise, size, timed } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, compare, comparePaired, distribution } from "./Metric.js"
import * as Stats from "./Stats.js"
import { type Watched, watchedSend } from "./Watched.js"

const group = "daemon"
const MiB = 2 ** 20
const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../cli/dist/bin.js")

/** A private `serve` for the run, stopped (SIGTERM) with the scope. */
const serve = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "at-bench-daemon-"))
    const socket = path.join(dir, "run", "agent-terminal.sock")
    const child = spawn(process.execPath, [bin, "serve", "--socket", socket], {
      env: { ...process.env, AGENT_TERMINAL_STATE_DIR: path.join(dir, "state") },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let log = ""
    child.stderr.on("data", (chunk) => (log += chunk))
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    const deadline = Date.now() + 30_000
    while (!log.includes("daemon: serving on") && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    if (!log.includes("daemon: serving on")) throw new Error(`serve did not start: ${log}`)
    return { dir, socket, child, exited }
  }),
  ({ child, dir, exited }) =>
    Effect.promise(async () => {
      child.kill("SIGTERM")
      await exited
      fs.rmSync(dir, { recursive: true, force: true })
    })
)

const startTimeOf = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19])
  } catch {
    return undefined
  }
}

const alive = (identity: { readonly pid: number; readonly startTime: number }) => {
  try {
    const stat = fs.readFileSync(`/proc/${identity.pid}/stat`, "latin1")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]) === identity.startTime && state !== "Z"
  } catch {
    return false
  }
}

const tagged = (tag: string) =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    const pid = Number(name)
    try {
      if (!fs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`TAG=${tag}`)) return []
    } catch {
      return []
    }
    const startTime = startTimeOf(pid)
    return startTime === undefined ? [] : [{ pid, startTime }]
  })

const pty = (context: Layer.Layer<PtyService.PtyService, unknown>) =>
  Effect.flatMap(Layer.build(context), (built) => Effect.provide(PtyService.PtyService, built))

/** The daemon's service through the remote layer, and the owner its connection is bound to. */
const remotePty = (options: RemoteTerminal.Options) =>
  Effect.flatMap(Layer.build(RemoteTerminal.layer(options)), (built) =>
    Effect.all({
      service: Effect.provide(PtyService.PtyService, built),
      owner: Effect.map(Effect.provide(RemoteTerminal.Connected, built), (connected) => connected.owner)
    }))

/** A forked client (`module` with `args`): `block(n)` runs n round trips there and returns their times. */
const forkedClient = (module: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.async<childProcess.ChildProcess, Error>((resume) => {
      const forked = Forked.fork(module, args)
      forked.once("message", () => resume(Effect.succeed(forked)))
      forked.once("exit", (code) => resume(Effect.fail(new Error(`the bench's ${module} exited with ${code}`))))
    }),
    (forked) => Effect.sync(() => forked.kill("SIGTERM"))
  ).pipe(Effect.map((forked) => {
    /** One request to the client and its reply. */
    const ask = <A>(message: object) =>
      Effect.async<A>((resume) => {
        forked.once("message", (reply: A) => resume(Effect.succeed(reply)))
        forked.send(message)
      })
    return {
      block: (n: number) =>
        Effect.map(ask<{ readonly samples: ReadonlyArray<number> }>({ n }), (reply) => reply.samples),
      /** The command in the client's own shell, watched there (`DaemonClient` only). */
      stream: (command: string) => ask<Watched>({ stream: command })
    }
  }))

/** A `DaemonClient` on the daemon's socket: `true` round trips through the remote layer. */
const roundTripClient = (socket: string) => forkedClient("./DaemonClient.js", [socket])

/**
 * The floor: a no-op `Ping` through the same `@effect/rpc` stack (socket protocol, msgpack) between two
 * processes of their own, on a socket beside the daemon's.
 */
const floorClient = (dir: string) =>
  Effect.gen(function*() {
    const socket = path.join(dir, "floor.sock")
    yield* forkedClient("./RpcFloor.js", ["serve", socket])
    return yield* forkedClient("./RpcFloor.js", [socket])
  })

const LINES = (options: RunOptions) => `head -c ${size(options, 24, 10)}M /dev/zero | tr '\\0' a | fold -w 99`

/** Open, round trip and streaming, in-process and through the daemon, interleaved. */
const sideBySide = (options: RunOptions) =>
  Effect.gen(function*() {
    const daemon = yield* serve
    const local = yield* pty(NodeTerminal.layer({}))
    const { owner: remoteOwner, service: remote } = yield* remotePty({ socket: daemon.socket, client: "bench" })
    const services = { local, remote } as const
    const owners = { local: owner, remote: remoteOwner } as const

    const opens = { local: [] as Array<number>, remote: [] as Array<number> }
    for (let i = 0; i < size(options, 20, 6) + 2; i++) {
      for (const side of ["local", "remote"] as const) {
        const service = services[side]
        const [opened, ms] = yield* timed(service.open(owners[side], { name: `open-${side}-${i}` }))
        yield* service.close(owners[side], Ids.SessionId.make(opened.sessionId))
        if (i >= 2) opens[side].push(ms)
      }
    }
    options.progress("daemon: open")

    const shells = {
      local: Ids.SessionId.make((yield* local.open(owner, { name: "rt-local" })).sessionId),
      remote: Ids.SessionId.make((yield* remote.open(remoteOwner, { name: "rt-remote" })).sessionId)
    }
    // The daemon's round trips are taken by a client process of its own holding only the remote layer (as
    // `mcp --daemon` does), in blocks interleaved with this process's in-process ones.
    const client = yield* roundTripClient(daemon.socket)
    const floor = yield* floorClient(daemon.dir)
    const trips = { local: [] as Array<number>, remote: [] as Array<number>, floor: [] as Array<number> }
    const n = size(options, 1000, 200)
    const blocks = 10
    for (let i = 0; i < 20; i++) yield* local.send(owner, shells.local, { text: "true" })
    for (let block = 0; block < blocks; block++) {
      for (let i = 0; i < n / blocks; i++) {
        const [, ms] = yield* timed(local.send(owner, shells.local, { text: "true" }))
        trips.local.push(ms)
      }
      trips.remote.push(...(yield* client.block(n / blocks)))
      trips.floor.push(...(yield* floor.block(n / blocks)))
    }
    options.progress("daemon: roundtrip")

    // Streaming: the same command in-process (its ingest: write → prompt) and through the daemon with a
    // client watching the session over the socket (write → the last byte at the watcher).
    const rounds = size(options, 5, 1)
    const ingest: Array<number> = []
    const watchedLocal: Array<number> = []
    const watched: Array<number> = []
    const remoteSend: Array<number> = []
    let streamed = 0
    let dropped = 0
    for (let round = 0; round < rounds; round++) {
      // Watched by the round-trip client, a process holding nothing but the remote layer (as `mcp --daemon`
      // or `console --daemon` is): its own shell runs the command while it watches it. (Watched from this
      // process, which also holds an in-process NodeTerminal, the rate was lower: the round trip's note.)
      const remoteWatch = yield* client.stream(LINES(options))
      if (remoteWatch.dropped > 0) dropped += remoteWatch.dropped
      streamed = remoteWatch.bytes
      watched.push(remoteWatch.rate)
      const bytes = remoteWatch.bytes
      const [, localMs] = yield* timed(local.send(owner, shells.local, { text: LINES(options), timeoutMs: 600_000 }))
      ingest.push(bytes / MiB / (localMs / 1000))
      // and in-process with a watcher in this process: what a watch costs without the socket
      watchedLocal.push((yield* watchedSend(local, owner, shells.local, LINES(options))).rate)
      // and the same command through the daemon with nobody watching (only the bounded result comes back)
      const unwatched = Ids.SessionId.make((yield* remote.open(remoteOwner, { name: `ingest-${round}` })).sessionId)
      const [, sendMs] = yield* timed(remote.send(remoteOwner, unwatched, { text: LINES(options), timeoutMs: 600_000 }))
      remoteSend.push(bytes / MiB / (sendMs / 1000))
      yield* remote.close(remoteOwner, unwatched)
      options.progress(`daemon: streaming round ${round + 1}/${rounds}`)
    }
    return {
      opens,
      trips,
      ingest,
      watchedLocal,
      watched,
      remoteSend,
      streamed,
      dropped
    }
  }).pipe(Effect.scoped)

/** The owner (a daemon) SIGKILLed while its sessions hold the survivors: until the last of them is gone. */
const reaper = (options: RunOptions) =>
  Effect.gen(function*() {
    const samples: Array<number> = []
    const counts: Array<number> = []
    for (let i = 0; i < size(options, 5, 2); i++) {
      const ms = yield* Effect.scoped(Effect.gen(function*() {
        const daemon = yield* serve
        const { owner: remoteOwner, service: remote } = yield* remotePty({ socket: daemon.socket })
        const tag = randomUUID()
        for (let s = 0; s < 2; s++) {
          const opened = yield* remote.open(remoteOwner, {})
          yield* remote.send(remoteOwner, Ids.SessionId.make(opened.sessionId), {
            text: `export TAG=${tag}; nohup sleep 300 >/dev/null 2>&1 & sh -c 'trap "" TERM HUP; sleep 300' & ` +
              "setsid sh -c '(sleep 300 &)'"
          })
        }
        yield* Effect.sleep(200)
        const victims = tagged(tag)
        counts.push(victims.length)
        const started = performance.now()
        daemon.child.kill("SIGKILL")
        while (victims.some(alive) && performance.now() - started < 10_000) {
          yield* promise(() => new Promise((resolve) => setImmediate(resolve)))
        }
        const elapsed = performance.now() - started
        for (const victim of victims.filter(alive)) process.kill(victim.pid, "SIGKILL")
        return elapsed
      }))
      samples.push(ms)
      options.progress(`daemon: reaper ${i + 1}`)
    }
    return { samples, counts }
  })

const ROUNDTRIP_TARGET = "p50 ≤ in-process p50 + daemon.rpc.floor p50 + 0.25 ms"
const STREAM_TARGET = "≥ 80 % of in-process ingest (MiB/s)"
const REAPER_TARGET = "≤ 1000 ms (every run)"

const rows = (options: RunOptions) =>
  Effect.gen(function*() {
    const m = yield* sideBySide(options)
    const openLocal: Metric = {
      name: "daemon.open.in-process",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(m.opens.local),
      compared: [],
      notes: ["open (first prompt) and close of a shell with NodeTerminal.layer in this process"]
    }
    const tripLocal: Metric = {
      name: "daemon.roundtrip.true.in-process",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(m.trips.local),
      compared: [],
      notes: ["PtyService.send of `true` in this process (interleaved with the daemon's, in blocks)"]
    }
    const ingest: Metric = {
      name: "daemon.ingest.in-process",
      group,
      kind: "baseline",
      unit: "MiB/s",
      ...distribution(m.ingest),
      compared: [],
      notes: [`\`${LINES(options)}\` in this process: write → prompt`]
    }
    const tripFloor: Metric = {
      name: "daemon.rpc.floor",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(m.trips.floor),
      compared: [],
      notes: [
        "a no-op Ping through the same @effect/rpc stack (socket protocol, msgpack, a Unix socket) between two " +
        "processes of their own, interleaved in blocks: what any call to the daemon costs before it does anything"
      ]
    }
    const watchLocal: Metric = {
      name: "daemon.watch.in-process",
      group,
      kind: "baseline",
      unit: "MiB/s",
      ...distribution(m.watchedLocal),
      compared: [comparePaired(m.watchedLocal, m.ingest, ingest)],
      notes: ["the same command in this process with a watcher in this process: write → the last byte at it"]
    }
    const trip = distribution(m.trips.remote)
    const extra = trip.p50 - tripLocal.p50!
    const stream = distribution(m.watched)
    // each round's watched rate against the same round's in-process ones: the drift between rounds cancels
    const streamCompared = comparePaired(m.watched, m.ingest, ingest)
    const reap = yield* reaper(options)
    const reaped = distribution(reap.samples)
    return [
      {
        name: "daemon.open",
        group,
        kind: "ours",
        unit: "ms",
        ...distribution(m.opens.remote),
        compared: [compare(distribution(m.opens.remote).value, openLocal)],
        notes: ["the same open and close through RemoteTerminal.layer to a real `serve` on a Unix socket"]
      },
      openLocal,
      {
        name: "daemon.roundtrip.true",
        group,
        kind: "ours",
        unit: "ms",
        ...trip,
        compared: [compare(trip.value, tripLocal), compare(trip.value, tripFloor)],
        target: {
          text: ROUNDTRIP_TARGET,
          met: allMet([tripFloor.p50 === undefined ? null : extra <= tripFloor.p50 + 0.25])
        },
        notes: [
          `through the daemon: p50 ${
            Stats.round(extra, 3)
          } ms more than in-process, of which ${tripFloor.p50} ms is the floor (a no-op @effect/rpc Ping between two processes, daemon.rpc.floor) and ${
            Stats.round(extra - tripFloor.p50!, 3)
          } ms the daemon's own (msgpack over the socket)`
        ]
      },
      tripLocal,
      tripFloor,
      {
        name: "daemon.watch.lines",
        group,
        kind: "ours",
        unit: "MiB/s",
        ...stream,
        compared: [streamCompared, comparePaired(m.watched, m.watchedLocal, watchLocal)],
        target: {
          text: STREAM_TARGET,
          met: allMet([streamCompared.ratio === null ? null : streamCompared.ratio >= 0.8])
        },
        notes: [
          `${
            Stats.round(m.streamed / MiB)
          } MiB of the pty's output to a client process (holding only the remote layer) watching its session over the ` +
          "socket: write → the last byte at the watcher",
          ...(m.dropped > 0 ? [`the watcher was dropped ${m.dropped} time(s): the rate is of what reached it`] : [])
        ]
      },
      {
        name: "daemon.ingest.lines",
        group,
        kind: "ours",
        unit: "MiB/s",
        ...distribution(m.remoteSend),
        compared: [comparePaired(m.remoteSend, m.ingest, ingest)],
        notes: ["the same command through the daemon, nobody watching: write → prompt, the bounded result back"]
      },
      ingest,
      watchLocal,
      {
        name: "daemon.reaper",
        group,
        kind: "ours",
        unit: "ms",
        ...reaped,
        compared: [],
        target: { text: REAPER_TARGET, met: allMet([reaped.max <= 1000]) },
        notes: [
          `a daemon SIGKILLed while 2 sessions hold a nohup sleep, a TERM/HUP-ignoring sh and a setsid ` +
          `double-fork (${reap.counts.join(", ")} processes): until the last is gone (pid + start time)`
        ]
      }
    ] satisfies Array<Metric>
  })

/** The group. */
export const daemon: Group = {
  name: group,
  description: "the daemon beside in-process: round trip (and its RPC floor), open, streaming to a watcher, the reaper",
  run: (options) =>
    guard(
      [
        { name: "daemon.roundtrip.true", group, unit: "ms", target: ROUNDTRIP_TARGET },
        { name: "daemon.watch.lines", group, unit: "MiB/s", target: STREAM_TARGET },
        { name: "daemon.reaper", group, unit: "ms", target: REAPER_TARGET }
      ],
      rows(options)
    )
}
