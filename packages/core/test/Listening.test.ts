import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { OwnerId, SessionId } from "../src/Ids.js"
import * as ProcessInspector from "../src/ProcessInspector.js"
import * as PtyService from "../src/PtyService.js"
import * as ScriptedShell from "../src/ScriptedShell.js"

/**
 * The `listening` wait and the foreground activity of a `timeout` result, through the service over scripted
 * shells, with `/proc`'s answers scripted (`ProcessInspector.layerTest`) and every wait in test time.
 */
const owner = OwnerId.make("owner")
const config = { pollIntervalMs: 50, idleSilenceMs: 100 }

const world = () => {
  const facts = {
    listeners: [] as Array<ProcessInspector.Listener>,
    looks: 0,
    activity: undefined as ProcessInspector.ProcessActivity | undefined
  }
  const inspector = ProcessInspector.layerTest({
    foregroundGroup: (terminal) => terminal.shellPid,
    probes: [{ _tag: "Miss", reason: "not scripted" }],
    listening: () => {
      facts.looks++
      return facts.listeners
    },
    activity: () => facts.activity
  })
  return { facts, layer: ScriptedShell.layerService({ config, inspector }) }
}

const realTurn = Effect.async<void>((resume) => {
  setImmediate(() => setImmediate(() => resume(Effect.void)))
})

/** Run `fiber` while the test clock steps from one pending sleep to the next, for at most `maxMs`. */
const within = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, maxMs: number) =>
  Effect.gen(function*() {
    const start = yield* TestClock.currentTimeMillis
    while (true) {
      yield* realTurn
      const done = yield* Fiber.poll(fiber)
      const now = yield* TestClock.currentTimeMillis
      if (Option.isSome(done)) return { exit: done.value, ms: now - start }
      const pending = Chunk.toReadonlyArray(yield* TestClock.sleeps()).filter((at) => at > now)
      const next = pending.length === 0 ? now + 1 : Math.min(...pending)
      if (next > start + maxMs) return undefined
      yield* TestClock.adjust(next - now)
    }
  })

const server = (port: number): ProcessInspector.Listener => ({
  pid: 7,
  name: "server",
  protocol: "tcp",
  address: "127.0.0.1",
  port
})

describe("listening, under the TestClock", () => {
  const ready = world()
  it.scoped("matched within a look of the socket appearing; sockets that listened before the write do not count", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const opened = yield* service.open(owner, {})
      const id = SessionId.make(opened.sessionId)
      ready.facts.listeners = [server(5000)]
      const sending = yield* Effect.fork(service.send(owner, id, { text: "block", waitFor: { listening: true } }))
      // a server of before the write (port 5000) listens all along: no match
      expect(yield* within(sending, 1000)).toBeUndefined()
      expect(ready.facts.looks).toBeGreaterThan(5)
      ready.facts.listeners = [server(5000), server(8000)]
      const settled = yield* within(sending, 200)
      expect(settled?.exit).toMatchObject(
        Exit.succeed({ waitReason: "matched", match: { text: "", listening: server(8000) } })
      )
      // found at the next look, at most 100 ms away, though the program printed nothing
      expect(settled!.ms).toBeLessThanOrEqual(101)
    }).pipe(Effect.provide(ready.layer)))

  const port = world()
  it.scoped("a port: only a TCP socket on that port matches", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const id = SessionId.make((yield* service.open(owner, {})).sessionId)
      const sending = yield* Effect.fork(service.send(owner, id, { text: "block", waitFor: { listening: 9000 } }))
      port.facts.listeners = [server(8000), { pid: 7, name: "server", protocol: "unix", address: "/run/9000" }]
      expect(yield* within(sending, 500)).toBeUndefined()
      port.facts.listeners = [...port.facts.listeners, { ...server(9000), protocol: "tcp6", address: "::" }]
      const settled = yield* within(sending, 200)
      expect(settled?.exit).toMatchObject(Exit.succeed({ match: { listening: { port: 9000, protocol: "tcp6" } } }))
    }).pipe(Effect.provide(port.layer)))

  const timeout = world()
  it.scoped("a timeout says what the foreground program is doing; a prompt does not", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const id = SessionId.make((yield* service.open(owner, {})).sessionId)
      timeout.facts.activity = { pid: 42, name: "sleep", state: "sleeping", detail: "clock_nanosleep" }
      const sending = yield* Effect.fork(service.send(owner, id, { text: "block", timeoutMs: 300 }))
      const settled = yield* within(sending, 400)
      expect(settled?.exit).toMatchObject(
        Exit.succeed({ waitReason: "timeout", foreground: { name: "sleep", state: "sleeping" } })
      )
      yield* service.signal(owner, id, "SIGINT")
      const done = yield* Effect.fork(service.send(owner, id, { text: "true" }))
      const back = yield* within(done, 400)
      expect(back?.exit._tag).toBe("Success")
      expect(Exit.isSuccess(back!.exit) && back!.exit.value.foreground).toBe(undefined)
    }).pipe(Effect.provide(timeout.layer)))
})

describe("listening where /proc cannot tell", () => {
  it.scoped("is InvalidInput naming waitFor.listening (the scripted shells' own inspector has no listening)", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const id = SessionId.make((yield* service.open(owner, {})).sessionId)
      const refused = yield* Effect.flip(service.send(owner, id, { text: "true", waitFor: { listening: true } }))
      expect(refused).toMatchObject({ _tag: "InvalidInput", field: "waitFor.listening" })
      const inSteps = yield* Effect.flip(
        service.send(owner, id, { steps: [{ text: "true" }, { text: "true", waitFor: { listening: 80 } }] })
      )
      expect(inSteps).toMatchObject({ _tag: "InvalidInput", field: "steps.1.waitFor.listening" })
    }).pipe(Effect.provide(ScriptedShell.layerService({ config }))))
})
