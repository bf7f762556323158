import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as EnvPolicy from "../src/EnvPolicy.js"
import { OwnerId, SessionId } from "../src/Ids.js"
import type { ExitStatus, PtyProcess } from "../src/PtyBackend.js"
import { PtyBackend } from "../src/PtyBackend.js"
import * as PtyService from "../src/PtyService.js"
import * as Sandbox from "../src/Sandbox.js"
import * as ScriptedShell from "../src/ScriptedShell.js"
import * as TaskRuntime from "../src/TaskRuntime.js"

const owner = OwnerId.make("owner")

/** Where the next open stops for good, until the test interrupts it. */
type Step = "confine" | "spawn" | "first-prompt" | "none"

/**
 * Scripted shells whose processes are scoped resources (closing the spawn's scope terminates them, as the
 * real backend's do), counted while alive; the next open can be made to stop at one step of its start.
 */
const world = () => {
  const state = {
    stopAt: "none" as Step,
    stopped: undefined as Deferred.Deferred<void> | undefined,
    live: new Set<number>(),
    spawned: 0,
    /** `terminate` reports success without ending the process (its exit never arrives). */
    exitNeverArrives: false,
    terminated: 0
  }
  const stop = Effect.suspend(() => {
    state.stopAt = "none"
    return Deferred.succeed(state.stopped!, undefined).pipe(Effect.zipRight(Effect.never))
  })
  /** A process that never prints its first prompt: the open waits in its readiness race. */
  const silent: Effect.Effect<PtyProcess> = Effect.gen(function*() {
    const output = yield* Mailbox.make<Uint8Array>()
    const exited = yield* Deferred.make<ExitStatus>()
    const end = Effect.sync(() => {
      output.unsafeDone(Exit.void)
      Deferred.unsafeDone(exited, Exit.succeed({ exitCode: null, signal: "SIGKILL" }))
      return { containment: "sweep" as const, signalled: 0, survivors: [] }
    })
    return {
      pid: 70_000 + state.spawned,
      ttyPath: undefined,
      containment: "sweep",
      output,
      exited: Deferred.await(exited),
      write: () => Effect.void,
      discardInput: Effect.succeed(0),
      resize: () => Effect.void,
      pause: Effect.void,
      resume: Effect.void,
      signalGroup: () => Effect.succeed(true),
      terminate: end
    } satisfies PtyProcess
  })
  const backend = Layer.succeed(PtyBackend, {
    spawn: (request) =>
      Effect.gen(function*() {
        if (state.stopAt === "spawn") return yield* stop
        const quiet = state.stopAt === "first-prompt"
        if (quiet) {
          state.stopAt = "none"
          yield* Deferred.succeed(state.stopped!, undefined)
        }
        const spawned = yield* Effect.acquireRelease(
          quiet ? silent : ScriptedShell.spawn(request),
          (process) => Effect.asVoid(process.terminate.pipe(Effect.ignore))
        )
        const process: PtyProcess = {
          ...spawned,
          terminate: Effect.suspend(() => {
            state.terminated++
            return state.exitNeverArrives
              ? Effect.succeed({ containment: "sweep" as const, signalled: 0, survivors: [] })
              : spawned.terminate
          })
        }
        state.spawned++
        state.live.add(process.pid)
        yield* Effect.addFinalizer(() => Effect.sync(() => state.live.delete(process.pid)))
        return process
      })
  })
  const sandbox = Layer.succeed(Sandbox.Sandbox, {
    policy: Sandbox.fullAccess,
    confine: (request) => state.stopAt === "confine" ? stop : Effect.succeed(Sandbox.unconfined(request))
  })
  const layer = PtyService.layerConfig({ shell: "scripted-shell", openTimeoutMs: 60_000 }).pipe(
    Layer.provideMerge(Layer.mergeAll(
      Layer.mergeAll(ScriptedShell.layer, backend),
      EnvPolicy.layer({ host: {}, cwd: "/" }),
      TaskRuntime.layer,
      sandbox
    ))
  )
  const stopNextAt = (step: Step) =>
    Effect.map(Deferred.make<void>(), (stopped) => {
      state.stopAt = step
      state.stopped = stopped
      return stopped
    })
  return { state, layer, stopNextAt }
}

describe("an open interrupted at each step of its start leaves no entry, no name, no process", () => {
  for (const step of ["confine", "spawn", "first-prompt"] as const) {
    const { layer, state, stopNextAt } = world()
    it.scopedLive(`interrupted at ${step}`, () =>
      Effect.gen(function*() {
        const service = yield* PtyService.PtyService
        const stopped = yield* stopNextAt(step)
        const opening = yield* Effect.fork(service.open(owner, { name: "again" }))
        yield* Deferred.await(stopped)
        expect(Exit.isInterrupted(yield* Fiber.interrupt(opening))).toBe(true)
        expect(yield* service.list(owner)).toEqual([])
        expect([...state.live]).toEqual([])
        // the name is free again, and the new session is the only one
        const opened = yield* service.open(owner, { name: "again" })
        expect((yield* service.list(owner)).map((info) => info.name)).toEqual(["again"])
        const closed = yield* service.close(owner, SessionId.make(opened.sessionId))
        expect(closed.outcome).toBe("closed")
        expect([...state.live]).toEqual([])
      }).pipe(Effect.provide(layer)))
  }

  const timed = world()
  it.scopedLive("a caller's timeouts of 1, 5 and 20 ms, each followed by an open of the same name and a close", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      for (const ms of [1, 5, 20]) {
        yield* timed.stopNextAt("first-prompt")
        const exit = yield* Effect.exit(
          service.open(owner, { name: "again" }).pipe(Effect.timeoutFail({
            duration: ms,
            onTimeout: () => "timed out" as const
          }))
        )
        expect(exit).toEqual(Exit.fail("timed out"))
        expect(yield* service.list(owner)).toEqual([])
        expect([...timed.state.live]).toEqual([])
        const opened = yield* service.open(owner, { name: "again" })
        yield* service.close(owner, SessionId.make(opened.sessionId))
      }
      expect([...timed.state.live]).toEqual([])
    }).pipe(Effect.provide(timed.layer)))
})

describe("a close interrupted mid-way", () => {
  const { layer, state } = world()
  it.scopedLive("can be retried, and completes", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const opened = yield* service.open(owner, { name: "closing" })
      const id = SessionId.make(opened.sessionId)
      // the tree is gone but its exit does not arrive: the close waits for the output to drain
      state.exitNeverArrives = true
      const closing = yield* Effect.fork(service.close(owner, id))
      while (state.terminated === 0) yield* Effect.sleep(1)
      yield* Effect.sleep(20)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(closing))).toBe(true)
      state.exitNeverArrives = false
      const retried = yield* service.close(owner, id)
      expect(retried).toEqual({ sessionId: id, outcome: "closed", survivors: [] })
      expect(yield* service.list(owner)).toEqual([])
      expect([...state.live]).toEqual([])
      // the name is free again
      const again = yield* service.open(owner, { name: "closing" })
      yield* service.close(owner, SessionId.make(again.sessionId))
    }).pipe(Effect.provide(layer)))
})
