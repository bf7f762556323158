import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Audit from "../src/Audit.js"
import { HumanInControl } from "../src/Errors.js"
import { OwnerId, SessionId } from "../src/Ids.js"
import * as Oversight from "../src/Oversight.js"
import { ProcessInspector, type TerminalModes } from "../src/ProcessInspector.js"
import * as PtyService from "../src/PtyService.js"
import * as Recording from "../src/Recording.js"
import * as ScriptedShell from "../src/ScriptedShell.js"
import * as TaskRuntime from "../src/TaskRuntime.js"

const owner = OwnerId.make("agent")
const alice = Oversight.personId("alice")

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

/** The scripted shell, its terminal modes set by the test, the audit and the recordings kept in memory. */
const setup = (config: Record<string, unknown> = {}) => {
  const modes: { now: TerminalModes } = { now: { echo: true, canonical: true } }
  const audit = Audit.makeMemory()
  const recordings = Recording.makeMemory()
  const inspector = Layer.succeed(ProcessInspector, {
    ...ScriptedShell.inspector,
    terminalModes: () => Effect.sync(() => Option.some(modes.now))
  })
  const layer = ScriptedShell.layerService({ config, inspector }).pipe(
    Layer.provide(Layer.merge(Layer.succeed(Audit.Audit, audit), Layer.succeed(Recording.Recordings, recordings)))
  )
  return { modes, audit, recordings, layer }
}

