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
import type { SendRequest } from "../src/Session.js"

/**
 * The `matched` tier in the real race, over scripted shells under the `TestClock`, with scripted `/proc`
 * facts (a REPL in the foreground that is busy: `stdin_read` cannot decide).
 */
const owner = OwnerId.make("owner")
const config = { pollIntervalMs: 100, exactProbeAfterMs: 150, idleSilenceMs: 100, handoffGraceMs: 100 }
const REPL = 515_151

const world = () => {
  const facts = { foreground: undefined as number | undefined, waiting: false }
  const inspector = ProcessInspector.layerTest({
    foregroundGroup: (terminal) => facts.foreground ?? terminal.shellPid,
    probes: [(terminal) => ({
      _tag: "Snapshot",
      pgid: facts.foreground ?? terminal.shellPid,
      members: [],
      waitingOnTerminal: facts.waiting,
      readCalls: undefined,
      readBytes: undefined
    })]
  })
  return { facts, layer: ScriptedShell.layerService({ config, inspector }) }
}

const realTurn = Effect.async<void>((resume) => {
  setImmediate(() => setImmediate(() => resume(Effect.void)))
})

/** Run the fiber while the test clock steps from one pending sleep to the next, at most `maxMs` of test time. */
const within = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, maxMs: number) =>
  Effect.gen(function*() {
    const start = yield* TestClock.currentTimeMillis
    while (true) {
      for (let turn = 0; turn < 3; turn++) yield* realTurn
      const done = yield* Fiber.poll(fiber)
      const now = yield* TestClock.currentTimeMillis
      if (Option.isSome(done)) return { exit: done.value, ms: now - start }
      if (now - start >= maxMs) return undefined
      const pending = Chunk.toReadonlyArray(yield* TestClock.sleeps()).filter((at) => at > now)
      const next = pending.length === 0 ? now + 1 : Math.min(...pending, start + maxMs)
      yield* TestClock.adjust(Math.max(1, next - now))
    }
  })

const openShell = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, {})
  const id = SessionId.make(opened.sessionId)
  const send = (request: SendRequest) => Effect.fork(service.send(owner, id, request))
  return { send }
})

describe("waitFor under the TestClock", () => {
  const repl = world()
  it.scoped("the echo of the typed line never matches; silence does not end a wait for a pattern", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell
      repl.facts.foreground = REPL
      repl.facts.waiting = true
      const started = yield* within(yield* send({ text: "repl" }), 200)
      expect(started?.exit).toMatchObject(Exit.succeed({ waitReason: "stdin_read" }))
      // busy from now on: no probe shows it waiting
      repl.facts.waiting = false
      // the REPL echoes the line and prints its prompt: the echo is not the output looked at
      const sending = yield* send({ text: "print-this", waitFor: { text: "print-this" }, timeoutMs: 600 })
      const settled = yield* within(sending, 1000)
      expect(settled?.exit).toMatchObject(Exit.succeed({ waitReason: "timeout" }))
      // not the idle bound (100 ms): the whole timeout
      expect(settled!.ms).toBeGreaterThanOrEqual(600)
    }).pipe(Effect.provide(repl.layer)))

  const flood = world()
  it.scoped("a match in a flood that scrolled off long ago is found, with the regex's groups", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell
      flood.facts.foreground = REPL
      const sending = yield* send({ text: "burst 6000 4000", waitFor: { regex: "^(12)(3)4$", flags: "m" } })
      const settled = yield* within(sending, 2000)
      expect(settled?.exit).toMatchObject(
        Exit.succeed({ waitReason: "matched", match: { text: "1234", groups: ["12", "3"] } })
      )
    }).pipe(Effect.provide(flood.layer)))

  const idle = world()
  it.scoped("with idleMs given, silence ends a wait for a pattern as inferred_idle", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell
      idle.facts.foreground = REPL
      const sending = yield* send({ text: "block", waitFor: { text: "never printed" }, idleMs: 150, timeoutMs: 5000 })
      const settled = yield* within(sending, 1000)
      expect(settled?.exit).toMatchObject(Exit.succeed({ waitReason: "inferred_idle" }))
      expect(settled!.ms).toBeLessThan(1000)
    }).pipe(Effect.provide(idle.layer)))
})
