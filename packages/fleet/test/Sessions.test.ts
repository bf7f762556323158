import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { expect } from "vitest"
import { Nats, NatsRpcServer } from "../src/index.js"
import * as envelope from "../src/internal/envelope.js"
import { type Counters, machineLayer } from "./fixtures/group.js"
import { client, clientOn, every, Fleet, fleetLayer } from "./support.js"

const serve = (machine: "m1" | "m2" | "m3" | "m4", options: Partial<NatsRpcServer.Options>, counters?: Counters) =>
  Effect.gen(function*() {
    const fleet = yield* Fleet
    const context = yield* Layer.build(machineLayer(fleet.connectOptions(machine), { machine, ...options }, counters))
    return Context.get(context, NatsRpcServer.Sessions)
  })

const sessionsUntil = (sessions: NatsRpcServer.Sessions["Type"], count: number) =>
  Effect.sync(() => sessions.count()).pipe(
    Effect.repeat({ until: (n) => n === count, schedule: every(20) }),
    Effect.timeout("10 seconds")
  )

/** Another owner's calls, one after another, while `attack` runs: every one must be answered. */
const answeredDuring = <A, E, R>(
  caller: Effect.Effect.Success<ReturnType<typeof client>>,
  attack: Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const answered = yield* Ref.make(0)
    const loop = yield* Effect.fork(
      caller.Echo({ text: "still here" }).pipe(Effect.zipRight(Ref.update(answered, (n) => n + 1)), Effect.forever)
    )
    const result = yield* attack
    yield* caller.Echo({ text: "after" })
    const exit = yield* Fiber.interrupt(loop)
    expect(Exit.isInterrupted(exit)).toBe(true)
    return { result, answered: yield* Ref.get(answered) }
  })

/**
 * A session made by hand on `connection` (the handshake, then nothing of @effect/rpc): what a client that
 * sends what it likes can do. `sent(kind, body)` publishes; `received` are the kinds the machine answered.
 */
const rawSession = (connection: Nats.Service, machine: string, name: string) =>
  Effect.gen(function*() {
    const inbox = `agent-terminal.inbox.${connection.user}.${name}`
    const received: Array<number> = []
    let challenge: string | undefined
    connection.connection.subscribe(inbox, {
      callback: (_, message) => {
        received.push(message.data[0]!)
        if (message.data[0] === 17) challenge = JSON.parse(new TextDecoder().decode(message.data.subarray(1))).challenge
      }
    })
    const send = (data: Uint8Array) =>
      connection.connection.publish(`agent-terminal.m.${machine}.rpc`, data, { reply: inbox })
    const control = (kind: number, body: unknown) =>
      send(new Uint8Array([kind, ...new TextEncoder().encode(JSON.stringify(body))]))
    yield* Effect.promise(() => connection.connection.flush())
    control(1, { v: envelope.VERSION })
    yield* Effect.sync(() => challenge).pipe(Effect.repeat({ until: (c) => c !== undefined, schedule: every(10) }))
    control(2, { challenge })
    yield* Effect.sync(() => received.includes(18)).pipe(
      Effect.repeat({ until: (ready) => ready, schedule: every(10) })
    )
    return { send, control, received }
  })

/** A request of the test group as the frame a client sends. */
const requestFrame = (frameNo: number, id: string, tag: string, payload: object) =>
  envelope.single(
    envelope.Client.Frame,
    frameNo,
    RpcSerialization.msgPack.unsafeMake().encode({ _tag: "Request", id, tag, payload, headers: [] }) as Uint8Array
  )

