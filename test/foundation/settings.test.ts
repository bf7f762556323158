import { Errors, Ids, PtyService, TerminalConfig } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { run, uniqueSleep } from "../exec/support.js"
import { failureOf, owner, testConfig } from "../support/terminal.js"

/**
 * Settings validated once and provided as a layer (what the CLI does): `NodeTerminal.layerFromSettings` reads
 * that one value in the service, the task runtime and the exec supervisor alike — no second decode of
 * another input that could disagree.
 */
const settings = Effect.runSync(TerminalConfig.make({ ...testConfig, maxTerminalsPerOwner: 1, maxTasksPerOwner: 1 }))

const terminals = NodeTerminal.layerFromSettings().pipe(
  Layer.provide(Layer.succeed(TerminalConfig.TerminalSettings, settings))
)

layer(terminals, { excludeTestServices: true })("settings provided once, as a layer", (it) => {
  it.scoped("the service and the task runtime both run with the provided value", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const first = yield* service.open(owner, {})
      const refused = yield* Effect.exit(service.open(owner, {}))
      expect(failureOf(refused)).toEqual(new Errors.LimitReached({ limit: "terminals", max: 1 }))
      yield* service.close(owner, Ids.SessionId.make(first.sessionId))

      const seconds = uniqueSleep()
      const task = yield* run({ spawn: { _tag: "child", argv: ["sleep", seconds] }, background: true })
      expect(task.taskId).toBeDefined()
      const second = yield* Effect.exit(run({ spawn: { _tag: "child", argv: ["true"] } }))
      expect(failureOf(second)).toEqual(new Errors.LimitReached({ limit: "tasks", max: 1 }))
    }))
})
