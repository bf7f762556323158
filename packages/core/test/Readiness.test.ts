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
 * The real readiness race (`settle`, through the service over scripted shells) under the `TestClock`, with
 * the `/proc` facts scripted by `ProcessInspector.layerTest`: every wait is in milliseconds of test time.
 */
const owner = OwnerId.make("owner")

const config = { pollIntervalMs: 100, exactProbeAfterMs: 150, idleSilenceMs: 100, handoffGraceMs: 100 }

/** What the inspector reports now; a scenario changes it as it goes. `foreground` undefined: the shell. */
const world = () => {
  const facts = {
    foreground: undefined as number | undefined,
    waiting: false,
    readCalls: 0 as number | undefined,
    readBytes: undefined as number | undefined,
    probes: 0
  }
  const inspector = ProcessInspector.layerTest({
    foregroundGroup: (terminal) => facts.foreground ?? terminal.shellPid,
    probes: [(terminal) => {
      facts.probes++
      const pgid = facts.foreground ?? terminal.shellPid
      return {
        _tag: "Snapshot",
        pgid,
        members: [pgid],
        waitingOnTerminal: facts.waiting,
        readCalls: facts.readCalls,
        readBytes: facts.readBytes
      }
    }]
  })
  return { facts, layer: ScriptedShell.layerService({ config, inspector }) }
}

/** A real turn of the event loop, I/O polled: the scripted shells' output arrives in these. */
const realTurn = Effect.async<void>((resume) => {
  setImmediate(() => setImmediate(() => resume(Effect.void)))
})

/**
 * Let `fiber` run while the test clock moves from one pending sleep to the next (output arriving in real
 * turns of the event loop in between), for at most `maxMs` of test time: its exit and the test time it
 * took, or `undefined` when it had not ended by then.
 */
const within = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, maxMs: number) =>
  Effect.gen(function*() {
    const start = yield* TestClock.currentTimeMillis
    const end = start + maxMs
    while (true) {
      yield* realTurn
      const done = yield* Fiber.poll(fiber)
      const now = yield* TestClock.currentTimeMillis
      if (Option.isSome(done)) {
        return { exit: done.value, ms: now - start }
      }
      const pending = Chunk.toReadonlyArray(yield* TestClock.sleeps()).filter((at) => at > now)
      const next = pending.length === 0 ? now + 1 : Math.min(...pending)
      if (next > end) {
        if (now < end) yield* TestClock.adjust(end - now)
        for (let turn = 0; turn < 4; turn++) yield* realTurn
        const last = yield* Fiber.poll(fiber)
        return Option.isSome(last) ? { exit: last.value, ms: end - start } : undefined
      }
      yield* TestClock.adjust(next - now)
    }
  })

const openShell = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, {})
  const id = SessionId.make(opened.sessionId)
  const send = (text: string) => Effect.fork(service.send(owner, id, { text }))
  return { service, id, opened, send }
})

const REPL = 424_242

/** A shell that started a REPL (its own group, in the foreground) which now waits for input. */
const replWaiting = (facts: ReturnType<typeof world>["facts"]) =>
  Effect.gen(function*() {
    const shell = yield* openShell
    facts.foreground = REPL
    facts.waiting = true
    const started = yield* within(yield* shell.send("repl"), 100)
    expect(started?.exit).toMatchObject(Exit.succeed({ waitReason: "stdin_read" }))
    return shell
  })

describe("readiness under the TestClock, with scripted /proc facts", () => {
  const repl = world()
  it.scoped("a REPL already waiting before the write: not ready until it has read the input", () =>
    Effect.gen(function*() {
      const { facts } = repl
      const { send } = yield* replWaiting(facts)
      facts.readBytes = 1000
      const sending = yield* send("print(1)")
      // it waits the whole time, but has read nothing of what was written
      expect(yield* within(sending, 70)).toBeUndefined()
      const probed = facts.probes
      expect(probed).toBeGreaterThan(5)
      facts.readBytes += "print(1)\r".length
      const settled = yield* within(sending, 200)
      expect(settled?.exit).toMatchObject(Exit.succeed({ waitReason: "stdin_read" }))
      // found at the next probe of the cadence (at most pollIntervalMs away), then confirmed
      expect(settled!.ms).toBeLessThanOrEqual(config.pollIntervalMs + 5)
    }).pipe(Effect.provide(repl.layer)))

  const leftAndBack = world()
  it.scoped("a wait left and re-entered is the evidence where the read counters are unknown", () =>
    Effect.gen(function*() {
      const { facts } = leftAndBack
      const { send } = yield* replWaiting(facts)
      facts.readCalls = undefined
      const sending = yield* send("x = 1")
      // still in the wait it was in before the write: nothing shows it took the input
      expect(yield* within(sending, 70)).toBeUndefined()
      // it leaves the wait (working on the line) long enough for a probe to see it ...
      facts.waiting = false
      const probed = facts.probes
      expect(yield* within(sending, config.pollIntervalMs + 10)).toBeUndefined()
      expect(facts.probes).toBeGreaterThan(probed)
      // ... and comes back to it
      facts.waiting = true
      const settled = yield* within(sending, 200)
      expect(settled?.exit).toMatchObject(Exit.succeed({ waitReason: "stdin_read" }))
      expect(settled!.ms).toBeLessThanOrEqual(config.pollIntervalMs + 5)
    }).pipe(Effect.provide(leftAndBack.layer)))

  const handOff = world()
  it.scoped("the prompt is back but the terminal is handed back only at the idle bound: it settles by prompt", () =>
    Effect.gen(function*() {
      const { facts } = handOff
      const { send } = yield* openShell
      // a job holds the terminal's foreground while the shell already printed its prompt
      facts.foreground = 31337
      const sending = yield* send("exit-status 4")
      expect(yield* within(sending, config.idleSilenceMs)).toBeUndefined()
      facts.foreground = undefined
      const settled = yield* within(sending, config.pollIntervalMs + 5)
      expect(settled?.exit).toMatchObject(Exit.succeed({ waitReason: "prompt", exitCode: 4 }))
    }).pipe(Effect.provide(handOff.layer)))

  const grace = world()
  it.scoped("never handed back: silence ends it only after the idle bound plus the handoff grace", () =>
    Effect.gen(function*() {
      const { facts } = grace
      const { send } = yield* openShell
      facts.foreground = 31337
      const sending = yield* send("true")
      const settled = yield* within(sending, config.idleSilenceMs + config.handoffGraceMs + 5)
      expect(settled?.exit).toMatchObject(Exit.succeed({ waitReason: "inferred_idle" }))
      expect(settled!.ms).toBeGreaterThanOrEqual(config.idleSilenceMs + config.handoffGraceMs - 1)
      expect(settled!.ms).toBeLessThanOrEqual(config.idleSilenceMs + config.handoffGraceMs + 1)
    }).pipe(Effect.provide(grace.layer)))
})
