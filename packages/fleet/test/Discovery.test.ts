import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { expect } from "vitest"
import { Discovery, Nats } from "../src/index.js"
import { every, Fleet, fleetLayer } from "./support.js"

const figures = (free: number, labels: ReadonlyArray<string> = []): Discovery.Figures => ({
  run: "run-1",
  terminals: 10 - free,
  maxTerminals: 10,
  free,
  load: 0,
  memoryFree: 1e9,
  labels
})

/** Machine `name` announcing `free` as user `name`, until `scope` closes. */
const announceIn = (fleet: Fleet["Type"], name: "m1" | "m2" | "m3" | "m4", free: number, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const nats = yield* Nats.make(fleet.connectOptions(name))
    yield* Discovery.announce({ machine: name, figures: Effect.succeed(figures(free, [name])) }).pipe(
      Effect.provideService(Nats.Nats, nats)
    )
  }).pipe(Scope.extend(scope))

const names = (directory: Discovery.Directory["Type"]) =>
  Effect.map(directory.machines, (machines) => machines.map((machine) => machine.machine))

/** Look again every 20 ms of real time (a timer of the event loop, whatever clock the test keeps), up to ~5 s. */
const realEventually = <A>(effect: Effect.Effect<A>, until: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 250; attempt++) {
      const value = yield* effect
      if (until(value)) return value
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
    return yield* Effect.dieMessage("the condition never held")
  })

const eventually = <A>(effect: Effect.Effect<A>, until: (a: A) => boolean) =>
  effect.pipe(
    Effect.repeat({ until, schedule: every(20) }),
    Effect.timeout("5 seconds")
  )

layer(fleetLayer(), { timeout: 60_000, excludeTestServices: true })("discovery and placement", (it) => {
  it.scoped("machines join and leave; a client places on the one with the most room", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const m1 = yield* Scope.make()
      const m2 = yield* Scope.make()
      yield* announceIn(fleet, "m1", 3, m1)
      yield* announceIn(fleet, "m2", 8, m2)
      const client = yield* Nats.make(fleet.connectOptions("c1"))
      const directory = yield* Discovery.makeDirectory().pipe(Effect.provideService(Nats.Nats, client))
      // The client asks at start: the machines are there without waiting for their next round.
      expect(yield* eventually(names(directory), (live) => live.length === 2)).toEqual(["m1", "m2"])
      expect((yield* directory.place()).machine).toBe("m2")
      expect((yield* directory.place({ machine: "m1" })).machine).toBe("m1")
      expect((yield* directory.place({ labels: ["m1"] })).machine).toBe("m1")

      const m3 = yield* Scope.make()
      yield* announceIn(fleet, "m3", 9, m3)
      expect(yield* eventually(names(directory), (live) => live.includes("m3"))).toEqual(["m1", "m2", "m3"])
      expect((yield* directory.place()).machine).toBe("m3")

      // A machine that leaves says so: gone at once, nothing else touched.
      yield* Scope.close(m3, Exit.void)
      expect(yield* eventually(names(directory), (live) => !live.includes("m3"))).toEqual(["m1", "m2"])
      expect((yield* directory.place()).machine).toBe("m2")
      yield* Scope.close(m2, Exit.void)
      yield* Scope.close(m1, Exit.void)
      expect(yield* eventually(names(directory), (live) => live.length === 0)).toEqual([])
    }))

  it.scoped("a machine that falls silent leaves the live set after the expiry", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const client = yield* Nats.make(fleet.connectOptions("c2"))
      const directory = yield* Discovery.makeDirectory({ expireAfterMs: 500 }).pipe(
        Effect.provideService(Nats.Nats, client)
      )
      // An announcement sent once, then silence (what a machine killed outright leaves).
      const m4 = yield* Nats.make(fleet.connectOptions("m4"))
      m4.connection.publish("agent-terminal.m.m4.announce", JSON.stringify({ ...figures(5), machine: "m4" }))
      expect(yield* eventually(names(directory), (live) => live.includes("m4"))).toEqual(["m4"])
      expect(yield* eventually(names(directory), (live) => live.length === 0)).toEqual([])
    }))

  it.scoped("no machine can speak for another: m1 cannot publish m2's announcements, nor name m2 in its own", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const client = yield* Nats.make(fleet.connectOptions("c3"))
      const directory = yield* Discovery.makeDirectory().pipe(Effect.provideService(Nats.Nats, client))
      const m1 = yield* Nats.make(fleet.connectOptions("m1"))
      const forged = JSON.stringify({ ...figures(1000), machine: "m2" })
      for (let i = 0; i < 20; i++) {
        m1.connection.publish("agent-terminal.m.m2.announce", forged)
        m1.connection.publish("agent-terminal.m.m1.announce", forged)
      }
      yield* Effect.promise(() => m1.connection.flush())
      m1.connection.publish("agent-terminal.m.m1.announce", JSON.stringify({ ...figures(1), machine: "m1" }))
      expect(yield* eventually(names(directory), (live) => live.includes("m1"))).toEqual(["m1"])
      expect((yield* directory.machines)[0]!.free).toBe(1)
    }))

  it.scoped("the expiry keeps the directory's Clock: under a TestClock a silent machine stays until the clock moves", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const client = yield* Nats.make(fleet.connectOptions("c2"))
      const directory = yield* Discovery.makeDirectory({ expireAfterMs: 500 }).pipe(
        Effect.provideService(Nats.Nats, client)
      )
      const m4 = yield* Nats.make(fleet.connectOptions("m4"))
      m4.connection.publish("agent-terminal.m.m4.announce", JSON.stringify({ ...figures(5), machine: "m4" }))
      expect(yield* realEventually(names(directory), (live) => live.includes("m4"))).toEqual(["m4"])
      // twice the expiry of real time: the test clock stands still, so the machine is still live
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_000)))
      expect(yield* names(directory)).toEqual(["m4"])
      yield* TestClock.adjust(500)
      expect(yield* names(directory)).toEqual(["m4"])
      yield* TestClock.adjust(1)
      expect(yield* names(directory)).toEqual([])
    }).pipe(Effect.provide(TestContext.TestContext)))
})
