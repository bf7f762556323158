import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { expect } from "vitest"
import { machineLayer } from "./fixtures/group.js"
import { client, Fleet, fleetLayer, spawnMachine } from "./support.js"

const failureTag = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? (exit.cause.error as { _tag: string })._tag : String(exit)

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(effect), ([duration, value]) => ({ value, ms: Number(duration.value) / 1e6 }))

layer(fleetLayer(), { timeout: 120_000, excludeTestServices: true })("failures", (it) => {
  it.scoped("a machine killed with SIGKILL: the call and the stream in flight fail with MachineUnavailable", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const machine = yield* spawnMachine(fleet, { machine: "m1", user: "m1" })
      const c1 = yield* client(fleet, "c1", "m1")
      expect((yield* c1.Echo({ text: "up" })).machine).toBe("m1")
      const call = yield* Effect.fork(Effect.exit(c1.Sleep({ ms: 60_000 })))
      const stream = yield* Effect.fork(Effect.exit(Stream.runDrain(c1.Count({ n: 1_000_000, delayMs: 5 }))))
      yield* Effect.sleep("300 millis")
      yield* machine.kill("SIGKILL")
      const [callExit, streamExit] = [yield* Fiber.join(call), yield* Fiber.join(stream)]
      expect(failureTag(callExit)).toBe("MachineUnavailable")
      expect(failureTag(streamExit)).toBe("MachineUnavailable")
      // A later call goes out and fails at once: nothing serves the subject.
      const later = yield* Effect.exit(c1.Echo({ text: "anyone?" }))
      expect(failureTag(later)).toBe("MachineUnavailable")
    }))

  it.scoped("a machine that stops answering (SIGSTOP): the call in flight fails on the missed pings", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const machine = yield* spawnMachine(fleet, { machine: "m2", user: "m2" })
      const c1 = yield* client(fleet, "c1", "m2")
      const call = yield* Effect.fork(elapsed(Effect.exit(c1.Sleep({ ms: 60_000 }))))
      yield* Effect.sleep("200 millis")
      process.kill(machine.pid, "SIGSTOP")
      yield* Effect.addFinalizer(() => Effect.sync(() => process.kill(machine.pid, "SIGCONT")))
      const { value } = yield* Fiber.join(call)
      expect(failureTag(value)).toBe("MachineUnavailable")
      expect(String((value as Exit.Failure<unknown, { reason: string }>).cause)).toContain("pings")
    }))

  it.scoped("a machine that stops cleanly tells its clients: the call in flight fails at once", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const machineScope = yield* Scope.make()
      yield* Layer.buildWithScope(machineLayer(fleet.connectOptions("m3"), { machine: "m3" }), machineScope)
      const c2 = yield* client(fleet, "c2", "m3")
      const call = yield* Effect.fork(Effect.exit(c2.Sleep({ ms: 60_000 })))
      yield* Effect.sleep("200 millis")
      yield* Scope.close(machineScope, Exit.void)
      const exit = yield* Fiber.join(call)
      expect(failureTag(exit)).toBe("MachineUnavailable")
      expect(String(exit)).toContain("stopping")
    }))

  it.scoped("a restarted machine does not know an old session: ConnectionLost, and nothing runs", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const first = yield* spawnMachine(fleet, { machine: "m4", user: "m4" })
      const c1 = yield* client(fleet, "c1", "m4")
      const firstPid = yield* c1.Pid({})
      yield* first.kill("SIGKILL")
      yield* spawnMachine(fleet, { machine: "m4", user: "m4" })
      // A new session reaches the new machine (once the cluster knows it), which never ran anything.
      const fresh = yield* client(fleet, "c1", "m4")
      expect(yield* fresh.Pid({})).not.toBe(firstPid)
      // The old session's next call reaches it too, and is refused: that session is gone, for good.
      const exit = yield* Effect.exit(c1.Sleep({ ms: 10 }))
      expect(failureTag(exit)).toBe("ConnectionLost")
      expect(String(exit)).toContain("no longer knows")
      expect(failureTag(yield* Effect.exit(c1.Pid({})))).toBe("ConnectionLost")
      expect(yield* fresh.Started({})).toBe(0)
    }))

  it.scoped("a NATS server killed under a client: its stream ends with ConnectionLost, a new call works", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const [n1, n2] = [fleet.servers[0]!, fleet.servers[1]!]
      const started = { count: 0 }
      yield* Layer.build(machineLayer(fleet.connectOptions("m1", { servers: [n2.url] }), { machine: "m1" }, started))
      const c1 = yield* client(fleet, "c1", "m1", {}, { servers: [n1.url] })
      const clientId = yield* c1.Whoami({})
      const stream = yield* Effect.fork(Effect.exit(Stream.runDrain(c1.Count({ n: 1_000_000, delayMs: 5 }))))
      const call = yield* Effect.fork(Effect.exit(c1.Sleep({ ms: 1_000 })))
      yield* Effect.sleep("300 millis")
      yield* n1.kill("SIGKILL")
      yield* Effect.addFinalizer(() => Effect.orDie(n1.start))
      expect(failureTag(yield* Fiber.join(stream))).toBe("ConnectionLost")
      expect(failureTag(yield* Fiber.join(call))).toBe("ConnectionLost")
      // Not retried: the sleep ran once.
      // While it reconnects, a call is not sent (ConnectionLost says so); then calls go through again.
      const answer = yield* c1.Echo({ text: "again" }).pipe(
        Effect.retry({
          while: (error) => error._tag === "ConnectionLost",
          schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds"))
        })
      )
      expect(answer.text).toBe("again")
      expect(started.count).toBe(1)
      // The session outlived the reconnect: the machine still knows this client as the same one.
      expect(yield* c1.Whoami({})).toBe(clientId)
    }))
})
