import { Ids, PtyService, TaskRuntime } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as path from "node:path"
import { RemoteTerminal, TerminalRegistry } from "../src/index.js"
import { daemonLayer, tempDir } from "./support.js"

describe("the daemon's registry of tasks", () => {
  it.scopedLive("a task's end is recorded with its status, not left for a later run to end as daemon-stopped", () =>
    Effect.gen(function*() {
      const socket = path.join(yield* tempDir, "daemon.sock")
      const registryContext = yield* Layer.build(TerminalRegistry.layerMemory)
      const registry = yield* Effect.provide(TerminalRegistry.TerminalRegistry, registryContext)
      yield* Layer.build(daemonLayer(socket, { registry: Layer.succeedContext(registryContext) }))
      const remote = yield* Layer.build(RemoteTerminal.layer({ socket }))
      const pty = yield* Effect.provide(PtyService.PtyService, remote)
      const tasks = yield* Effect.provide(TaskRuntime.Tasks, remote)
      const { owner } = yield* Effect.provide(RemoteTerminal.Connected, remote)
      const { sessionId } = yield* pty.open(owner, {})
      const started = yield* pty.send(owner, Ids.SessionId.make(sessionId), { text: "sleep 0.2", background: true })
      expect((yield* tasks.output(owner, started.taskId!, { wait: true, timeoutMs: 10_000 })).status).toBe("completed")
      // recorded as the daemon hears of the end, just after
      let record = yield* registry.task(started.taskId!)
      for (let tries = 0; tries < 100 && Option.getOrUndefined(record)?.status === undefined; tries++) {
        yield* Effect.sleep(20)
        record = yield* registry.task(started.taskId!)
      }
      expect(Option.getOrUndefined(record)).toMatchObject({ kind: "send", status: "completed" })
      expect(Option.getOrUndefined(record)?.endedAt).toBeGreaterThan(0)
    }))
})
