import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as EnvPolicy from "../src/EnvPolicy.js"
import { LimitReached } from "../src/Errors.js"
import { OwnerId, SessionId } from "../src/Ids.js"
import { PtyBackend } from "../src/PtyBackend.js"
import * as PtyService from "../src/PtyService.js"
import { Registry } from "../src/Registry.js"
import * as Sandbox from "../src/Sandbox.js"
import * as ScriptedShell from "../src/ScriptedShell.js"
import * as TaskRuntime from "../src/TaskRuntime.js"
import type * as TerminalConfig from "../src/TerminalConfig.js"

const owner = OwnerId.make("owner")
const other = OwnerId.make("other")

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

/** Scripted shells, counting what was spawned and every byte written to them. */
const counted = (config: TerminalConfig.TerminalConfigInput = {}) => {
  const counts = { spawned: 0, written: [] as Array<string> }
  const backend = Layer.succeed(PtyBackend, {
    spawn: (request) =>
      Effect.map(ScriptedShell.spawn(request), (process) => {
        counts.spawned++
        return {
          ...process,
          write: (data: string | Uint8Array) => {
            counts.written.push(typeof data === "string" ? data : new TextDecoder().decode(data))
            return process.write(data)
          }
        }
      })
  })
  const settings = { shell: "scripted-shell", ...config }
  const layer = PtyService.layerConfig(settings).pipe(
    Layer.provideMerge(Layer.mergeAll(
      Layer.merge(ScriptedShell.layer, backend),
      EnvPolicy.layer({ host: {}, cwd: "/" }),
      TaskRuntime.layerConfig(settings),
      Sandbox.layerNone
    ))
  )
  return { counts, layer }
}

describe("per-owner caps", () => {
  const terminals = counted()
  it.scopedLive("the 33rd terminal of an owner is refused with LimitReached; nothing is spawned for it", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const opened = yield* Effect.forEach(
        Array.from({ length: 32 }, (_, i) => i),
        (i) => service.open(owner, { name: `t${i}` })
      )
      const spawned = terminals.counts.spawned
      const refused = yield* Effect.exit(service.open(owner, { name: "one-more" }))
      expect(failureOf(refused)).toEqual(new LimitReached({ limit: "terminals", max: 32 }))
      expect(failureOf(refused)?.message).toContain("at most 32 open terminals")
      expect(terminals.counts.spawned).toBe(spawned)
      expect((yield* service.list(owner)).length).toBe(32)
      // per owner: another owner still opens
      const theirs = yield* service.open(other, {})
      yield* service.close(other, SessionId.make(theirs.sessionId))
      // closing one frees a place, and the refused name was never taken
      yield* service.close(owner, SessionId.make(opened[0]!.sessionId))
      const again = yield* service.open(owner, { name: "one-more" })
      expect((yield* service.list(owner)).length).toBe(32)
      yield* Effect.forEach(
        [...opened.slice(1), again],
        (info) => service.close(owner, SessionId.make(info.sessionId)),
        { discard: true }
      )
    }).pipe(Effect.provide(terminals.layer)))

  const configured = counted({ maxTerminalsPerOwner: 2 })
  it.scopedLive("the cap is a setting (maxTerminalsPerOwner)", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      yield* service.open(owner, {})
      yield* service.open(owner, {})
      expect(failureOf(yield* Effect.exit(service.open(owner, {})))).toEqual(
        new LimitReached({ limit: "terminals", max: 2 })
      )
    }).pipe(Effect.provide(configured.layer)))

  const tasks = counted({ maxTerminalsPerOwner: 70 })
  it.scopedLive("the 65th live background send is refused with LimitReached: nothing is written, the session stays usable", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const runtime = yield* TaskRuntime.TaskRuntime
      const sessions = yield* Effect.forEach(
        Array.from({ length: 65 }, (_, i) => i),
        () => Effect.map(service.open(owner, {}), (info) => SessionId.make(info.sessionId))
      )
      const started = yield* Effect.forEach(
        sessions.slice(0, 64),
        (id) => service.send(owner, id, { text: "block", background: true })
      )
      expect(started.every((result) => result.taskId !== undefined)).toBe(true)
      const last = sessions[64]!
      const writes = tasks.counts.written.length
      const refused = yield* Effect.exit(service.send(owner, last, { text: "block", background: true }))
      expect(failureOf(refused)).toEqual(new LimitReached({ limit: "tasks", max: 64 }))
      expect(tasks.counts.written.length).toBe(writes)
      // the refused send held nothing: the session takes a foreground send at once
      expect(yield* service.send(owner, last, { text: "exit-status 5" })).toMatchObject({ exitCode: 5 })
      // a task that ends frees its place
      yield* runtime.kill(owner, started[0]!.taskId!)
      const next = yield* service.send(owner, last, { text: "block", background: true })
      expect(next.taskId).toBeDefined()
      yield* runtime.removeOwner(owner)
    }).pipe(Effect.provide(tasks.layer)))

  it.scoped("a reservation holds a place until it is used or released", () =>
    Effect.gen(function*() {
      const runtime = yield* TaskRuntime.makeWith({ maxLivePerOwner: 1 })
      const reservation = yield* runtime.reserve(owner)
      expect(failureOf(yield* Effect.exit(runtime.reserve(owner)))).toEqual(
        new LimitReached({ limit: "tasks", max: 1 })
      )
      reservation.release()
      reservation.release()
      const again = yield* runtime.reserve(owner)
      const spec = { kind: "test", label: "t", run: Effect.never, output: () => "", waitingForInput: () => false }
      yield* runtime.start(owner, spec, again)
      expect(failureOf(yield* Effect.exit(runtime.start(owner, spec)))).toEqual(
        new LimitReached({ limit: "tasks", max: 1 })
      )
      yield* runtime.removeOwner(owner)
    }))
})

describe("ids", () => {
  const shells = counted()
  it.scopedLive("session and task ids carry 96 random bits, and never repeat", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const ids = new Set<string>()
      for (let i = 0; i < 20; i++) {
        const opened = yield* service.open(owner, {})
        expect(opened.sessionId).toMatch(/^s-[0-9a-f]{24}$/)
        ids.add(opened.sessionId)
        const sent = yield* service.send(owner, SessionId.make(opened.sessionId), { text: "true", background: true })
        expect(sent.taskId).toMatch(/^t-[0-9a-f]{24}$/)
        ids.add(sent.taskId!)
        yield* service.close(owner, SessionId.make(opened.sessionId))
      }
      expect(ids.size).toBe(40)
    }).pipe(Effect.provide(shells.layer)))

  it("a minted id is checked against live and remembered ids (a colliding draw is drawn again)", () => {
    const registry = new Registry<string, { readonly owner: OwnerId }>((entry) => entry.owner, 4)
    registry.set("a", { owner })
    registry.set("b", { owner })
    registry.remove("b")
    const draws = ["a", "b", "a", "c"]
    expect(registry.mint(() => draws.shift()!)).toBe("c")
    expect(registry.mint(() => "a")).toBeUndefined()
    expect(registry.find(owner, "b")).toEqual({ _tag: "Gone" })
    expect(registry.find(other, "a")).toEqual({ _tag: "Foreign" })
  })
})
