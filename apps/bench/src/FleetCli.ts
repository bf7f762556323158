/**
 * The fleet end to end, as a user runs it: one real `agent-terminal serve --nats` machine, reached over NATS
 * (`FleetTerminal`, the client on another server of a 3-server cluster than the machine's) and over the same
 * daemon's Unix socket (`RemoteTerminal`), in the same run, in alternate blocks: an open (then its close) and
 * a `true` send to a bash shell. The socket is the floor; the rows say what NATS adds to the daemon's work.
 * And the time from an open to its entry in the fleet registry.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { RemoteTerminal } from "@agent-terminal/daemon"
import { FleetRegistry, FleetTerminal, Nats, TestFleet } from "@agent-terminal/fleet"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { RunOptions } from "./Harness.js"
import { guard, now, owner, size, timed } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { compare, comparePaired, distribution } from "./Metric.js"

const group = "fleet"
const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../cli/dist/bin.js")

/**
 * `serve --nats URL --machine NAME` with its state in the fleet's directory (kept across its restarts), and
 * the run it announced; stopped (SIGTERM) with the scope unless it was killed before.
 */
const machine = (fleet: TestFleet.Fleet, name: "m1" | "m2", natsUrl: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = path.join(fleet.dir, `machine-${name}`)
      const socket = path.join(dir, "run", "agent-terminal.sock")
      const child = spawn(process.execPath, [
        bin,
        "serve",
        "--socket",
        socket,
        "--nats",
        natsUrl,
        "--machine",
        name,
        "--nats-nkey",
        fleet.keys[name].seedFile
      ], {
        env: { ...process.env, AGENT_TERMINAL_STATE_DIR: path.join(dir, "state") },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let log = ""
      child.stderr.on("data", (chunk) => (log += chunk))
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      const deadline = Date.now() + 30_000 // the wall clock: a Promise polling a real process's log
      while (!log.includes("daemon: serving on") && Date.now() < deadline && child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      if (!log.includes("daemon: serving on")) throw new Error(`serve --nats did not start: ${log}`)
      const run = /serving over NATS \(run ([A-Za-z0-9]+)/.exec(log)?.[1]
      return { dir, socket, child, exited, run }
    }),
    ({ child, exited }) =>
      Effect.promise(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
        await exited
      })
  )

/** The failure an exit ended with: its tag, a typed failure's or a defect's. */
const tagOf = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "success"
  const error = Option.getOrUndefined(Cause.failureOption(exit.cause)) ??
    Option.getOrUndefined(Cause.dieOption(exit.cause))
  return String((error as { readonly _tag?: unknown } | undefined)?._tag ?? "unknown")
}

/** Until `check` holds (looked at every 5 ms, at most `ms`). */
const until = (check: Effect.Effect<boolean>, ms = 15_000) =>
  Effect.gen(function*() {
    const started = now()
    while (!(yield* check) && now() - started < ms) yield* Effect.sleep("5 millis")
  })

