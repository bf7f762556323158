/**
 * Many machines: the same `@effect/rpc` group over NATS (a real 3-server cluster, `TestFleet`) and over a Unix
 * socket, in the same run, against the same forked machine: a no-op round trip and a stream's throughput
 * (paired rounds), with the floors NATS itself sets (a bare nats.js round trip, and that round trip right after
 * a call over the socket: what a call over NATS costs when its transport adds nothing) and the CPU each process
 * spends per call; the time from a machine's SIGKILL to `MachineUnavailable` on a call in flight, the time
 * until a machine is reached again after its client's NATS server is killed, the time until a joining
 * machine is in a client's directory, and the time of a placement.
 */
import { Discovery, Nats, NatsRpcClient, TestFleet } from "@agent-terminal/fleet"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FleetCli from "./FleetCli.js"
import { FleetRpcs } from "./FleetRpcs.js"
import * as Forked from "./Forked.js"
import type { Group, RunOptions } from "./Harness.js"
import { guard, now, size } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { comparePaired, distribution } from "./Metric.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "fleet"
const MiB = 2 ** 20

/** A forked `FleetPeer` with `config`; SIGKILLed with the scope. */
const peer = (config: object) =>
  Effect.acquireRelease(
    Effect.async<childProcess.ChildProcess, Error>((resume) => {
      const forked = Forked.fork("./FleetPeer.js", [JSON.stringify(config)])
      forked.once("message", () => resume(Effect.succeed(forked)))
      forked.once("exit", (code) => resume(Effect.fail(new Error(`the fleet peer exited with ${code}`))))
    }),
    (forked) =>
      Effect.async<void>((resume) => {
        if (forked.exitCode !== null || forked.signalCode !== null) return resume(Effect.void)
        forked.once("exit", () => resume(Effect.void))
        forked.kill("SIGKILL")
      })
  )

const natsClient = (connection: Nats.Service, machine: string) =>
  NatsRpcClient.make(FleetRpcs, { machine }).pipe(
    Effect.retry({
      while: (error) => error._tag === "MachineUnavailable",
      schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds"))
    }),
    Effect.provideService(Nats.Nats, connection),
    Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack)
  )

const socketClient = (socket: string) =>
  Effect.flatMap(
    Layer.build(
      RpcClient.layerProtocolSocket({ retryTransientErrors: false }).pipe(
        Layer.provide(NodeSocket.layerNet({ path: socket })),
        Layer.provide(RpcSerialization.layerMsgPack)
      )
    ),
    (context) => RpcClient.make(FleetRpcs, { disableTracing: true }).pipe(Effect.provide(context))
  )

type Pinger = { readonly Ping: (payload: { readonly n: number }) => Effect.Effect<unknown, unknown> }
type Flooder = {
  readonly Flood: (payload: { readonly chunks: number; readonly bytes: number }) => Stream.Stream<Uint8Array, unknown>
}

const pings = (client: Pinger, n: number) =>
  Effect.gen(function*() {
    const samples: Array<number> = []
    for (let i = 0; i < n; i++) {
      const started = now()
      yield* client.Ping({ n: i })
      samples.push(now() - started)
    }
    return samples
  })

/** MiB/s of one flood of `total` bytes in chunks of `bytes`. */
const flood = (client: Flooder, total: number, bytes: number) =>
  Effect.gen(function*() {
    const started = now()
    let received = 0
    yield* Stream.runForEach(
      client.Flood({ chunks: Math.ceil(total / bytes), bytes }),
      (chunk) => Effect.sync(() => (received += chunk.length))
    )
    return received / MiB / ((now() - started) / 1000)
  })

/**
 * The floor of NATS itself: a bare request to the peer's echo (machine m4's subject), answered with `bytes`
 * bytes on this client's inbox, through the same servers as the protocol's calls.
 */
const floorOf = (connection: Nats.Service) =>
  Effect.gen(function*() {
    const inbox = "agent-terminal.inbox.c1.floor"
    let answered: (() => void) | undefined
    connection.connection.subscribe(inbox, { callback: () => answered?.() })
    yield* Effect.promise(() => connection.connection.flush())
    const request = new Uint8Array(4)
    const ask = (bytes: number) =>
      Effect.async<void>((resume) => {
        answered = () => resume(Effect.void)
        new DataView(request.buffer).setUint32(0, bytes)
        connection.connection.publish("agent-terminal.m.m4.rpc", request, { reply: inbox })
      })
    return {
      Ping: (_: { readonly n: number }) => ask(0),
      Flood: ({ bytes, chunks }: { readonly chunks: number; readonly bytes: number }) =>
        Stream.repeatEffect(Effect.as(ask(bytes), new Uint8Array(bytes))).pipe(Stream.take(chunks))
    }
  })

