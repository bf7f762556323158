import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { expect } from "vitest"
import { FleetRegistry, Nats, Subjects } from "../src/index.js"
import { machineLayer } from "./fixtures/group.js"
import { client, every, Fleet, fleetLayer } from "./support.js"

const entry = (id: string, status: FleetRegistry.Entry["status"] = "open") =>
  new FleetRegistry.Entry({
    id,
    machine: "m1",
    owner: "agent-7",
    status,
    updatedAt: Date.now(),
    ...(status === "open" ? {} : { ended: { reason: "closed by its owner", at: Date.now() } })
  })

const withRegistry = Effect.gen(function*() {
  const fleet = yield* Fleet
  const admin = yield* Nats.make(fleet.connectOptions("admin"))
  yield* FleetRegistry.createBucket({ replicas: 3 }).pipe(Effect.provideService(Nats.Nats, admin))
  const m1 = yield* Nats.make(fleet.connectOptions("m1"))
  const writer = yield* FleetRegistry.makeWriter({ machine: "m1" }).pipe(Effect.provideService(Nats.Nats, m1))
  const c1 = yield* Nats.make(fleet.connectOptions("c1"))
  const reader = yield* FleetRegistry.makeReader().pipe(Effect.provideService(Nats.Nats, c1))
  return { fleet, writer, reader }
})

/** All of `ids` readable with `status`, tried until they are (the writer catches up). */
const readable = (
  reader: Effect.Effect.Success<ReturnType<typeof FleetRegistry.makeReader>>,
  ids: ReadonlyArray<string>,
  status: FleetRegistry.Entry["status"]
) =>
  Effect.forEach(ids, (id) => reader.get("m1", id), { concurrency: 8 }).pipe(
    Effect.map((found) => found.every((entry) => Option.isSome(entry) && entry.value.status === status)),
    Effect.catchAll(() => Effect.succeed(false)),
    Effect.repeat({ until: (all) => all, schedule: every(200) }),
    Effect.timeout("60 seconds")
  )

/**
 * An echo. The caller's NATS server, or the machine's, may be one of those killed: while either reconnects to
 * another, the call fails (ConnectionLost, MachineUnavailable) and the caller tries again.
 */
const echo = (caller: Effect.Effect.Success<ReturnType<typeof client>>, text: string) =>
  caller.Echo({ text }).pipe(
    Effect.retry({
      while: (error) => error._tag === "ConnectionLost" || error._tag === "MachineUnavailable",
      schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds"))
    })
  )

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

layer(fleetLayer(), { timeout: 240_000, excludeTestServices: true })("the fleet registry", (it) => {
  it.scoped("entries are written behind, and read by a client", () =>
    Effect.gen(function*() {
      const { reader, writer } = yield* withRegistry
      yield* Effect.forEach(ids("a", 50), (id) => writer.record(entry(id)))
      yield* writer.record(entry("a3", "closed"))
      expect(yield* writer.flush("10 seconds")).toBe(true)
      expect(yield* readable(reader, ids("a", 50).filter((id) => id !== "a3"), "open")).toBe(true)
      const closed = yield* reader.get("m1", "a3")
      expect(Option.getOrThrow(closed)).toMatchObject({ status: "closed", ended: { reason: "closed by its owner" } })
      expect((yield* reader.keys("m1")).length).toBeGreaterThanOrEqual(50)
    }), 120_000)

  it.scoped("the KV's leader lost, then its quorum: records return at once, RPC goes on, writes catch up", () =>
    Effect.gen(function*() {
      const { fleet, reader, writer } = yield* withRegistry
      yield* Layer.build(machineLayer(fleet.connectOptions("m2"), { machine: "m2" }))
      const caller = yield* client(fleet, "c2", "m2")

      const stream = `KV_${Subjects.registryBucket}`
      const leader = yield* fleet.leaderOf(stream)
      expect(leader).toBeDefined()
      yield* leader!.kill()
      yield* Effect.forEach(ids("b", 100), (id) => writer.record(entry(id))).pipe(Effect.timeout("5 seconds"))
      expect((yield* echo(caller, "during the election")).text).toBe("during the election")
      yield* leader!.start
      expect(yield* readable(reader, ids("b", 100), "open")).toBe(true)

      // Two of three servers down: no quorum, the puts fail and are kept; the data path does not notice.
      const before = (yield* writer.stats).failures
      const [first, second] = fleet.servers.filter((server) => server.running()).slice(0, 2)
      yield* first!.kill()
      yield* second!.kill()
      yield* Effect.forEach(ids("c", 100), (id) => writer.record(entry(id, "lost"))).pipe(Effect.timeout("5 seconds"))
      const during = yield* writer.stats.pipe(
        Effect.repeat({
          until: (stats) => stats.failures > before,
          schedule: every(100)
        }),
        Effect.timeout("30 seconds")
      )
      expect(during.pending).toBeGreaterThan(0)
      const echoed = yield* caller.Echo({ text: "without a quorum" }).pipe(
        Effect.retry({ times: 50, schedule: every(100) })
      )
      expect(echoed.text).toBe("without a quorum")
      yield* first!.start
      yield* second!.start
      expect(yield* readable(reader, ids("c", 100), "lost")).toBe(true)
      expect((yield* writer.stats).pending).toBe(0)
    }))
})
