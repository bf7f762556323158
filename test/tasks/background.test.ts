import { Errors, TaskRuntime } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { failureOf, openShell, otherOwner, owner, TestTerminal } from "../support/terminal.js"

layer(TestTerminal(), { excludeTestServices: true })("background sends", (it) => {
  it.scoped("returns a task id at once; task_output with wait returns the result", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const started = yield* send("sleep 2; echo done", { background: true })
      expect(started.waitReason).toBe("background")
      expect(started.taskId).toMatch(/^t-/)
      expect(started.elapsedMs).toBeLessThan(2000)
      const busy = yield* Effect.exit(send("echo busy"))
      expect(failureOf(busy)).toMatchObject({ _tag: "SendActive", taskId: started.taskId })
      const running = yield* tasks.output(owner, started.taskId!)
      expect(running.status).toBe("running")
      const done = yield* tasks.output(owner, started.taskId!, { wait: true, timeoutMs: 20_000 })
      expect(done.status).toBe("completed")
      expect(done.output).toContain("done")
      expect(done.result).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "done" })
      const again = yield* tasks.output(owner, started.taskId!)
      expect(again.output).toBe("")
      expect((yield* send("echo free")).output).toBe("free")
    }))

  it.scoped("output is incremental: each call returns what is new", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const started = yield* send("echo one; sleep 1; echo two; sleep 1; echo three", { background: true })
      let seen = ""
      let view = yield* tasks.output(owner, started.taskId!)
      while (view.status === "running") {
        seen += view.output
        yield* Effect.sleep(200)
        view = yield* tasks.output(owner, started.taskId!)
      }
      seen += view.output
      expect(seen.split("\n").filter((line) => line !== "")).toEqual(["one", "two", "three"])
    }))

  it.scoped("task_kill interrupts with a real SIGINT: the prompt is back, the task reports killed", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const started = yield* send("sleep 60", { background: true })
      yield* Effect.sleep(300)
      const killed = yield* tasks.kill(owner, started.taskId!)
      expect(killed.status).toBe("killed")
      const after = yield* send("echo $?; echo back")
      expect(after.waitReason).toBe("prompt")
      expect(after.output).toBe("130\nback")
    }))

  it.scoped("a killed task's output stops where the shell's next prompt starts, however soon it is read", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      // the race between the prompt's text and the kill's answer went either way: three rounds
      for (let round = 0; round < 3; round++) {
        const started = yield* send(`echo started-${round}; sleep 60`, { background: true })
        let seen = ""
        while (!seen.includes(`started-${round}`)) {
          seen += (yield* tasks.output(owner, started.taskId!)).output
          yield* Effect.sleep(50)
        }
        const killed = yield* tasks.kill(owner, started.taskId!)
        expect(killed.status).toBe("killed")
        expect(killed.output.trim()).toBe("")
      }
    }))

  it.scoped("a kill at once after the start still interrupts the command and frees the session", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const started = yield* send("sleep 60", { background: true })
      expect((yield* tasks.kill(owner, started.taskId!)).status).toBe("killed")
      const after = yield* send("echo back")
      expect(after.waitReason).toBe("prompt")
      expect(after.output).toBe("back")
    }))

  it.scoped("a background read reports waiting for input; writing to it completes it", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const started = yield* send("read x; echo \"got $x\"", { background: true })
      let view = yield* tasks.output(owner, started.taskId!)
      for (let i = 0; i < 50 && view.status !== "waiting_input"; i++) {
        yield* Effect.sleep(50)
        view = yield* tasks.output(owner, started.taskId!)
      }
      expect(view.status).toBe("waiting_input")
      yield* tasks.write(owner, started.taskId!, { text: "hello" })
      const done = yield* tasks.output(owner, started.taskId!, { wait: true, timeoutMs: 10_000 })
      expect(done.status).toBe("completed")
      // What a person sees: the typed answer echoed by the terminal, then the command's own output.
      expect(done.result).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "hello\ngot hello" })
    }))

  it.scoped("tasks belong to their owner", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const started = yield* send("sleep 1", { background: true })
      for (
        const attempt of [
          tasks.output(otherOwner, started.taskId!),
          tasks.kill(otherOwner, started.taskId!),
          tasks.write(otherOwner, started.taskId!, { text: "x" })
        ]
      ) {
        expect(failureOf(yield* Effect.exit(attempt as Effect.Effect<unknown, unknown>))).toBeInstanceOf(
          Errors.TaskNotFound
        )
      }
      expect(yield* tasks.list(otherOwner)).toEqual([])
      expect((yield* tasks.list(owner)).map((task) => task.taskId)).toContain(started.taskId)
      yield* tasks.output(owner, started.taskId!, { wait: true })
    }))
})