layer(fleetLayer(), { timeout: 120_000, excludeTestServices: true })("a machine's client sessions", (it) => {
  it.scoped("a client's NATS connection closes: the system's event ends its session and its calls at once", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const counters: Counters = { count: 0, interrupted: 0 }
      // No heartbeat expiry in this test's time: only the disconnect event can end the session.
      const sessions = yield* serve("m1", { sessionTimeoutMs: 600_000 }, counters)
      const nats = yield* Nats.make(fleet.connectOptions("c1"))
      const c1 = yield* clientOn(nats, "m1")
      yield* Effect.fork(Effect.exit(c1.Sleep({ ms: 600_000 })))
      yield* Effect.sync(() => counters.count).pipe(Effect.repeat({ until: (n) => n === 1, schedule: every(20) }))
      expect(sessions.count()).toBe(1)
      // The connection closes without the protocol saying goodbye (what a killed client leaves).
      yield* Effect.promise(() => nats.connection.close())
      yield* sessionsUntil(sessions, 0)
      yield* Effect.sync(() => counters.interrupted).pipe(
        Effect.repeat({ until: (n) => n === 1, schedule: every(20) }),
        Effect.timeout("5 seconds")
      )
    }))

  it.scoped("without the system's events, a silent client's session ends after the heartbeat's expiry", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      // The client's heartbeat comes every second: 2.5 s of silence is more than two missed.
      const sessions = yield* serve("m2", { disconnectEvents: false, sessionTimeoutMs: 2_500 })
      const nats = yield* Nats.make(fleet.connectOptions("c1"))
      const c1 = yield* clientOn(nats, "m2")
      expect((yield* c1.Echo({ text: "hi" })).text).toBe("hi")
      // Heartbeats keep it: past the expiry, it is still there.
      yield* Effect.sleep("4 seconds")
      expect(sessions.count()).toBe(1)
      yield* Effect.promise(() => nats.connection.close())
      yield* sessionsUntil(sessions, 0)
    }))

  it.scoped("a frame larger than the bound ends its own session only; another client is answered meanwhile", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      yield* serve("m3", { maxFrameBytes: 4 * 1024 * 1024 })
      const attacker = yield* client(fleet, "c1", "m3")
      const other = yield* client(fleet, "c2", "m3")
      const { answered, result } = yield* answeredDuring(
        other,
        Effect.exit(attacker.Upload({ data: new Uint8Array(6 * 1024 * 1024) }))
      )
      expect(result).toEqual(Exit.fail(expect.objectContaining({ _tag: "MachineRefused" })))
      expect(String(result)).toContain("larger than 4194304 bytes")
      expect(answered).toBeGreaterThan(0)
      // The refused session is over; the client's next call says so.
      expect(yield* Effect.exit(attacker.Echo({ text: "again" }))).toEqual(
        Exit.fail(expect.objectContaining({ _tag: "MachineRefused" }))
      )
    }))

  it.scoped("frames never finished are held up to the machine's bound: past it the session refused, others answered", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const sessions = yield* serve("m1", { maxBufferedBytes: 3 * 1024 * 1024 })
      const other = yield* client(fleet, "c2", "m1")
      const raw = yield* Nats.make(fleet.connectOptions("c1"))
      const first = yield* rawSession(raw, "m1", "held-1")
      const second = yield* rawSession(raw, "m1", "held-2")
      // Every part of a 16-part frame but the last: nothing the machine can decode, all of it held.
      const parts = (frameNo: number) =>
        envelope.frame({ part: 3, last: 4 }, frameNo, new Uint8Array(16 * 128 * 1024), 128 * 1024).slice(0, -1)
      const { answered } = yield* answeredDuring(
        other,
        Effect.promise(async () => {
          for (const part of parts(0)) first.send(part)
          await raw.connection.flush()
          for (const part of parts(0)) second.send(part)
          await raw.connection.flush()
        })
      )
      expect(answered).toBeGreaterThan(0)
      yield* Effect.sync(() => second.received.includes(22)).pipe(
        Effect.repeat({ until: (refused) => refused, schedule: every(20) }),
        Effect.timeout("5 seconds")
      )
      expect(first.received).not.toContain(22)
      expect(sessions.count()).toBe(2)
    }))

  it.scoped("a flood of half-open handshakes is capped per user, expires, and stalls no one", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const sessions = yield* serve("m4", { maxSessionsPerUser: 32, handshakeTimeoutMs: 1_000 })
      const other = yield* client(fleet, "c2", "m4")
      const raw = yield* Nats.make(fleet.connectOptions("c1"))
      const refusals = yield* Ref.make(0)
      raw.connection.subscribe("agent-terminal.inbox.c1.>", {
        callback: (_, message) => {
          if (message.data[0] === 22) Effect.runSync(Ref.update(refusals, (n) => n + 1))
        }
      })
      const open = new Uint8Array([1, ...new TextEncoder().encode(JSON.stringify({ v: envelope.VERSION }))])
      const { answered } = yield* answeredDuring(
        other,
        Effect.promise(async () => {
          for (let i = 0; i < 5_000; i++) {
            raw.connection.publish("agent-terminal.m.m4.rpc", open, { reply: `agent-terminal.inbox.c1.flood${i}` })
          }
          await raw.connection.flush()
        })
      )
      expect(answered).toBeGreaterThan(0)
      // 32 half-open sessions of c1 at most (plus the other client's one); the rest refused.
      expect(sessions.count()).toBeLessThanOrEqual(33)
      yield* Ref.get(refusals).pipe(
        Effect.repeat({ until: (n) => n >= 5_000 - 32, schedule: every(20) }),
        Effect.timeout("10 seconds")
      )
      yield* sessionsUntil(sessions, 1)
    }))

  it.scoped("a request sent again while its id still runs waits in its own session; other clients are answered", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const counters: Counters = { count: 0 }
      // The attacker sends no heartbeat: its session must not expire before the other client is answered.
      yield* serve("m2", { sessionTimeoutMs: 600_000 }, counters)
      const other = yield* client(fleet, "c2", "m2")
      const raw = yield* Nats.make(fleet.connectOptions("c1"))
      const attacker = yield* rawSession(raw, "m2", "same-id")
      // @effect/rpc's server lets the second wait for the first to end: here, ten minutes.
      attacker.send(requestFrame(0, "7", "Sleep", { ms: 600_000 }))
      attacker.send(requestFrame(1, "7", "Sleep", { ms: 600_000 }))
      yield* Effect.promise(() => raw.connection.flush())
      yield* Effect.sync(() => counters.count).pipe(
        Effect.repeat({ until: (n) => n === 1, schedule: every(20) }),
        Effect.timeout("10 seconds")
      )
      const answer = yield* other.Echo({ text: "meanwhile" }).pipe(Effect.timeout("10 seconds"))
      expect(answer.text).toBe("meanwhile")
    }))

  it.scoped("a stream runs ahead of its client by its window at most; the client's acknowledgements move it on", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const counters: Counters = { count: 0, ticks: 0 }
      yield* serve("m3", { streamWindow: { maxChunks: 4 } }, counters)
      const raw = yield* Nats.make(fleet.connectOptions("c1"))
      const reader = yield* rawSession(raw, "m3", "window")
      const chunks = () => reader.received.filter((kind) => kind === envelope.Machine.Frame).length
      const chunksUntil = (n: number) =>
        Effect.sync(chunks).pipe(
          Effect.repeat({ until: (got) => got >= n, schedule: every(10) }),
          Effect.timeout("10 seconds")
        )
      reader.send(requestFrame(0, "1", "Ticks", {}))
      yield* chunksUntil(4)
      // Nothing acknowledged: the machine waits (given time to run further if it would).
      yield* Effect.sleep("500 millis")
      expect(chunks()).toBe(4)
      expect(counters.ticks).toBeLessThanOrEqual(5)
      reader.control(envelope.Client.Acks, { acks: [["1", 2]] })
      yield* chunksUntil(6)
      yield* Effect.sleep("500 millis")
      expect(chunks()).toBe(6)
    }))
})
