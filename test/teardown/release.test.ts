import { Errors, Ids, PtyService } from "@agent-terminal/core"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import { failureOf, TestTerminal } from "../support/terminal.js"
import { FakeTerminal, makeWorld, SURVIVOR } from "./fakes.js"
import { alive, commOf, containments, openTagged, owner, TeardownTerminal, waitUntil } from "./support.js"

const world = makeWorld()

const openFake = Effect.gen(function*() {
  world.events.length = 0
  world.terminations = []
  world.exitNeverArrives = false
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, { argv: ["fake-program"] })
  const id = Ids.SessionId.make(opened.sessionId)
  yield* Effect.addFinalizer(() => service.close(owner, id).pipe(Effect.ignore))
  return { service, id }
})

layer(FakeTerminal(world), { excludeTestServices: true })("close, against a scripted backend", (it) => {
  it.scoped("survivors are reported by pid; the session stays listed and a failed close can be retried (20)", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      world.terminations = ["fail"]
      const failed = yield* Effect.exit(service.close(owner, id))
      expect(failureOf(failed)).toBeInstanceOf(Errors.CleanupFailed)
      expect((failureOf(failed) as Errors.CleanupFailed).survivors).toEqual([SURVIVOR])
      expect((yield* service.list(owner)).map((info) => info.sessionId)).toContain(id)
      const retried = yield* service.close(owner, id)
      expect(retried).toEqual({ sessionId: id, outcome: "closed", survivors: [] })
      expect(world.events.filter((event) => event.startsWith("terminate:"))).toEqual(["terminate:fail", "terminate:ok"])
      expect(yield* service.list(owner)).toEqual([])
    }))

  it.scoped("a process whose exit event never arrives after the kill still lets waiters finish (24)", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      world.exitNeverArrives = true
      const waiting = yield* Effect.fork(service.send(owner, id, { text: "forever" }))
      yield* waitUntil(() => world.events.includes("landed:forever\r"))
      const closed = yield* service.close(owner, id)
      expect(closed.outcome).toBe("closed")
      const result = yield* Fiber.join(waiting)
      expect(result.waitReason).toBe("session_exit")
      expect(result.sessionStatus._tag).toBe("exited")
    }))
})

for (const containment of containments) {
  layer(TeardownTerminal(containment), { excludeTestServices: true })(
    `close with the pty held open (${containment})`,
    (it) => {
      it.scoped("a pty slave held open by a process outside the tree: close ends, a waiting send finishes (24)", () =>
        Effect.gen(function*() {
          const { close, opened, send, tagged } = yield* openTagged()
          const tty = fs.readlinkSync(`/proc/${opened.pid}/fd/0`)
          // We hold the slave ourselves: the master never sees EIO, so node-pty's exit event is late.
          const holder = fs.openSync(tty, fs.constants.O_RDWR | fs.constants.O_NOCTTY)
          yield* Effect.addFinalizer(() => Effect.sync(() => fs.closeSync(holder)))
          const waiting = yield* Effect.fork(send("sleep 60; echo never"))
          yield* waitUntil(() => tagged().some((pid) => commOf(pid) === "sleep"))
          const result = yield* close
          expect(result.survivors).toEqual([])
          const settled = yield* Fiber.join(waiting)
          // Children go first: the shell may show its prompt in the instant before it is killed itself.
          expect(["session_exit", "prompt"]).toContain(settled.waitReason)
          expect(alive(opened.pid)).toBe(false)
          expect(tagged()).toEqual([])
        }))
    }
  )
}

describe("closing the service itself", () => {
  it.live("closes every open session the way close does, a send in flight included, and completes", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const service = yield* PtyService.PtyService
        const idle = yield* service.open(owner, {})
        const busy = yield* service.open(owner, {})
        const waiting = yield* Effect.fork(
          service.send(owner, Ids.SessionId.make(busy.sessionId), { text: "sleep 60" })
        )
        // Whether the shell has started `sleep` yet or not, the send ends with the session.
        yield* Effect.sleep(200)
        return { pids: [idle.pid, busy.pid], waiting }
      }).pipe(Effect.scoped, Effect.provide(TestTerminal()))
      expect(seen.pids.filter(alive)).toEqual([])
      const settled = yield* Fiber.join(seen.waiting)
      expect(settled.waitReason).toBe("session_exit")
    }))
})