type Mode = "socket" | "nats" | "floor" | "bound"

/** CPU per call of the client (this process), the machine and the NATS servers, µs. */
interface Cpu {
  client: number
  machine: number
  servers: number
  calls: number
}

const cpuMs = (pids: ReadonlyArray<number | undefined>) =>
  pids.reduce<number>((total, pid) => total + (pid === undefined ? 0 : Proc.stat(pid)?.cpuMs ?? 0), 0)

/** `n` pings of `client`, adding the CPU every process of the call spent to `cpu`. */
const pingsCounted = (
  client: Pinger,
  n: number,
  cpu: Cpu,
  pids: { readonly machine: number | undefined; readonly servers: () => ReadonlyArray<number | undefined> }
) =>
  Effect.gen(function*() {
    const client0 = process.cpuUsage()
    const machine0 = cpuMs([pids.machine])
    const servers0 = cpuMs(pids.servers())
    const samples = yield* pings(client, n)
    const client1 = process.cpuUsage(client0)
    cpu.client += (client1.user + client1.system) / 1000
    cpu.machine += cpuMs([pids.machine]) - machine0
    cpu.servers += cpuMs(pids.servers()) - servers0
    cpu.calls += n
    return samples
  })

const cpuNote = (cpu: Cpu) => {
  const per = (ms: number) => Math.round(ms / cpu.calls * 1000)
  return `CPU per call: client ${per(cpu.client)} µs, machine ${per(cpu.machine)} µs, NATS servers ${
    per(cpu.servers)
  } µs (${cpu.calls} calls; /proc times, 10 ms ticks)`
}