const measure = (options: RunOptions) =>
  Effect.gen(function*() {
    const fleet = yield* TestFleet.make()
    yield* FleetRegistry.createBucket({ replicas: 3 }).pipe(Effect.provide(Nats.layer(fleet.connectOptions("admin"))))
    const daemon = yield* machine(fleet, "m1", fleet.servers[1]!.url)
    const overSocket = yield* Effect.flatMap(
      Layer.build(RemoteTerminal.layer({ socket: daemon.socket, client: "bench" })),
      (built) =>
        Effect.all({
          service: Effect.provide(PtyService.PtyService, built),
          owner: Effect.map(Effect.provide(RemoteTerminal.Connected, built), (connected) => connected.owner)
        })
    )
    // the client on n1 or n3 (it picks one; the cluster may tell it of n2 later), the machines on n2
    const fleetClient = yield* Layer.build(
      FleetTerminal.layer({ client: "bench", discoveryWaitMs: 10_000 }).pipe(
        Layer.provideMerge(
          Nats.layer(fleet.connectOptions("c1", { servers: [fleet.servers[0]!.url, fleet.servers[2]!.url] }))
        )
      )
    )
    const overNats = Context.get(fleetClient, PtyService.PtyService)
    const { directory } = Context.get(fleetClient, FleetTerminal.Fleet)
    const connection = Context.get(fleetClient, Nats.Nats).connection
    const sides = {
      socket: { service: overSocket.service, owner: overSocket.owner },
      nats: { service: overNats, owner }
    } as const
    const order = ["socket", "nats"] as const

    options.progress("fleet: open through serve --nats, over NATS and over its socket, alternately")
    const opens = { socket: [] as Array<number>, nats: [] as Array<number> }
    for (let i = 0; i < size(options, 20, 6) + 2; i++) {
      for (const side of order) {
        const { owner: who, service } = sides[side]
        const [opened, ms] = yield* timed(service.open(who, { name: `open-${side}-${i}` }))
        yield* service.close(who, Ids.SessionId.make(opened.sessionId))
        if (i >= 2) opens[side].push(ms)
      }
    }

    options.progress("fleet: a true send through serve --nats, over NATS and over its socket, in alternate blocks")
    const shells = {
      socket: Ids.SessionId.make(
        (yield* sides.socket.service.open(sides.socket.owner, { name: "rt-socket" })).sessionId
      ),
      nats: Ids.SessionId.make((yield* sides.nats.service.open(owner, { name: "rt-nats" })).sessionId)
    }
    for (const side of order) {
      for (let i = 0; i < 50; i++) yield* sides[side].service.send(sides[side].owner, shells[side], { text: "true" })
    }
    const sends = { socket: [] as Array<number>, nats: [] as Array<number> }
    const blocks = 10
    const perBlock = size(options, 50, 20)
    for (let block = 0; block < blocks; block++) {
      for (const side of order) {
        for (let i = 0; i < perBlock; i++) {
          const [, ms] = yield* timed(sides[side].service.send(sides[side].owner, shells[side], { text: "true" }))
          sends[side].push(ms)
        }
      }
    }

    options.progress("fleet: from an open over NATS to its entry in the fleet registry")
    const reading = yield* Nats.make(fleet.connectOptions("c2", { servers: [fleet.servers[0]!.url] }))
    const registry = yield* FleetRegistry.makeReader().pipe(Effect.provideService(Nats.Nats, reading))
    const recorded: Array<number> = []
    for (let i = 0; i < size(options, 10, 3); i++) {
      const opened = yield* overNats.open(owner, { name: `registry-${i}` })
      const started = now()
      while (Option.isNone(yield* registry.get("m1", opened.sessionId)) && now() - started < 10_000) {
        yield* Effect.sleep("2 millis")
      }
      recorded.push(now() - started)
      yield* overNats.close(owner, Ids.SessionId.make(opened.sessionId))
    }

    options.progress("fleet: a serve --nats machine SIGKILLed under a send in flight, through FleetTerminal")
    const unavailable: Array<number> = []
    const unavailableTags: Array<string> = []
    const survivorBefore: Array<number> = []
    const survivorDuring: Array<number> = []
    const survivorTags: Array<string> = []
    /** `true` sends to m1's shell (opened before m2 first joined) for 1.5 s, each timed; a failure noted. */
    const survivorSends = (into: Array<number>, failures: Array<string>) =>
      Effect.gen(function*() {
        const started = now()
        while (now() - started < 1_500) {
          const [exit, ms] = yield* timed(Effect.exit(overNats.send(owner, shells.nats, { text: "true" })))
          if (Exit.isSuccess(exit)) into.push(ms)
          else failures.push(tagOf(exit))
        }
      })
    for (let i = 0; i < size(options, 3, 1); i++) {
      const m2 = yield* machine(fleet, "m2", fleet.servers[1]!.url)
      yield* until(Effect.map(directory.machines, (all) => all.some((m) => m.machine === "m2" && m.run === m2.run)))
      const opened = yield* overNats.open(owner, { name: `doomed-${i}` }).pipe(
        FleetTerminal.placedOn({ machine: "m2" })
      )
      const inFlight = yield* Effect.fork(
        Effect.exit(overNats.send(owner, Ids.SessionId.make(opened.sessionId), { text: "sleep 60", timeoutMs: 90_000 }))
      )
      yield* Effect.sleep("300 millis")
      // m1's sends for 1.5 s before the kill and for 1.5 s from it: the survivor's round trip meanwhile
      yield* survivorSends(survivorBefore, survivorTags)
      const killed = now()
      m2.child.kill("SIGKILL")
      const survivor = yield* Effect.fork(survivorSends(survivorDuring, survivorTags))
      const exit = yield* Fiber.join(inFlight)
      unavailable.push(now() - killed)
      unavailableTags.push(tagOf(exit))
      yield* Fiber.join(survivor)
      yield* Effect.promise(() => m2.exited)
    }

    options.progress("fleet: the client's nats-server SIGKILLed, until a send through FleetTerminal answers again")
    const failover: Array<number> = []
    const failoverTags: Array<string> = []
    const shell = shells.nats
    for (let i = 0; i < size(options, 3, 1); i++) {
      const own = fleet.servers.find((server) => connection.getServer() === `${server.host}:${server.port}`)
      // the machine's own server is another failure (the machine reconnects too): not this row's
      if (own === undefined || own === fleet.servers[1]) continue
      const killed = now()
      yield* own.kill("SIGKILL")
      for (;;) {
        const exit = yield* Effect.exit(overNats.send(owner, shell, { text: "true" }))
        if (Exit.isSuccess(exit)) break
        failoverTags.push(tagOf(exit))
        if (now() - killed > 15_000) return yield* Effect.fail(new Error("no answer 15 s after a failover"))
        yield* Effect.sleep("5 millis")
      }
      failover.push(now() - killed)
      yield* own.start
      yield* Effect.sleep("1 second")
    }
    return {
      opens,
      sends,
      recorded,
      unavailable,
      unavailableTags,
      survivorBefore,
      survivorDuring,
      survivorTags,
      failover,
      failoverTags
    }
  }).pipe(Effect.scoped)

