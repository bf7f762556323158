import { Ids, PtyService } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { alive, children, owner, TestTerminal } from "../support/terminal.js"

layer(TestTerminal(), { excludeTestServices: true })("an interrupted open or close, real shells", (it) => {
  it.scoped("opens timed out after 1, 5 and 20 ms leave no entry, no name, no process (the issue's reproduction)", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const before = children()
      for (const ms of [1, 5, 20]) {
        const timed = yield* Effect.exit(service.open(owner, { name: "again" }).pipe(Effect.timeout(ms)))
        // On a fast machine the open may beat 20 ms: then it is an open session like any other.
        if (Exit.isSuccess(timed)) yield* service.close(owner, Ids.SessionId.make(timed.value.sessionId))
        expect(yield* service.list(owner)).toEqual([])
        // a shell left behind stays; what ends by itself (the first session's cgroup probe, which goes on
        // when the open that started it is interrupted) is given a moment
        const extra = () => children().filter((pid) => !before.includes(pid))
        for (let i = 0; i < 100 && extra().length > 0; i++) yield* Effect.sleep(10)
        expect(extra()).toEqual([])
        const opened = yield* service.open(owner, { name: "again" })
        expect((yield* service.list(owner)).map((info) => info.name)).toEqual(["again"])
        expect((yield* service.close(owner, Ids.SessionId.make(opened.sessionId))).outcome).toBe("closed")
        expect(alive(opened.pid)).toBe(false)
      }
    }))

  it.scoped("a close interrupted while it ends the tree can be retried, and completes", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const opened = yield* service.open(owner, { name: "closing" })
      const id = Ids.SessionId.make(opened.sessionId)
      // a child that handles TERM slowly keeps the close in its grace period
      yield* service.send(owner, id, {
        text: "sh -c 'trap \"sleep 0.5; exit 0\" TERM; while :; do sleep 0.05; done' &"
      })
      const closing = yield* Effect.fork(service.close(owner, id))
      yield* Effect.sleep(100)
      yield* Fiber.interrupt(closing)
      const retried = yield* service.close(owner, id)
      expect(retried).toMatchObject({ sessionId: id, outcome: "closed", survivors: [] })
      expect(yield* service.list(owner)).toEqual([])
      expect(alive(opened.pid)).toBe(false)
    }))
})
