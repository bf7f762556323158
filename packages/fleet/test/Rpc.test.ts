import { layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { expect } from "vitest"
import { byteAt, type Counters, machineLayer, sum } from "./fixtures/group.js"
import { client, Fleet, fleetLayer } from "./support.js"

const withMachine = (machine: "m1" | "m2" | "m3", counters?: Counters) =>
  Effect.gen(function*() {
    const fleet = yield* Fleet
    yield* Layer.build(machineLayer(fleet.connectOptions(machine), { machine }, counters))
  })

layer(fleetLayer(), { timeout: 60_000, excludeTestServices: true })("an RpcGroup over NATS", (it) => {
  it.scoped("unary calls, typed errors, and the caller's proven user", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      yield* withMachine("m1")
      const c1 = yield* client(fleet, "c1", "m1")
      expect(yield* c1.Echo({ text: "hello" })).toEqual({ text: "hello", machine: "m1", user: "c1" })
      const failed = yield* Effect.exit(c1.Fail({ reason: "on purpose" }))
      expect(failed).toEqual(Exit.fail(expect.objectContaining({ _tag: "Boom", reason: "on purpose" })))
      const c2 = yield* client(fleet, "c2", "m1")
      expect((yield* c2.Echo({ text: "other" })).user).toBe("c2")
    }))

  it.scoped("a stream arrives whole and in order, with acks", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      yield* withMachine("m1")
      const c1 = yield* client(fleet, "c1", "m1")
      const items = yield* Stream.runCollect(c1.Count({ n: 2000 }))
      expect(Chunk.toReadonlyArray(items)).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1))
    }))

  it.scoped("a stream read as a mailbox (as the daemon's watch is) keeps the machine to the reader's pace, alone", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const counters: Counters = { count: 0, ticks: 0 }
      yield* withMachine("m3", counters)
      const c1 = yield* client(fleet, "c1", "m3")
      const mailbox = yield* c1.Ticks({}, { asMailbox: true })
      const [first] = yield* mailbox.takeN(10)
      expect(Chunk.toReadonlyArray(first)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1))
      // Unread, the stream stops: acks go back only as the client's buffers take chunks.
      yield* Effect.sleep("500 millis")
      const made = counters.ticks!
      yield* Effect.sleep("500 millis")
      expect(counters.ticks).toBe(made)
      expect(made).toBeLessThan(200)
      // The stopped stream holds up only itself: the same session's other calls are answered.
      const answer = yield* c1.Echo({ text: "meanwhile" }).pipe(Effect.timeout("10 seconds"))
      expect(answer.text).toBe("meanwhile")
      const next = yield* mailbox.take
      expect(next).toBe(11)
    }))

  it.scoped("frames larger than a NATS message go as parts, both ways", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      yield* withMachine("m1")
      const c1 = yield* client(fleet, "c1", "m1")
      const bytes = 3 * 1024 * 1024 + 123
      const big = yield* c1.Big({ bytes })
      expect(big.length).toBe(bytes)
      expect(big.every((byte, i) => byte === byteAt(i))).toBe(true)
      const data = Uint8Array.from({ length: 2.5 * 1024 * 1024 }, (_, i) => (i * 13) & 0xff)
      expect(yield* c1.Upload({ data })).toEqual({ size: data.length, sum: sum(data) })
    }))

  it.scoped("many clients at once, each answered as itself", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      yield* withMachine("m2")
      const clients = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => client(fleet, i % 2 === 0 ? "c1" : "c2", "m2"),
        { concurrency: 5 }
      )
      const answers = yield* Effect.forEach(clients, (c, i) =>
        Effect.forEach(
          Array.from({ length: 10 }, (_, j) => j),
          (j) => c.Echo({ text: `${i}/${j}` }),
          {
            concurrency: "unbounded"
          }
        ), { concurrency: "unbounded" })
      answers.forEach((perClient, i) =>
        perClient.forEach((answer, j) => {
          expect(answer).toEqual({ text: `${i}/${j}`, machine: "m2", user: i % 2 === 0 ? "c1" : "c2" })
        })
      )
    }))
})
