import { Exec, PtyService, TaskRuntime } from "@agent-terminal/core"
import { NodeExec, NodePtyBackend, NodeTerminal } from "@agent-terminal/node"
import { expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { owner, testConfig } from "../support/terminal.js"
import { sleepers, uniqueSleep } from "./support.js"

/**
 * The real task runtime, except that a task's work waits at a gate before it begins: a run is then caught
 * in the instant between its task's start and the moment it is guarded.
 */
const gated = (gate: Deferred.Deferred<void>, entered: Deferred.Deferred<void>) =>
  Layer.effect(
    TaskRuntime.TaskRuntime,
    Effect.map(TaskRuntime.TaskRuntime, (real) =>
      TaskRuntime.TaskRuntime.of({
        ...real,
        start: (who, spec, reservation) =>
          real.start(who, {
            ...spec,
            run: Deferred.succeed(entered, undefined).pipe(
              Effect.zipRight(Deferred.await(gate)),
              Effect.zipRight(spec.run)
            )
          }, reservation)
      }))
  ).pipe(Layer.provide(TaskRuntime.layer))

const terminal = (gate: Deferred.Deferred<void>, entered: Deferred.Deferred<void>) =>
  NodeExec.layerConfig(testConfig).pipe(
    Layer.provideMerge(PtyService.layerConfig(testConfig)),
    Layer.provideMerge(NodeTerminal.inspectorLayer),
    Layer.provideMerge(gated(gate, entered)),
    Layer.provide(Layer.mergeAll(
      NodePtyBackend.layer,
      NodeTerminal.dialectsLayer,
      NodeTerminal.hostEnvironmentLayer(),
      NodeTerminal.sandboxLayer()
    ))
  )

it.live("a run interrupted before its task has guarded it leaves no task and no process", () =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const entered = yield* Deferred.make<void>()
    const seconds = uniqueSleep()
    const seen = yield* Effect.gen(function*() {
      const exec = yield* Exec.Exec
      // whatever happens, the gate opens before the service ends (a held run would hold its end)
      yield* Effect.addFinalizer(() => Deferred.succeed(gate, undefined))
      const running = yield* Effect.fork(exec.exec(owner, { spawn: { _tag: "child", argv: ["sleep", seconds] } }))
      yield* Deferred.await(entered)
      // the run's program is started (under load its exec of `sleep` may still be on its way)
      for (let i = 0; i < 200 && sleepers(seconds).length === 0; i++) yield* Effect.sleep(10)
      expect(sleepers(seconds).length).toBe(1)
      // the caller gives up (a timeout, a cancelled request) while the task has not begun its work
      const interrupting = yield* Effect.fork(Fiber.interrupt(running))
      yield* Effect.sleep(50)
      yield* Deferred.succeed(gate, undefined)
      expect(Exit.isInterrupted(yield* Fiber.join(interrupting))).toBe(true)
      return { runs: yield* exec.list(owner), left: sleepers(seconds) }
    }).pipe(Effect.scoped, Effect.provide(terminal(gate, entered)))
    expect(seen).toEqual({ runs: [], left: [] })
  }))