const measure = (options: RunOptions) =>
  Effect.gen(function*() {
    const fleet = yield* TestFleet.make()
    const [n1, n2] = [fleet.servers[0]!, fleet.servers[1]!]
    const socket = path.join(fleet.dir, "peer.sock")
    // The machine on one server, the client on another: every call crosses a route, as between two hosts.
    const machine = yield* peer({
      socket,
      nats: fleet.connectOptions("m1", { servers: [n2.url] }),
      machine: "m1",
      floor: fleet.connectOptions("m4", { servers: [n2.url] })
    })
    const connection = yield* Nats.make(fleet.connectOptions("c1", { servers: [n1.url] }))
    const overNats = yield* natsClient(connection, "m1")
    const overSocket = yield* socketClient(socket)
    const floor = yield* floorOf(connection)
    // A call over the socket, then the bare NATS round trip: the two costs a call over NATS cannot avoid,
    // in the same processes, one right after the other.
    const bound: Pinger = { Ping: (payload) => Effect.zipRight(overSocket.Ping(payload), floor.Ping(payload)) }
    const clients: Record<Mode, Pinger> = { socket: overSocket, nats: overNats, floor, bound }
    const modes = ["socket", "nats", "floor", "bound"] as const
    for (const mode of modes) yield* pings(clients[mode], 300)

    options.progress("fleet: round trips, socket, NATS, the bare NATS floor and the bound in alternate blocks")
    const trips = { socket: [], nats: [], floor: [], bound: [] } as Record<Mode, Array<number>>
    const cpu = Object.fromEntries(
      modes.map((mode) => [mode, { client: 0, machine: 0, servers: 0, calls: 0 }])
    ) as Record<Mode, Cpu>
    const pids = { machine: machine.pid, servers: () => fleet.servers.map((server) => server.pid()) }
    const blocks = size(options, 10, 4)
    const perBlock = size(options, 200, 100)
    for (let i = 0; i < blocks; i++) {
      for (const mode of modes) {
        trips[mode].push(...(yield* pingsCounted(clients[mode], perBlock, cpu[mode], pids)))
      }
    }

    options.progress("fleet: a stream's throughput, socket, NATS and the floor in alternate rounds")
    const total = size(options, 64, 16) * MiB
    const chunk = 16 * 1024
    const rates = { socket: [] as Array<number>, nats: [] as Array<number>, floor: [] as Array<number> }
    yield* flood(overSocket, 2 * MiB, chunk)
    yield* flood(overNats, 2 * MiB, chunk)
    yield* flood(floor, 2 * MiB, chunk)
    for (let i = 0; i < size(options, 5, 3); i++) {
      rates.socket.push(yield* flood(overSocket, total, chunk))
      rates.nats.push(yield* flood(overNats, total, chunk))
      rates.floor.push(yield* flood(floor, total, chunk))
    }

    options.progress("fleet: SIGKILL of a machine with a call in flight")
    const unavailable: Array<number> = []
    for (let i = 0; i < size(options, 5, 2); i++) {
      const scope = yield* Scope.make()
      const machine = yield* peer({ nats: fleet.connectOptions("m2"), machine: "m2" }).pipe(Scope.extend(scope))
      const victim = yield* natsClient(connection, "m2").pipe(Scope.extend(scope))
      const call = yield* Effect.fork(Effect.exit(victim.Sleep({ ms: 60_000 })))
      yield* Effect.sleep("300 millis")
      const killed = now()
      machine.kill("SIGKILL")
      const exit = yield* Fiber.join(call)
      const failedAfter = now() - killed
      yield* Scope.close(scope, Exit.void)
      if (!Exit.isFailure(exit) || !String(exit).includes("MachineUnavailable")) {
        return yield* Effect.fail(new Error(`the call ended otherwise: ${String(exit)}`))
      }
      unavailable.push(failedAfter)
    }

    options.progress("fleet: SIGKILL of the client's NATS server, until the machine answers again")
    const failover: Array<number> = []
    for (let i = 0; i < size(options, 3, 1); i++) {
      const current = fleet.servers.find((server) => connection.connection.getServer().endsWith(`:${server.port}`))
      if (current === undefined) return yield* Effect.fail(new Error("the client's server is not the fleet's"))
      yield* overNats.Ping({ n: 0 })
      const killed = now()
      yield* current.kill("SIGKILL")
      yield* overNats.Ping({ n: 1 }).pipe(Effect.retry(Schedule.spaced("5 millis").pipe(Schedule.upTo("20 seconds"))))
      failover.push(now() - killed)
      yield* current.start
      yield* Effect.sleep("1 second")
    }

    options.progress("fleet: a machine joins; placement")
    const directory = yield* Discovery.makeDirectory().pipe(Effect.provideService(Nats.Nats, connection))
    const joins: Array<number> = []
    const announcer = yield* Nats.make(fleet.connectOptions("m3"))
    for (let i = 0; i < size(options, 5, 2); i++) {
      const scope = yield* Scope.make()
      const started = now()
      yield* Discovery.announce({
        machine: "m3",
        figures: Effect.succeed({
          run: `r${i}`,
          terminals: 0,
          maxTerminals: 64,
          free: 64,
          load: 0,
          memoryFree: 0,
          labels: []
        })
      }).pipe(Effect.provideService(Nats.Nats, announcer), Scope.extend(scope))
      yield* directory.machines.pipe(
        Effect.repeat({ until: (live) => live.some((m) => m.machine === "m3"), schedule: Schedule.spaced("1 millis") })
      )
      joins.push(now() - started)
      yield* Scope.close(scope, Exit.void)
      yield* directory.machines.pipe(
        Effect.repeat({ until: (live) => !live.some((m) => m.machine === "m3"), schedule: Schedule.spaced("1 millis") })
      )
    }
    const placements: Array<number> = []
    yield* Discovery.announce({
      machine: "m3",
      figures: Effect.succeed({
        run: "r",
        terminals: 0,
        maxTerminals: 64,
        free: 64,
        load: 0,
        memoryFree: 0,
        labels: []
      })
    }).pipe(Effect.provideService(Nats.Nats, announcer))
    yield* directory.place().pipe(Effect.retry(Schedule.spaced("10 millis").pipe(Schedule.upTo("5 seconds"))))
    for (let i = 0; i < 1_000; i++) {
      const started = now()
      yield* directory.place()
      placements.push(now() - started)
    }
    fs.rmSync(socket, { force: true })
    return { trips, cpu, rates, unavailable, failover, joins, placements }
  }).pipe(Effect.scoped)

const rows = [
  { name: "fleet.rpc.socket", group, unit: "ms" },
  { name: "fleet.rpc.nats.floor", group, unit: "ms" },
  { name: "fleet.rpc.nats.bound", group, unit: "ms" },
  { name: "fleet.rpc.nats", group, unit: "ms", target: "≤ 3× the Unix socket's round trip (p50, paired)" },
  { name: "fleet.stream.socket", group, unit: "MiB/s" },
  { name: "fleet.stream.nats.floor", group, unit: "MiB/s" },
  { name: "fleet.stream.nats", group, unit: "MiB/s", target: "≥ 0.5× the Unix socket's throughput (paired)" },
  { name: "fleet.unavailable", group, unit: "ms", target: "MachineUnavailable ≤ 1500 ms after a machine's SIGKILL" },
  {
    name: "fleet.failover",
    group,
    unit: "ms",
    target: "the machine answers again ≤ 1000 ms after a NATS server's SIGKILL"
  },
  { name: "fleet.join", group, unit: "ms", target: "a joining machine is in placement ≤ 1000 ms after it starts" },
  { name: "fleet.placement", group, unit: "ms" }
]