describe("the control lease", () => {
  const world = setup({ recordInput: true })
  it.scopedLive("refuses the agent while a person holds it; the next send reports what happened", () =>
    Effect.gen(function*() {
      const pty = yield* PtyService.PtyService
      const oversight = yield* Oversight.Oversight
      const { sessionId } = yield* pty.open(owner, { record: true })
      const id = SessionId.make(sessionId)
      yield* pty.send(owner, id, { text: "echo before" })
      yield* oversight.take(sessionId, alice)
      const listed = (yield* oversight.sessions).find((session) => session.sessionId === sessionId)!
      expect(listed.control?.holder).toBe(alice)
      const refused = failureOf(yield* Effect.exit(pty.send(owner, id, { text: "echo agent" })))
      expect(refused).toBeInstanceOf(HumanInControl)
      expect((refused as HumanInControl).holder).toBe(alice)
      expect(failureOf(yield* Effect.exit(pty.signal(owner, id, "SIGINT")))).toBeInstanceOf(HumanInControl)
      expect(failureOf(yield* Effect.exit(pty.resize(owner, id, { cols: 100, rows: 30 })))).toBeInstanceOf(
        HumanInControl
      )
      // another person cannot type or take it
      const bob = Oversight.personId("bob")
      expect(failureOf(yield* Effect.exit(oversight.input(sessionId, bob, "x")))).toBeInstanceOf(
        Oversight.NotInControl
      )
      expect(failureOf(yield* Effect.exit(oversight.take(sessionId, bob)))).toBeInstanceOf(HumanInControl)
      yield* oversight.input(sessionId, alice, "echo human-was-here\r")
      world.modes.now = { echo: false, canonical: true }
      yield* oversight.input(sessionId, alice, "s3cret-pw\r")
      world.modes.now = { echo: true, canonical: true }
      yield* Effect.sleep("50 millis")
      const note = yield* oversight.handBack(sessionId, alice)
      expect(note).toMatchObject({ holder: alice, linesTyped: 2, echoOffBytes: 10, endedBy: "hand-back" })
      const after = yield* pty.send(owner, id, { text: "echo after" })
      expect(after.human).toMatchObject({ holder: alice, linesTyped: 2 })
      expect(after.output.startsWith("[human: in control for 0 s, 2 lines typed, 10 bytes with echo off")).toBe(
        true
      )
      expect(after.output).toContain("human-was-here")
      // reported once
      expect((yield* pty.send(owner, id, { text: "echo again" })).human).toBeUndefined()
      const entries = yield* oversight.audit(sessionId)
      const text = JSON.stringify(entries)
      expect(text).not.toContain("s3cret")
      expect(entries.map((entry) => entry.action)).toEqual(
        expect.arrayContaining(["send", "take", "input", "hand-back"])
      )
      expect(entries.find((entry) => entry.detail === "[human typed 10 bytes with echo off]")?.actor).toBe(alice)
      expect(entries.find((entry) => entry.detail === "echo human-was-here\\r")?.actor).toBe(alice)
      yield* pty.close(owner, id)
      // the scripted shell echoes whatever it gets (it has no termios): only the input events are checked here
      const cast = Array.from(world.recordings.files.values())[0]!
      const inputs = cast.filter((line) => line.includes(`"i"`))
      expect(inputs.join("\n")).not.toContain("s3cret")
      expect(inputs.join("\n")).toContain("[human typed 10 bytes with echo off]")
      expect(cast.join("\n")).toContain("send: echo after")
    }).pipe(Effect.provide(world.layer)))

  it.scopedLive("a hand-back right after the person's last line: the note holds what it printed, the next send its own", () =>
    Effect.gen(function*() {
      const pty = yield* PtyService.PtyService
      const oversight = yield* Oversight.Oversight
      const { sessionId } = yield* pty.open(owner, {})
      const id = SessionId.make(sessionId)
      yield* oversight.take(sessionId, alice)
      // handed back before the shell's answer was read (it comes on a later turn, as a pty's output does)
      yield* oversight.input(sessionId, alice, "echo human-was-here\r")
      yield* oversight.handBack(sessionId, alice)
      // the send settles by its own prompt (exit status 3), not by the one after the person's line (0)
      const after = yield* pty.send(owner, id, { text: "exit-status 3" })
      expect(after.output).toBe("[human: in control for 0 s, 1 line typed]\necho human-was-here\n$ ")
      expect(after).toMatchObject({ waitReason: "prompt", exitCode: 3 })
    }).pipe(Effect.provide(setup().layer)))

  const requests = setup()
  it.scopedLive("a request for a person is a task that ends at the hand-back", () =>
    Effect.gen(function*() {
      const pty = yield* PtyService.PtyService
      const tasks = yield* TaskRuntime.TaskRuntime
      const oversight = yield* Oversight.Oversight
      const { sessionId } = yield* pty.open(owner, {})
      const id = SessionId.make(sessionId)
      const asked = yield* pty.requestHuman(owner, id, { reason: "type the sudo password" })
      expect(asked.status).toBe("pending")
      const listed = (yield* oversight.sessions).find((session) => session.sessionId === sessionId)!
      expect(listed.requests.map((request) => request.reason)).toEqual(["type the sudo password"])
      const waiting = yield* Effect.fork(tasks.output(owner, asked.taskId, { wait: true, timeoutMs: 10_000 }))
      yield* oversight.take(sessionId, alice)
      yield* oversight.input(sessionId, alice, "true\r")
      yield* oversight.handBack(sessionId, alice)
      const view = yield* Fiber.join(waiting)
      expect(view.status).toBe("completed")
      expect(view.result).toMatchObject({ holder: alice, linesTyped: 1, endedBy: "hand-back" })
      expect((yield* oversight.sessions).find((session) => session.sessionId === sessionId)!.requests).toEqual([])
      const timedOut = yield* pty.requestHuman(owner, id, { reason: "again", wait: true, timeoutMs: 50 })
      expect(timedOut.status).toBe("pending")
    }).pipe(Effect.provide(requests.layer)))

  const interrupted = setup()
  it.scopedLive("a request whose caller is interrupted while it waits is withdrawn: no task, no request left", () =>
    Effect.gen(function*() {
      const pty = yield* PtyService.PtyService
      const tasks = yield* TaskRuntime.TaskRuntime
      const oversight = yield* Oversight.Oversight
      const { sessionId } = yield* pty.open(owner, {})
      const id = SessionId.make(sessionId)
      const waited = yield* Effect.exit(
        pty.requestHuman(owner, id, { reason: "unlock", wait: true, timeoutMs: 10_000 }).pipe(
          Effect.timeout("100 millis")
        )
      )
      expect(Exit.isFailure(waited)).toBe(true)
      expect((yield* tasks.list(owner)).filter((task) => task.kind === "human")).toEqual([])
      expect((yield* oversight.sessions).find((session) => session.sessionId === sessionId)!.requests).toEqual([])
    }).pipe(Effect.provide(interrupted.layer)))

  const idle = setup({ controlIdleMs: 200 })
  it.scopedLive("the lease ends by itself after the idle timeout", () =>
    Effect.gen(function*() {
      const pty = yield* PtyService.PtyService
      const oversight = yield* Oversight.Oversight
      const { sessionId } = yield* pty.open(owner, {})
      yield* oversight.take(sessionId, alice)
      yield* Effect.sleep("600 millis")
      const listed = (yield* oversight.sessions).find((session) => session.sessionId === sessionId)!
      expect(listed.control).toBeUndefined()
      const sent = yield* pty.send(owner, SessionId.make(sessionId), { text: "echo ok" })
      expect(sent.human?.endedBy).toBe("idle-timeout")
      expect(sent.output).toContain("the lease timed out")
    }).pipe(Effect.provide(idle.layer)))

  /** Real turns of the event loop (the scripted shell's output arrives in these), the test clock standing still. */
  const turns = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
    Effect.gen(function*() {
      for (let turn = 0; turn < 200 && Option.isNone(yield* Fiber.poll(fiber)); turn++) {
        yield* Effect.async<void>((resume) => {
          setImmediate(() => setImmediate(() => resume(Effect.void)))
        })
      }
    })

  const clocked = setup({ controlIdleMs: 60_000 })
  it.scoped("under a TestClock: the lease's times, its audit and its idle timeout all keep the service's clock", () =>
    Effect.gen(function*() {
      const pty = yield* PtyService.PtyService
      const oversight = yield* Oversight.Oversight
      const opening = yield* Effect.fork(pty.open(owner, {}))
      yield* turns(opening)
      const { sessionId } = yield* Fiber.join(opening)
      yield* TestClock.adjust(1_000_000)
      const state = yield* oversight.take(sessionId, alice)
      expect(state).toMatchObject({ since: 1_000_000, lastInputAt: 1_000_000, idleMs: 60_000 })
      // input 40 s in moves the idle timeout: 60 s after it, not after the take
      yield* TestClock.adjust(40_000)
      yield* oversight.input(sessionId, alice, "echo typed\r")
      yield* TestClock.adjust(59_999)
      const held = (yield* oversight.sessions).find((session) => session.sessionId === sessionId)!
      expect(held.control).toMatchObject({ since: 1_000_000, lastInputAt: 1_040_000 })
      yield* TestClock.adjust(1)
      const ended = yield* Effect.fork(Effect.gen(function*() {
        while ((yield* oversight.sessions).find((session) => session.sessionId === sessionId)!.control !== undefined) {
          yield* Effect.yieldNow()
        }
      }))
      yield* turns(ended)
      yield* Fiber.join(ended)
      const sent = yield* Effect.fork(pty.send(owner, SessionId.make(sessionId), { text: "echo ok" }))
      yield* turns(sent)
      const result = yield* Fiber.join(sent)
      // held 100 s of test time, whatever the wall clock did meanwhile
      expect(result.human).toMatchObject({ holder: alice, heldMs: 100_000, endedBy: "idle-timeout" })
      const entries = yield* oversight.audit(sessionId)
      expect(entries.filter((entry) => entry.action !== "send").map(({ action, at }) => ({ action, at }))).toEqual(
        expect.arrayContaining([
          { action: "take", at: 1_000_000 },
          { action: "input", at: 1_040_000 },
          { action: "idle-timeout", at: 1_100_000 }
        ])
      )
    }).pipe(Effect.provide(clocked.layer)))
})
