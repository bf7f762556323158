import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { failureOf, openShell, owner, TestTerminal } from "../support/terminal.js"

layer(TestTerminal(), { excludeTestServices: true })("steps", (it) => {
  it.scoped("three lines to a Python REPL in one call: each settled by stdin_read, results in order", () =>
    Effect.gen(function*() {
      const { service, id } = yield* openShell()
      const result = yield* service.send(owner, id, {
        steps: [
          { text: "python3 -q" },
          { text: "x = 6 * 7" },
          { text: "print(x, x + 1)" },
          { text: "print('done')" }
        ]
      })
      expect(result.steps?.map((step) => step.waitReason)).toEqual([
        "stdin_read",
        "stdin_read",
        "stdin_read",
        "stdin_read"
      ])
      expect(result.steps?.[2]?.output).toBe("42 43\n>>> ")
      expect(result.steps?.[3]?.output).toBe("done\n>>> ")
      expect(result.output).toBe("done\n>>> ")
      expect(result.waitReason).toBe("stdin_read")
      expect(result.stoppedAt).toBeUndefined()
    }))

  it.scoped("a step that times out stops the rest and says which", () =>
    Effect.gen(function*() {
      const { send, service, id } = yield* openShell()
      const result = yield* service.send(owner, id, {
        steps: [
          { text: "echo first" },
          { text: "sleep 30", timeoutMs: 500 },
          { text: "echo never-runs" }
        ]
      })
      expect(result.steps?.map((step) => step.waitReason)).toEqual(["prompt", "timeout"])
      expect(result.steps?.[0]).toMatchObject({ output: "first", exitCode: 0 })
      expect(result.stoppedAt).toBe(1)
      expect(result.waitReason).toBe("timeout")
      yield* service.signal(owner, id, "SIGINT")
      const after = yield* send("history | grep -c '[e]cho never-runs' || true")
      expect(after.output).toBe("0")
    }))

  it.scoped("a waitFor step settles as matched and the batch goes on", () =>
    Effect.gen(function*() {
      const { service, id } = yield* openShell()
      const result = yield* service.send(owner, id, {
        steps: [
          // the banner comes from the program that keeps running, so the Ctrl-C of the next step reaches it (a
          // shell list's `echo` then `sleep` could take the Ctrl-C between the two, in the shell itself)
          {
            text: "python3 -c \"import time; time.sleep(0.5); print('up on port 7001', flush=True); time.sleep(30)\"",
            waitFor: { regex: "port (\\d+)" }
          },
          { keys: ["C-c"] },
          { text: "echo $((1 + 1))" }
        ]
      })
      expect(result.steps?.[0]).toMatchObject({ waitReason: "matched", match: { text: "port 7001", groups: ["7001"] } })
      expect(result.steps?.[1]?.waitReason).toBe("prompt")
      expect(result.steps?.[2]).toMatchObject({ waitReason: "prompt", output: "2" })
    }))

  it.scoped("the batch holds the slot once: a send meanwhile is SendActive; a bad step refuses the whole batch", () =>
    Effect.gen(function*() {
      const { send, service, id } = yield* openShell()
      const bad = yield* Effect.exit(service.send(owner, id, { steps: [{ text: "echo a" }, { keys: ["NoSuchKey"] }] }))
      expect(failureOf(bad)).toMatchObject({ _tag: "InvalidInput", field: "steps.1.keys" })
      const both = yield* Effect.exit(service.send(owner, id, { text: "echo a", steps: [{ text: "echo b" }] }))
      expect(failureOf(both)).toMatchObject({ _tag: "InvalidInput", field: "text" })
      const batch = yield* Effect.fork(service.send(owner, id, { steps: [{ text: "sleep 1" }, { text: "sleep 1" }] }))
      yield* Effect.sleep(1300)
      const busy = yield* Effect.exit(send("echo busy"))
      expect(failureOf(busy)).toMatchObject({ _tag: "SendActive" })
      const done = yield* Fiber.join(batch)
      expect(done.steps?.map((step) => step.waitReason)).toEqual(["prompt", "prompt"])
      const history = yield* send("history | grep -c '[e]cho a' || true")
      expect(history.output).toBe("0")
    }))

  it.scoped("the outputs share maxResultBytes, the last step's kept first", () =>
    Effect.gen(function*() {
      const { service, id } = yield* openShell()
      const result = yield* service.send(owner, id, { steps: [{ text: "seq 1 20000" }, { text: "seq 1 3000" }] })
      const bytes = (text: string) => Buffer.byteLength(text)
      expect(result.steps?.[1]?.output.endsWith("3000")).toBe(true)
      expect(result.steps?.[1]?.truncated).toBe(false)
      expect(bytes(result.steps![0]!.output) + bytes(result.steps![1]!.output)).toBeLessThanOrEqual(32 * 1024)
      expect(result.steps?.[0]?.truncated).toBe(true)
    }))

  it.scoped("a cancel ends the step running and the batch: no later step is written", () =>
    Effect.gen(function*() {
      const { send, service, id } = yield* openShell()
      const batch = yield* Effect.fork(
        service.send(owner, id, { steps: [{ text: "sleep 30" }, { text: "echo after-cancel" }] })
      )
      yield* Effect.sleep(500)
      const cancelled = yield* service.cancel(owner, id)
      expect(cancelled.cancelled).toBe(true)
      const exit = yield* Fiber.await(batch)
      expect(exit._tag).toBe("Failure")
      const history = yield* send("history | grep -c '[e]cho after-cancel' || true")
      expect(history.output).toBe("0")
    }))
})
