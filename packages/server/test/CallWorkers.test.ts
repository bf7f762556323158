import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import * as CallWorkers from "../src/internal/callWorkers.js"

/** The workers over this test's runtime, counting the fibers they make. */
const setup = (maxIdle?: number) =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const runFork = Runtime.runFork(runtime)
    const made: Array<Fiber.RuntimeFiber<void>> = []
    const workers = CallWorkers.make((effect) => {
      const fiber = runFork(effect)
      made.push(fiber)
      return fiber
    }, maxIdle)
    return { workers, made }
  })

/** A call that records the fiber it ran in and ends when `gate` is done. */
const gated = (ran: Array<string>, name: string, gate: Deferred.Deferred<void>) =>
  Effect.flatMap(
    Effect.fiberId,
    (id) => Effect.sync(() => ran.push(`${name}@${JSON.stringify(id)}`)).pipe(Effect.zipRight(Deferred.await(gate)))
  )

const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))

describe("a connection's call workers", () => {
  it.effect("calls one after another run in one fiber; calls at once each get one, and as many wait after", () =>
    Effect.gen(function*() {
      const { made, workers } = yield* setup()
      const ran: Array<string> = []
      for (const name of ["a", "b", "c"]) {
        const gate = yield* Deferred.make<void>()
        workers.run(name, gated(ran, name, gate))
        yield* settle
        yield* Deferred.succeed(gate, undefined)
        yield* settle
      }
      expect(ran).toHaveLength(3)
      expect(made).toHaveLength(1)
      expect(new Set(ran.map((entry) => entry.split("@")[1])).size).toBe(1)
      // three at once: two more workers; all three wait afterwards and serve the next three
      const gates = yield* Effect.all([Deferred.make<void>(), Deferred.make<void>(), Deferred.make<void>()])
      gates.forEach((gate, i) => workers.run(`x${i}`, gated(ran, `x${i}`, gate)))
      yield* settle
      expect(made).toHaveLength(3)
      for (const gate of gates) yield* Deferred.succeed(gate, undefined)
      yield* settle
      const again = yield* Effect.all([Deferred.make<void>(), Deferred.make<void>(), Deferred.make<void>()])
      again.forEach((gate, i) => workers.run(`y${i}`, gated(ran, `y${i}`, gate)))
      for (const gate of again) yield* Deferred.succeed(gate, undefined)
      yield* settle
      expect(ran).toHaveLength(9)
      expect(made).toHaveLength(3)
      yield* workers.interruptAll
      expect(made.every((fiber) => fiber.unsafePoll() !== null)).toBe(true)
    }))

  it.effect("an interrupted call ends with its worker: the others go on, and the next call gets a new worker", () =>
    Effect.gen(function*() {
      const { made, workers } = yield* setup()
      const ran: Array<string> = []
      const interrupted: Array<string> = []
      const held = yield* Deferred.make<void>()
      const other = yield* Deferred.make<void>()
      workers.run(
        "held",
        Effect.onInterrupt(gated(ran, "held", held), () => Effect.sync(() => interrupted.push("held")))
      )
      workers.run("other", gated(ran, "other", other))
      yield* settle
      expect(workers.interrupt("nothing-runs-as-this")).toBe(false)
      expect(workers.interrupt("held")).toBe(true)
      yield* settle
      expect(interrupted).toEqual(["held"])
      expect(made[0]!.unsafePoll()).not.toBeNull()
      expect(made[1]!.unsafePoll()).toBeNull()
      expect(workers.interrupt("held")).toBe(false)
      yield* Deferred.succeed(other, undefined)
      yield* settle
      // the worker that served "other" waits; a second call at once needs a new one, not the interrupted one
      const gates = yield* Effect.all([Deferred.make<void>(), Deferred.make<void>()])
      gates.forEach((gate, i) => workers.run(`z${i}`, gated(ran, `z${i}`, gate)))
      for (const gate of gates) yield* Deferred.succeed(gate, undefined)
      yield* settle
      expect(ran.filter((entry) => entry.startsWith("z"))).toHaveLength(2)
      expect(made).toHaveLength(3)
      yield* workers.interruptAll
    }))

  it.effect("at most maxIdle wait between calls; the others end", () =>
    Effect.gen(function*() {
      const { made, workers } = yield* setup(1)
      const ran: Array<string> = []
      const gates = yield* Effect.all([Deferred.make<void>(), Deferred.make<void>(), Deferred.make<void>()])
      gates.forEach((gate, i) => workers.run(`w${i}`, gated(ran, `w${i}`, gate)))
      yield* settle
      for (const gate of gates) yield* Deferred.succeed(gate, undefined)
      yield* settle
      expect(made.filter((fiber) => fiber.unsafePoll() === null)).toHaveLength(1)
      yield* workers.interruptAll
      expect(made.filter((fiber) => fiber.unsafePoll() === null)).toHaveLength(0)
    }))
})
