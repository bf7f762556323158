import { Exec } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { failureOf, owner, TestTerminal } from "../support/terminal.js"

const modes = ["child", "pty"] as const

const server = "echo booting; sleep 1; echo 'serving on port 6123'; sleep 1; echo next; sleep 60"

layer(TestTerminal(), { excludeTestServices: true })("exec in the background with waitFor", (it) => {
  for (const mode of modes) {
    it.scoped(`${mode}: the first return waits for the banner (match, groups); the run goes on; kill ends it`, () =>
      Effect.gen(function*() {
        const exec = yield* Exec.Exec
        const spawn: Exec.Spawn = mode === "child"
          ? { _tag: "child", argv: ["bash", "-c", server] }
          : { _tag: "pty", command: server }
        const started = yield* exec.exec(owner, { spawn, background: true, waitFor: { regex: "port (\\d+)" } })
        expect(started.status).toBe("running")
        expect(started.match).toEqual({ text: "port 6123", groups: ["6123"] })
        expect(started.output).toContain("booting")
        expect(started.output).toContain("serving on port 6123")
        const next = yield* exec.poll(owner, started.taskId!, { wait: true, timeoutMs: 1500 })
        expect(next.output).not.toContain("booting")
        const killed = yield* exec.kill(owner, started.taskId!)
        expect(killed.status).toBe("killed")
      }))
  }

  it.scoped("a run that ends before its banner returns its end; waitFor without background is InvalidInput", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const ended = yield* exec.exec(owner, {
        spawn: { _tag: "child", argv: ["sh", "-c", "echo 'address in use' >&2; exit 4"] },
        background: true,
        waitFor: { text: "listening" }
      })
      expect(ended).toMatchObject({ status: "exited", reason: "exited", exitCode: 4 })
      expect(ended.match).toBeUndefined()
      const refused = yield* Effect.exit(
        exec.exec(owner, { spawn: { _tag: "pty", command: "true" }, waitFor: { text: "x" } })
      )
      expect(failureOf(refused)).toMatchObject({ _tag: "InvalidInput", field: "waitFor" })
    }))
})