/** The rows, in order. */
export const rows: ReadonlyArray<{ readonly name: string; readonly group: string; readonly unit: string }> = [
  { name: "fleet.cli.open.socket", group, unit: "ms" },
  { name: "fleet.cli.open.nats", group, unit: "ms" },
  { name: "fleet.cli.send.socket", group, unit: "ms" },
  { name: "fleet.cli.send.nats", group, unit: "ms" },
  { name: "fleet.cli.registry", group, unit: "ms" },
  { name: "fleet.cli.unavailable", group, unit: "ms" },
  { name: "fleet.cli.survivor.before", group, unit: "ms" },
  { name: "fleet.cli.survivor.during", group, unit: "ms" },
  { name: "fleet.cli.failover", group, unit: "ms" }
]

const toMetrics = (m: Effect.Effect.Success<ReturnType<typeof measure>>): ReadonlyArray<Metric> => {
  const base = (name: string, kind: Metric["kind"], samples: ReadonlyArray<number>, notes: ReadonlyArray<string>) => ({
    name,
    group,
    kind,
    unit: "ms",
    ...distribution(samples),
    compared: [] as Metric["compared"],
    notes
  })
  const openSocket = base("fleet.cli.open.socket", "baseline", m.opens.socket, [
    "serve --nats's own Unix socket (RemoteTerminal): open a bash terminal, then close it"
  ])
  const sendSocket = base("fleet.cli.send.socket", "baseline", m.sends.socket, [
    "serve --nats's own Unix socket (RemoteTerminal): send `true` to a bash terminal, until its prompt"
  ])
  const survivorBefore = base("fleet.cli.survivor.before", "baseline", m.survivorBefore, [
    "true sends to a terminal on m1, over NATS, for 1.5 s before m2 (the other machine) is SIGKILLed"
  ])
  const survivorDuringP50 = distribution(m.survivorDuring).value
  return [
    openSocket,
    {
      ...base("fleet.cli.open.nats", "ours", m.opens.nats, [
        "the same machine over NATS (FleetTerminal; client on n1, machine on n2): open, then close"
      ]),
      compared: [comparePaired(m.opens.nats, m.opens.socket, openSocket)]
    },
    sendSocket,
    {
      ...base("fleet.cli.send.nats", "ours", m.sends.nats, [
        "the same machine over NATS (FleetTerminal; client on n1, machine on n2): send `true`"
      ]),
      compared: [comparePaired(m.sends.nats, m.sends.socket, sendSocket)]
    },
    base("fleet.cli.registry", "ours", m.recorded, [
      "from an open's answer to its entry readable in the registry's KV (read every 2 ms): written off the " +
      "data path at each open and close, and every second for exits"
    ]),
    {
      ...base("fleet.cli.unavailable", "ours", m.unavailable, [
        "a serve --nats machine SIGKILLed under a send in flight (sleep 60): until the send fails, through " +
        `FleetTerminal; it failed with ${[...new Set(m.unavailableTags)].join(", ")}`
      ]),
      detail: { errors: m.unavailableTags }
    },
    survivorBefore,
    {
      ...base("fleet.cli.survivor.during", "ours", m.survivorDuring, [
        "the same sends to m1 for 1.5 s from m2's SIGKILL, while m2's send in flight fails" +
        (m.survivorTags.length === 0 ? " (none of m1's failed)" : `; m1's failed: ${m.survivorTags.join(", ")}`)
      ]),
      compared: [compare(survivorDuringP50, survivorBefore)],
      target: {
        text: "m1's p50 within 20 % of before while m2 dies, and no error",
        met: survivorBefore.value === null || survivorDuringP50 === null
          ? null
          : m.survivorTags.length === 0 && survivorDuringP50 <= 1.2 * survivorBefore.value
      },
      detail: { errors: m.survivorTags }
    },
    {
      ...base("fleet.cli.failover", "ours", m.failover, [
        "the client's nats-server SIGKILLed: until a true send through FleetTerminal answers again (tried every " +
        `5 ms; meanwhile ${[...new Set(m.failoverTags)].join(", ") || "no error"})`
      ]),
      detail: { errors: m.failoverTags.length }
    }
  ]
}

/** The rows of a run (a failure makes each row say why). */
export const run = (options: RunOptions): Effect.Effect<ReadonlyArray<Metric>> =>
  guard(rows, Effect.map(measure(options), toMetrics))
