import { layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { expect } from "vitest"
import { Nats } from "../src/index.js"
import { byteAt, type Counters, machineLayer, sum } from "./fixtures/group.js"
import { client, clientOn, Fleet, fleetLayer } from "./support.js"

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

  it.scoped(
    "a call whose message NATS drops on the way fails ConnectionLost (the pings still answered), and later calls are answered",
    () =>
      Effect.gen(function*() {
        const fleet = yield* Fleet
        yield* withMachine("m1")
        // NATS delivers at most once: a message can be dropped while the cluster changes (a server killed, a
        // subscription not yet known to the client's new server) while the heartbeats after it go through. The
        // connection drops the next frame (kind 4) it is asked to publish, as the cluster would.
        const real = yield* Nats.make(fleet.connectOptions("c1"))
        let drop = 0
        const connection = new Proxy(real.connection, {
          get(target, key) {
            if (key === "publish") {
              return (subject: string, data?: Uint8Array, options?: unknown) => {
                if (drop > 0 && data?.[0] === 4) {
                  drop--
                  return
                }
                return target.publish(subject, data, options as never)
              }
            }
            const value = Reflect.get(target, key, target)
            return typeof value === "function" ? value.bind(target) : value
          }
        })
        const c1 = yield* clientOn({ ...real, connection }, "m1")
        expect((yield* c1.Echo({ text: "before" })).text).toBe("before")
        // the lost call is the last frame sent: the next pong says the machine still expects it
        drop = 1
        const lost = yield* Effect.exit(c1.Echo({ text: "lost" }).pipe(Effect.timeout("10 seconds")))
        expect(lost).toEqual(Exit.fail(expect.objectContaining({ _tag: "ConnectionLost" })))
        // the next frame shows the machine the gap: it names it, and the call that revealed it is answered
        expect((yield* c1.Echo({ text: "after" })).text).toBe("after")
        // a call lost while another is in flight: both fail (the other may or may not have run), none hangs
        drop = 1
        const both: ReadonlyArray<Exit.Exit<unknown, unknown>> = yield* Effect.all([
          Effect.exit(c1.Sleep({ ms: 300 }).pipe(Effect.timeout("10 seconds"))),
          Effect.exit(c1.Echo({ text: "lost too" }).pipe(Effect.timeout("10 seconds")))
        ], { concurrency: "unbounded" })
        expect(both.map((exit) => Exit.isSuccess(exit) ? "answered" : "failed")).toContain("failed")
        for (const exit of both) {
          if (Exit.isFailure(exit)) expect(exit).toEqual(Exit.fail(expect.objectContaining({ _tag: "ConnectionLost" })))
        }
        expect((yield* c1.Echo({ text: "still" })).text).toBe("still")
      })
  )
})