const toMetrics = (m: Effect.Effect.Success<ReturnType<typeof measure>>): ReadonlyArray<Metric> => {
  const base = (name: string, unit: string, kind: Metric["kind"], samples: ReadonlyArray<number>) => ({
    name,
    group,
    kind,
    unit,
    ...distribution(samples),
    compared: [] as Metric["compared"],
    notes: [] as Array<string>
  })
  const socketTrip = base("fleet.rpc.socket", "ms", "baseline", m.trips.socket)
  const floorTrip = base("fleet.rpc.nats.floor", "ms", "baseline", m.trips.floor)
  const boundTrip = base("fleet.rpc.nats.bound", "ms", "baseline", m.trips.bound)
  const natsTrip = base("fleet.rpc.nats", "ms", "ours", m.trips.nats)
  const tripRatio = comparePaired(m.trips.nats, m.trips.socket, socketTrip)
  const socketRate = base("fleet.stream.socket", "MiB/s", "baseline", m.rates.socket)
  const floorRate = base("fleet.stream.nats.floor", "MiB/s", "baseline", m.rates.floor)
  const natsRate = base("fleet.stream.nats", "MiB/s", "ours", m.rates.nats)
  const rateRatio = comparePaired(m.rates.nats, m.rates.socket, socketRate)
  const target = (name: string) => rows.find((row) => row.name === name)!.target!
  const worst = (samples: ReadonlyArray<number>) => Stats.summarize(samples).max
  return [
    {
      ...socketTrip,
      notes: ["a no-op Ping, @effect/rpc socket protocol over a Unix socket, msgpack", cpuNote(m.cpu.socket)]
    },
    {
      ...floorTrip,
      compared: [comparePaired(m.trips.floor, m.trips.socket, socketTrip)],
      notes: [
        "a bare nats.js request to an echo on the machine's server, no @effect/rpc: what NATS itself costs",
        cpuNote(m.cpu.floor)
      ]
    },
    {
      ...boundTrip,
      compared: [comparePaired(m.trips.bound, m.trips.socket, socketTrip)],
      notes: [
        "the socket's Ping, then the bare NATS round trip, back to back: a call over NATS whose transport adds " +
        "nothing to @effect/rpc's work and NATS's (it keeps the socket's own send and read, which NATS replaces)",
        cpuNote(m.cpu.bound)
      ]
    },
    {
      ...natsTrip,
      compared: [
        tripRatio,
        comparePaired(m.trips.nats, m.trips.floor, floorTrip),
        comparePaired(m.trips.nats, m.trips.bound, boundTrip)
      ],
      target: { text: target("fleet.rpc.nats"), met: tripRatio.ratio === null ? null : tripRatio.ratio <= 3 },
      notes: [
        "the same Ping over NATS: client → its server (n1) → route → the machine's server (n2) → machine",
        cpuNote(m.cpu.nats)
      ]
    },
    { ...socketRate, notes: ["a Flood stream of 16 KiB chunks, acked chunk by chunk"] },
    {
      ...floorRate,
      compared: [comparePaired(m.rates.floor, m.rates.socket, socketRate)],
      notes: ["bare nats.js: a 4-byte request answered with 16 KiB, one after another (an acked stream's floor)"]
    },
    {
      ...natsRate,
      compared: [rateRatio, comparePaired(m.rates.nats, m.rates.floor, floorRate)],
      target: { text: target("fleet.stream.nats"), met: rateRatio.ratio === null ? null : rateRatio.ratio >= 0.5 }
    },
    {
      ...base("fleet.unavailable", "ms", "ours", m.unavailable),
      target: { text: target("fleet.unavailable"), met: worst(m.unavailable) <= 1500 },
      notes: ["a Sleep call in flight; judged on the worst sample"]
    },
    {
      ...base("fleet.failover", "ms", "ours", m.failover),
      target: { text: target("fleet.failover"), met: worst(m.failover) <= 1000 },
      notes: ["from the SIGKILL of the client's server to the next Ping answered (tried every 5 ms); worst sample"]
    },
    {
      ...base("fleet.join", "ms", "ours", m.joins),
      target: { text: target("fleet.join"), met: worst(m.joins) <= 1000 },
      notes: ["from the machine's first announcement to the client's directory listing it; worst sample"]
    },
    { ...base("fleet.placement", "ms", "ours", m.placements), notes: ["Directory.place over the live set"] }
  ]
}

/** The group's run (`Bench.ts` names it and loads this module only to run it). */
export const fleet: Pick<Group, "run"> = {
  run: (options) =>
    Effect.zipWith(
      guard(rows, Effect.map(measure(options), toMetrics)),
      FleetCli.run(options),
      (transport, endToEnd) => [...transport, ...endToEnd]
    )
}
