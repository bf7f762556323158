import { Errors, Ids, PtyService } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { run, sleepers, uniqueSleep } from "../exec/support.js"
import { alive, children, failureOf, owner, TestTerminal } from "../support/terminal.js"

layer(TestTerminal(), { excludeTestServices: true })("the per-owner cap on terminals, real shells", (it) => {
  it.scoped("an owner opening 33 terminals gets 32 and LimitReached; the 33rd starts nothing, and all close", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const before = children()
      const opened = yield* Effect.forEach(Array.from({ length: 32 }, (_, i) => i), () => service.open(owner, {}))
      const running = children()
      const refused = yield* Effect.exit(service.open(owner, {}))
      expect(failureOf(refused)).toEqual(new Errors.LimitReached({ limit: "terminals", max: 32 }))
      expect(children()).toEqual(running)
      expect((yield* service.list(owner)).length).toBe(32)
      yield* Effect.forEach(opened, (info) => service.close(owner, Ids.SessionId.make(info.sessionId)), {
        discard: true
      })
      expect(opened.filter((info) => alive(info.pid))).toEqual([])
      expect(children().filter((pid) => !before.includes(pid))).toEqual([])
    }))
})

layer(TestTerminal({ maxTasksPerOwner: 2 }), { excludeTestServices: true })(
  "the per-owner cap on live tasks, real runs",
  (it) => {
    it.scoped("a one-shot run past the cap is refused before it starts: its command never runs", () =>
      Effect.gen(function*() {
        const seconds = uniqueSleep()
        const first = yield* run({ spawn: { _tag: "child", argv: ["sleep", seconds] }, background: true })
        const second = yield* run({ spawn: { _tag: "pty", command: `sleep ${seconds}` }, background: true })
        expect([first.taskId, second.taskId].every((id) => id !== undefined)).toBe(true)
        const planted = path.join(os.tmpdir(), `limit-${seconds}`)
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(planted, { force: true })))
        const refused = yield* Effect.exit(run({ spawn: { _tag: "child", argv: ["touch", planted] } }))
        expect(failureOf(refused)).toEqual(new Errors.LimitReached({ limit: "tasks", max: 2 }))
        const shell = yield* Effect.exit(run({ spawn: { _tag: "pty", command: `touch ${planted}` } }))
        expect(failureOf(shell)).toEqual(new Errors.LimitReached({ limit: "tasks", max: 2 }))
        yield* Effect.sleep(200)
        expect(fs.existsSync(planted)).toBe(false)
        expect(sleepers(seconds).length).toBe(2)
      }))
  }
)
