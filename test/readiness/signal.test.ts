/**
 * A send of a signal (issue 30): the signal goes to the terminal's foreground group and the wait is a send's,
 * so one call says whether the prompt is back — `sleep 100` and SIGINT give `prompt` with exit 130, a REPL is
 * back at its prompt by `stdin_read` — instead of a signal and then a send to find out.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { openShell, owner, TestTerminal } from "../support/terminal.js"

layer(TestTerminal(), { excludeTestServices: true })("a signal that waits", (it) => {
  it.scoped("sleep 100, then SIGINT: the prompt is back with exit 130, in the same call", () =>
    Effect.gen(function*() {
      const { service, id, send } = yield* openShell()
      const slept = yield* send("sleep 100", { timeoutMs: 800 })
      expect(slept.waitReason).toBe("timeout")
      const interrupted = yield* service.send(owner, id, { signal: "SIGINT" })
      expect(interrupted).toMatchObject({
        waitReason: "prompt",
        exitCode: 130,
        signalled: { signal: "SIGINT", delivered: true }
      })
      expect(interrupted.signalled!.targetPgid).toBe(slept.foreground!.pid)
      expect(interrupted.foreground).toBeUndefined()
      const after = yield* send("echo after")
      expect(after).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "after" })
    }))

  it.scoped("a Python REPL: SIGINT interrupts the running line and the REPL is back at its prompt (stdin_read)", () =>
    Effect.gen(function*() {
      const { service, id, send } = yield* openShell()
      expect((yield* send("python3 -q")).waitReason).toBe("stdin_read")
      const busy = yield* send("import time; time.sleep(100)", { timeoutMs: 800 })
      expect(busy.waitReason).toBe("timeout")
      const back = yield* service.send(owner, id, { signal: "SIGINT" })
      expect(back.waitReason).toBe("stdin_read")
      expect(back.output).toContain("KeyboardInterrupt")
      expect((yield* send("print(6*7)")).output).toBe("42\n>>> ")
      yield* send("exit()")
    }))

  it.scoped("refusals: SIGKILL at the shell itself, input given with the signal; nothing is sent", () =>
    Effect.gen(function*() {
      const { service, id, send } = yield* openShell()
      const refused = yield* Effect.flip(service.send(owner, id, { signal: "SIGKILL" }))
      expect(refused).toMatchObject({ _tag: "SignalRefused", signal: "SIGKILL" })
      const mixed = yield* Effect.flip(service.send(owner, id, { signal: "SIGINT", text: "echo no" }))
      expect(mixed).toMatchObject({ _tag: "InvalidInput", field: "text" })
      expect((yield* send("echo still")).output).toBe("still")
    }))
})
