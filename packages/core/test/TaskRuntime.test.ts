import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import { InvalidInput, TaskNotFound } from "../src/Errors.js"
import { OwnerId } from "../src/Ids.js"
import * as TaskRuntime from "../src/TaskRuntime.js"

const owner = OwnerId.make("owner")
const other = OwnerId.make("other")

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

describe("TaskRuntime", () => {
  it.scoped("output is incremental; wait returns the result once the task ends", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.make
      const release = yield* Deferred.make<void>()
      let printed = "one\n"
      const id = yield* tasks.start(owner, {
        kind: "test",
        label: "printer",
        run: Deferred.await(release).pipe(Effect.as({ code: 0 })),
        output: () => printed,
        waitingForInput: () => false
      })
      expect(yield* tasks.output(owner, id)).toMatchObject({ status: "running", output: "one\n" })
      expect((yield* tasks.output(owner, id)).output).toBe("")
      printed += "two\n"
      expect((yield* tasks.output(owner, id)).output).toBe("two\n")
      printed = "one\nTWO\n"
      expect((yield* tasks.output(owner, id)).output).toBe("TWO\n")
      yield* Deferred.succeed(release, undefined)
      const done = yield* tasks.output(owner, id, { wait: true })
      expect(done).toMatchObject({ status: "completed", result: { code: 0 }, output: "" })
    }))

  it.scoped("a kill right after the start (before the work ran) still ends the task", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.make
      const id = yield* tasks.start(owner, {
        kind: "test",
        label: "never",
        run: Effect.never,
        output: () => "",
        waitingForInput: () => false
      })
      const killed = yield* tasks.kill(owner, id)
      expect(killed.status).toBe("killed")
      expect((yield* tasks.kill(owner, id)).status).toBe("killed")
    }))

  it.scoped("onEnd runs once however the task ends, a kill before the work began included", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.make
      const ended: Array<string> = []
      const spec = (label: string, run: Effect.Effect<unknown>) => ({
        kind: "test",
        label,
        run,
        output: () => "",
        waitingForInput: () => false,
        onEnd: Effect.sync(() => ended.push(label))
      })
      const killedEarly = yield* tasks.start(owner, spec("killed-early", Effect.never))
      yield* tasks.kill(owner, killedEarly)
      expect(ended).toEqual(["killed-early"])
      const completes = yield* tasks.start(owner, spec("completes", Effect.succeed(1)))
      yield* tasks.output(owner, completes, { wait: true })
      expect(ended).toEqual(["killed-early", "completes"])
      yield* tasks.kill(owner, killedEarly)
      expect(ended).toEqual(["killed-early", "completes"])
    }))

  it.scopedLive("a failed task reports its error; waiting input is a status", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.make
      const failing = yield* tasks.start(owner, {
        kind: "test",
        label: "fails",
        run: Effect.fail(new InvalidInput({ field: "x", reason: "bad" })),
        output: () => "",
        waitingForInput: () => false
      })
      const failed = yield* tasks.output(owner, failing, { wait: true })
      expect(failed).toMatchObject({ status: "failed", error: { _tag: "InvalidInput", message: "invalid x: bad" } })
      const waiting = yield* tasks.start(owner, {
        kind: "test",
        label: "asks",
        run: Effect.never,
        output: () => "? ",
        waitingForInput: () => true
      })
      expect((yield* tasks.output(owner, waiting, { wait: true, timeoutMs: 10 })).status).toBe("waiting_input")
      const noInput = yield* Effect.exit(tasks.write(owner, waiting, { text: "x" }))
      expect(failureOf(noInput)).toMatchObject({ _tag: "InvalidInput", field: "taskId" })
      yield* tasks.kill(owner, waiting)
    }))

  it.scoped("tasks belong to their owner; completions are published", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.make
      const ended = yield* PubSub.subscribe(tasks.completions)
      const id = yield* tasks.start(owner, {
        kind: "test",
        label: "quick",
        run: Effect.succeed("ok"),
        output: () => "",
        waitingForInput: () => false
      })
      for (const attempt of [tasks.output(other, id), tasks.kill(other, id), tasks.remove(other, id)]) {
        expect(failureOf(yield* Effect.exit(attempt as Effect.Effect<unknown, unknown>))).toBeInstanceOf(TaskNotFound)
      }
      expect(yield* tasks.list(other)).toEqual([])
      expect(yield* Queue.take(ended)).toMatchObject({ owner, taskId: id, status: "completed" })
      yield* tasks.remove(owner, id)
      expect(yield* tasks.list(owner)).toEqual([])
    }))
})
