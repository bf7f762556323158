/**
 * Issue 29's acceptance with real processes: 3 nats-servers clustered (routes, JetStream), 3 machines that
 * are real `agent-terminal serve --nats` processes, clients through `FleetTerminal` and `mcp --nats`.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { Protocol } from "@agent-terminal/daemon"
import { FleetRegistry, FleetTerminal, Nats, NatsRpcClient } from "@agent-terminal/fleet"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { spawnSync } from "node:child_process"
import { built, cliBin, connectMcp, makeHome, waitUntil } from "../daemon/support.js"
import { textOf } from "../support/mcp.js"
import { transcript } from "../support/transcript.js"
import {
  alive,
  anyOwner,
  descendsFrom,
  errorOf,
  fleetClient,
  type Machine,
  startMachine,
  startNats
} from "./support.js"

type Client = ReturnType<typeof fleetClient>

describe.runIf(built)("machines joined through NATS (real nats-servers, real serve --nats)", () => {
  let nats: Awaited<ReturnType<typeof startNats>>
  const machines: Array<Machine> = []
  const clients: Array<Client> = []
  const machine = (name: string) => machines.find((m) => m.name === name)!

  const client = (user: "c1" | "c2", owner?: string) => {
    const made = fleetClient(nats.fleet, user, owner)
    clients.push(made)
    return made
  }
  /** The client's services, once it has heard from every machine up now. */
  const pty = async (c: Client) => {
    const up = machines.filter((m) => m.daemon.child.exitCode === null && m.daemon.child.signalCode === null).length
    await waitUntil(async () => (await machinesOf(c)).length >= up, 10_000)
    return c.runPromise(PtyService.PtyService)
  }
  const machinesOf = (c: Client) =>
    c.runPromise(Effect.flatMap(FleetTerminal.Fleet, (fleet) => fleet.directory.machines))

  beforeAll(async () => {
    nats = await startNats()
    for (const name of ["m1", "m2", "m3"] as const) machines.push(await startMachine(nats.fleet, name))
  }, 120_000)

  afterAll(async () => {
    for (const c of clients) await c.dispose()
    for (const m of machines) {
      await m.daemon.stop()
      m.home.dispose()
    }
    await nats?.close()
  }, 60_000)

  it("places new terminals where there is most room, and ids name their machine and run", async () => {
    const c = client("c1")
    const service = await pty(c)
    await waitUntil(async () => (await machinesOf(c)).length === 3, 10_000)
    const places = new Set<string>()
    for (let i = 0; i < 3; i++) {
      const opened = await c.runPromise(service.open(anyOwner, { name: `spread-${i}` }))
      const [name, run] = opened.sessionId.split("~")
      const announced = (await machinesOf(c)).find((m) => m.machine === name)
      expect(announced?.run).toBe(run)
      places.add(name!)
      // the next open sees this one in the machine's announced room
      await waitUntil(async () => ((await machinesOf(c)).find((m) => m.machine === name)?.terminals ?? 0) > 0)
    }
    expect([...places].sort()).toEqual(["m1", "m2", "m3"])
    const listed = await c.runPromise(service.list(anyOwner))
    expect(listed.map((s) => s.sessionId.split("~")[0]).sort()).toEqual(["m1", "m2", "m3"])
  }, 60_000)

  it(
    "runs a terminal opened with machine m2 on m2 (its pid in m2's process tree), reached by id from a second client",
    async () => {
      const first = client("c1", "alice")
      const service = await pty(first)
      const opened = await first.runPromise(
        service.open(anyOwner, { name: "on-m2" }).pipe(FleetTerminal.placedOn({ machine: "m2" }))
      )
      expect(opened.sessionId.startsWith("m2~")).toBe(true)
      expect(descendsFrom(opened.pid, machine("m2").daemon.pid)).toBe(true)
      expect(descendsFrom(opened.pid, machine("m1").daemon.pid)).toBe(false)

      // a second client of the same NATS user and owner reaches it by id
      const second = client("c1", "alice")
      const other = await pty(second)
      const sent = await second.runPromise(
        other.send(anyOwner, opened.sessionId as never, { text: "echo from-second" })
      )
      expect(sent.output).toContain("from-second")

      // another NATS user naming the same owner is another owner: the terminal is not theirs
      const stranger = client("c2", "alice")
      const strangerPty = await pty(stranger)
      const refused = await stranger.runPromiseExit(
        strangerPty.send(anyOwner, opened.sessionId as never, { text: "echo nope" })
      )
      expect(errorOf(refused)?._tag).toBe("ForeignSession")
    },
    60_000
  )

  it("closes an anonymous client's terminals when its NATS connection closes, and writes the registry", async () => {
    const c = fleetClient(nats.fleet, "c2")
    const service = await pty(c)
    const opened = await c.runPromise(
      service.open(anyOwner, { name: "anonymous" }).pipe(FleetTerminal.placedOn({ machine: "m3" }))
    )
    expect(alive(opened.pid)).toBe(true)
    const entry = () =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const connection = yield* Nats.make(nats.fleet.connectOptions("c1"))
        const registry = yield* FleetRegistry.makeReader().pipe(Effect.provideService(Nats.Nats, connection))
        return yield* registry.get("m3", opened.sessionId)
      })))
    // written off the data path: readable once the machine's follower wrote it
    expect(await waitUntil(async () => Option.isSome(await entry()), 10_000)).toBe(true)
    const written = Option.getOrThrow(await entry())
    expect({ machine: written.machine, status: written.status }).toEqual({ machine: "m3", status: "open" })

    // the client goes: NATS reports its connection closed, the machine ends its session and closes its owner
    await c.dispose()
    expect(await waitUntil(() => !alive(opened.pid), 15_000)).toBe(true)
    expect(
      await waitUntil(async () => Option.getOrUndefined(await entry())?.status === "closed", 10_000)
    ).toBe(true)
  }, 60_000)

  it("doctor --nats checks the connection, the credentials and the permissions, naming the machines", async () => {
    const doctor = (args: ReadonlyArray<string>) => {
      const run = spawnSync(process.execPath, [
        cliBin,
        "doctor",
        "--json",
        "--nats",
        nats.fleet.urls.join(","),
        ...args
      ], {
        encoding: "utf8",
        timeout: 30_000
      })
      const report = JSON.parse(run.stdout) as {
        ok: boolean
        checks: Array<{ name: string; ok: boolean; detail: string }>
      }
      return { status: run.status, checks: Object.fromEntries(report.checks.map((c) => [c.name, c])) }
    }
    const good = doctor(["--nats-user", "c1", "--nats-nkey", nats.fleet.keys.c1.seedFile])
    expect(good.checks.nats_connection?.ok).toBe(true)
    expect(good.checks.nats_permissions?.ok).toBe(true)
    expect(good.checks.nats_permissions?.detail).toMatch(/m1 .*m2 .*m3 /)
    // no credentials: the servers refuse the connection, and doctor says which check failed
    const refused = doctor(["--nats-user", "c1"])
    expect(refused.status).toBe(1)
    expect(refused.checks.nats_credentials?.ok).toBe(false)
  }, 60_000)

  it("gives the 25-call transcript's results through mcp --nats as in-process", async () => {
    const home = makeHome()
    try {
      const local = await connectMcp(home.env, [])
      const inProcess = await transcript(local)
      await local.client.close()
      const remote = await connectMcp(home.env, [
        "--nats",
        nats.fleet.urls.join(","),
        "--nats-user",
        "c3",
        "--nats-nkey",
        nats.fleet.keys.c3.seedFile
      ])
      const throughNats = await transcript(remote)
      await remote.client.close()
      expect(inProcess.length).toBe(25)
      expect(throughNats).toEqual(inProcess)
    } finally {
      home.dispose()
    }
  }, 120_000)

  it("lets a model choose the machine through mcp --nats, and lists each terminal's machine", async () => {
    const home = makeHome()
    try {
      const mcp = await connectMcp(home.env, [
        "--nats",
        nats.fleet.urls.join(","),
        "--nats-user",
        "c3",
        "--nats-nkey",
        nats.fleet.keys.c3.seedFile
      ])
      const open = (await mcp.client.listTools()).tools.find((tool) => tool.name === "terminal_open")!
      expect(Object.keys(open.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["machine", "labels"]))
      const onM2 = await mcp.call("terminal_open", { name: "chosen", machine: "m2" })
      expect(onM2.isError).toBe(false)
      expect(String(onM2.sessionId).startsWith("m2~")).toBe(true)
      const listed = await mcp.client.callTool({ name: "terminal_list", arguments: {} })
      expect(textOf(listed)).toContain(`${onM2.sessionId} machine m2 chosen`)
      const nowhere = await mcp.call("terminal_open", { machine: "m9" })
      expect(nowhere.isError).toBe(true)
      expect(textOf(await mcp.client.callTool({ name: "terminal_open", arguments: { labels: ["gpu"] } }))).toContain(
        "no machine has them"
      )
      await mcp.client.close()
    } finally {
      home.dispose()
    }
  }, 60_000)

  it(
    "fails calls and an in-flight watch of a killed machine with MachineUnavailable; the others answer; a restart answers SessionLost",
    async () => {
      const c = client("c1")
      const service = await pty(c)
      const onM2 = await c.runPromise(
        service.open(anyOwner, { name: "doomed" }).pipe(FleetTerminal.placedOn({ machine: "m2" }))
      )
      const onM1 = await c.runPromise(
        service.open(anyOwner, { name: "m1-lives" }).pipe(FleetTerminal.placedOn({ machine: "m1" }))
      )
      const onM3 = await c.runPromise(
        service.open(anyOwner, { name: "m3-lives" }).pipe(FleetTerminal.placedOn({ machine: "m3" }))
      )
      const scope = await c.runPromise(Scope.make())
      const watch = await c.runPromise(service.watch!(anyOwner, onM2.sessionId as never).pipe(Scope.extend(scope)))
      const watching = c.runFork(Stream.runDrain(watch.events))

      machine("m2").daemon.child.kill("SIGKILL")
      await machine("m2").daemon.exited

      const call = await c.runPromiseExit(service.send(anyOwner, onM2.sessionId as never, { text: "echo gone" }))
      expect(errorOf(call)?._tag).toBe("MachineUnavailable")
      const watched = await c.runPromise(Fiber.await(watching))
      expect(errorOf(watched)?._tag).toBe("MachineUnavailable")
      // m1 and m3 see no error
      for (const alive of [onM1, onM3]) {
        const sent = await c.runPromise(service.send(anyOwner, alive.sessionId as never, { text: "echo still-here" }))
        expect(sent.output).toContain("still-here")
      }
      // the reaper leaves none of m2's processes
      expect(await waitUntil(() => !alive(onM2.pid), 15_000)).toBe(true)

      // m2 restarted: its old run's ids are lost, known from the id alone
      const m2 = machine("m2")
      m2.daemon = await m2.start()
      await waitUntil(async () => {
        const now = (await machinesOf(c)).find((m) => m.machine === "m2")
        return now !== undefined && !onM2.sessionId.startsWith(`m2~${now.run}~`)
      }, 15_000)
      const lost = await c.runPromiseExit(service.send(anyOwner, onM2.sessionId as never, { text: "echo old" }))
      expect(errorOf(lost)?._tag).toBe("SessionLost")
      // the machine itself answers so too, from the id alone, to a client that asks it directly
      const asked = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const connection = yield* Nats.make(nats.fleet.connectOptions("c2"))
        const raw = yield* NatsRpcClient.make(Protocol.DaemonRpcs, { machine: "m2", handshakeTimeoutMs: 10_000 }).pipe(
          Effect.provideService(Nats.Nats, connection),
          Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack)
        )
        yield* raw.Hello({ protocolVersion: Protocol.PROTOCOL_VERSION })
        return yield* Effect.flip(raw.Read({ sessionId: Ids.SessionId.make(onM2.sessionId), request: {} }))
      })))
      expect(asked._tag).toBe("SessionLost")
      expect((asked as { reason?: string }).reason).toBe("daemon-died")
      // and the new run takes terminals
      const fresh = await c.runPromise(
        service.open(anyOwner, { name: "fresh" }).pipe(FleetTerminal.placedOn({ machine: "m2" }))
      )
      expect(fresh.sessionId.startsWith("m2~")).toBe(true)
      await c.runPromise(Scope.close(scope, Exit.void))
    },
    90_000
  )

  it(
    "reaches every machine again after each nats-server in turn is killed, with the same terminals, and a new watch works",
    async () => {
      const c = client("c1")
      const service = await pty(c)
      const opened = await Promise.all(
        ["m1", "m2", "m3"].map((name) =>
          c.runPromise(
            service.open(anyOwner, { name: `before-${name}` }).pipe(FleetTerminal.placedOn({ machine: name }))
          )
        )
      )
      for (const server of nats.fleet.servers) {
        await Effect.runPromise(server.kill("SIGKILL"))
        for (const session of opened) {
          // a call sent while this client reconnects fails (ConnectionLost: "not sent"); nothing is retried for
          // it: the test retries, as its caller would, until the machine answers again, the same terminal
          let answered = false
          const errors: Array<string> = []
          for (let attempt = 0; attempt < 50 && !answered; attempt++) {
            // bounded, so that a call that hangs (never typed) fails the test naming itself
            const exit = await c.runPromiseExit(
              service.send(anyOwner, session.sessionId as never, { text: "echo back" }).pipe(
                Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error(`Hung after ${server.name}`) })
              )
            )
            if (exit._tag === "Success") answered = true
            else {
              errors.push(`${errorOf(exit)?._tag}: ${(errorOf(exit) as Error | undefined)?.message}`)
              await new Promise((resolve) => setTimeout(resolve, 100))
            }
          }
          expect(answered, `${server.name}, ${session.sessionId}: ${errors.slice(0, 3).join("; ")}`).toBe(true)
          // meanwhile a call fails fast and typed: this client reconnecting (ConnectionLost: not sent), or the
          // machine's subscription not yet back in the cluster (MachineUnavailable: no responders)
          expect(
            errors.every((error) => error.startsWith("ConnectionLost") || error.startsWith("MachineUnavailable")),
            errors.join("; ")
          ).toBe(true)
        }
        const watch = await c.runPromise(
          Effect.scoped(service.watch!(anyOwner, opened[0]!.sessionId as never)).pipe(
            Effect.timeoutFail({
              duration: "15 seconds",
              onTimeout: () => new Error(`the watch hung after ${server.name}`)
            })
          )
        )
        expect(watch.snapshot._tag).toBe("Snapshot")
        await Effect.runPromise(server.start)
      }
    },
    120_000
  )

  it("places on a 4th machine as soon as it joins", async () => {
    const c = client("c1")
    machines.push(await startMachine(nats.fleet, "m4"))
    expect(await waitUntil(async () => (await machinesOf(c)).some((m) => m.machine === "m4"), 10_000)).toBe(true)
    const service = await pty(c)
    // the others hold terminals of the earlier tests: the empty newcomer has the most room
    const opened = await c.runPromise(service.open(anyOwner, { name: "newcomer" }))
    expect(opened.sessionId.startsWith("m4~")).toBe(true)
    expect(descendsFrom(opened.pid, machine("m4").daemon.pid)).toBe(true)

    // it leaves (SIGTERM): its clients hear "machine stopping" before its server stops, so a call in flight
    // fails typed rather than hangs, and nothing else is touched
    const inFlight = c.runPromiseExit(service.send(anyOwner, opened.sessionId as never, { text: "sleep 30" }))
    await new Promise((resolve) => setTimeout(resolve, 300))
    await machine("m4").daemon.stop()
    expect(errorOf(await inFlight)?._tag).toBe("MachineUnavailable")
    expect(machine("m4").daemon.log()).toContain("machine m4: machine stopping")
    expect(await waitUntil(async () => !(await machinesOf(c)).some((m) => m.machine === "m4"), 5_000)).toBe(true)
    const next = await c.runPromise(service.open(anyOwner, { name: "after-m4" }))
    expect(next.sessionId.startsWith("m4~")).toBe(false)
  }, 60_000)
})
