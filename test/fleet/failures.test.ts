/**
 * The fleet's client (`FleetTerminal`) with real `serve --nats` machines: the client's own nats-server killed
 * under a watch in flight (the watch ends with an error, never hangs; a new watch works and the machine
 * answers again once the client reconnected to another server; times are the bench's, `fleet.failover`), a
 * child run's command string run with its machine's shell, and how an id of a machine's earlier run was lost.
 */
import { Exec, PtyService } from "@agent-terminal/core"
import { FleetRegistry, FleetTerminal, Nats, TestFleet } from "@agent-terminal/fleet"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { built, type Daemon, makeHome, startDaemon, waitUntil } from "../daemon/support.js"
import { anyOwner, errorOf } from "./support.js"

describe.runIf(built)("FleetTerminal with serve --nats machines: failures in flight, shells, lost ids", () => {
  const scope = Effect.runSync(Scope.make())
  let fleet: TestFleet.Fleet
  let m1: Daemon
  let m2: Daemon
  const home = makeHome()
  const home2 = makeHome()
  /** A client on the machines' server. */
  const makeClient = () =>
    ManagedRuntime.make(
      FleetTerminal.layer({ client: "failures", handshakeTimeoutMs: 10_000 }).pipe(
        Layer.provideMerge(Nats.layer(fleet.connectOptions("c2", { servers: [fleet.servers[1]!.url] })))
      )
    )
  const machinesOf = (client: ReturnType<typeof makeClient>) =>
    client.runPromise(Effect.flatMap(FleetTerminal.Fleet, (f) => f.directory.machines))
  const m1Args = () => ["--nats", fleet.servers[1]!.url, "--machine", "m1", "--nats-nkey", fleet.keys.m1.seedFile]

  beforeAll(async () => {
    fleet = await Effect.runPromise(TestFleet.make({ servers: 3 }).pipe(Scope.extend(scope)))
    await Effect.runPromise(
      FleetRegistry.createBucket({ replicas: 3 }).pipe(Effect.provide(Nats.layer(fleet.connectOptions("admin"))))
    )
    // the machine on the second server only: killing the client's server leaves it connected
    m1 = await startDaemon(home.env, m1Args())
    // m2's shell is zsh: a command string of a child run must run with it
    m2 = await startDaemon({ ...home2.env, AGENT_TERMINAL_SHELL: "zsh" }, [
      "--nats",
      fleet.servers[1]!.url,
      "--machine",
      "m2",
      "--nats-nkey",
      fleet.keys.m2.seedFile
    ])
  }, 120_000)

  afterAll(async () => {
    await m1?.stop()
    await m2?.stop()
    home.dispose()
    home2.dispose()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it(
    "ends a watch in flight when the client's nats-server dies; a new watch works, the machine answers again",
    async () => {
      // the client on the first or the third server (it picks one), never the machine's
      const client = ManagedRuntime.make(
        FleetTerminal.layer({ client: "failures", handshakeTimeoutMs: 10_000 }).pipe(
          Layer.provideMerge(
            Nats.layer(fleet.connectOptions("c1", { servers: [fleet.servers[0]!.url, fleet.servers[2]!.url] }))
          )
        )
      )
      try {
        const nats = await client.runPromise(Nats.Nats)
        const serverOfClient = () => nats.connection.getServer()
        const own = serverOfClient() === `127.0.0.1:${fleet.servers[0]!.port}` ? fleet.servers[0]! : fleet.servers[2]!
        expect(serverOfClient()).toBe(`127.0.0.1:${own.port}`)
        await waitUntil(
          async () =>
            (await client.runPromise(Effect.flatMap(FleetTerminal.Fleet, (f) => f.directory.machines)))
              .some((m) => m.machine === "m1"),
          15_000
        )
        const pty = await client.runPromise(PtyService.PtyService)
        const opened = await client.runPromise(
          pty.open(anyOwner, { name: "watched" }).pipe(FleetTerminal.placedOn({ machine: "m1" }))
        )
        expect(opened.sessionId.startsWith("m1~")).toBe(true)

        const watchScope = await client.runPromise(Scope.make())
        const watch = await client.runPromise(
          pty.watch!(anyOwner, opened.sessionId as never).pipe(Scope.extend(watchScope))
        )
        expect(watch.snapshot._tag).toBe("Snapshot")
        const watching = client.runFork(Stream.runDrain(watch.events))
        // output flows through the watch before the kill
        await client.runPromise(pty.send(anyOwner, opened.sessionId as never, { text: "echo before" }))

        await Effect.runPromise(own.kill("SIGKILL"))
        // bounded, so that a watch that hangs fails the test naming itself rather than the test's timeout
        const ended = await client.runPromise(
          Fiber.await(watching).pipe(
            Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error("the watch hung") })
          )
        )
        expect(Exit.isFailure(ended)).toBe(true)
        expect(["ConnectionLost", "MachineUnavailable"]).toContain(errorOf(ended)?._tag)
        await client.runPromise(Scope.close(watchScope, Exit.void))

        // the client reconnects to another server (the one it was given, or one the cluster told it of); the same
        // terminal answers again (the caller retries, as a caller would: nothing is retried for it)
        expect(await waitUntil(() => serverOfClient() !== `127.0.0.1:${own.port}`, 10_000)).toBe(true)
        const errors: Array<string> = []
        const answered = await waitUntil(
          async () => {
            const exit = await client.runPromiseExit(
              pty.send(anyOwner, opened.sessionId as never, { text: "echo after" }).pipe(Effect.timeout("15 seconds"))
            )
            if (Exit.isSuccess(exit)) return exit.value.output.includes("after")
            errors.push(String(errorOf(exit)?._tag))
            return false
          },
          10_000,
          100
        )
        expect(answered, errors.join(", ")).toBe(true)
        expect(errors.every((tag) => tag === "ConnectionLost" || tag === "MachineUnavailable"), errors.join()).toBe(
          true
        )
        const again = await client.runPromise(
          Effect.scoped(Effect.gen(function*() {
            const next = yield* pty.watch!(anyOwner, opened.sessionId as never)
            return next.snapshot
          })).pipe(Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error("the new watch hung") }))
        )
        expect(again._tag).toBe("Snapshot")
        expect(JSON.stringify(again)).toContain("after")
      } finally {
        await client.dispose()
      }
    },
    90_000
  )

  it("runs a command string of a child run with its machine's own shell, not an assumed bash", async () => {
    const client = makeClient()
    try {
      await waitUntil(async () => (await machinesOf(client)).some((m) => m.machine === "m2"), 15_000)
      const exec = await client.runPromise(Exec.Exec)
      expect(exec.shell).toBe(FleetTerminal.machineShell)
      const run = (machine: string) =>
        client.runPromise(
          exec.exec(anyOwner, { spawn: { _tag: "child", argv: Exec.shellArgv(exec.shell, "echo shell=$0") } }).pipe(
            FleetTerminal.placedOn({ machine })
          )
        )
      expect((await run("m2")).output).toContain("shell=zsh")
      expect((await run("m1")).output).toMatch(/shell=\S*bash/)
      // an argv of the caller's is run as given
      const given = await client.runPromise(
        exec.exec(anyOwner, { spawn: { _tag: "child", argv: ["bash", "-c", "echo given=$0"] } }).pipe(
          FleetTerminal.placedOn({ machine: "m2" })
        )
      )
      expect(given.output).toContain("given=bash")
    } finally {
      await client.dispose()
    }
  }, 60_000)

  it(
    "says how an id of a machine's earlier run was lost: a stop is daemon-stopped, at the stop, from the registry",
    async () => {
      const client = makeClient()
      try {
        await waitUntil(async () => (await machinesOf(client)).some((m) => m.machine === "m1"), 15_000)
        const pty = await client.runPromise(PtyService.PtyService)
        const opened = await client.runPromise(
          pty.open(anyOwner, { name: "stopped" }).pipe(FleetTerminal.placedOn({ machine: "m1" }))
        )
        const before = Date.now()
        await m1.stop()
        const after = Date.now()
        m1 = await startDaemon(home.env, m1Args())
        expect(
          await waitUntil(async () => {
            const now = (await machinesOf(client)).find((m) => m.machine === "m1")
            return now !== undefined && !opened.sessionId.startsWith(`m1~${now.run}~`)
          }, 15_000)
        ).toBe(true)
        const lost = await client.runPromiseExit(pty.send(anyOwner, opened.sessionId as never, { text: "echo old" }))
        const error = errorOf(lost) as { _tag?: string; reason?: string; lostAt?: string }
        expect(error._tag).toBe("SessionLost")
        expect(error.reason).toBe("daemon-stopped")
        const lostAt = Date.parse(error.lostAt!)
        expect(lostAt).toBeGreaterThanOrEqual(before)
        expect(lostAt).toBeLessThanOrEqual(after)
      } finally {
        await client.dispose()
      }
    },
    90_000
  )
})
