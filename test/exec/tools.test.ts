import { Ids } from "@agent-terminal/core"
import { Handlers, ToolCall } from "@agent-terminal/tools"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestTerminal } from "../support/terminal.js"
import { sleepers, uniqueSleep } from "./support.js"

const call = (name: string, payload: unknown, maxResultBytes = 64 * 1024) =>
  ToolCall.call(Ids.OwnerId.make("local"), name, payload, { maxResultBytes })

layer(Handlers.layer.pipe(Layer.provideMerge(TestTerminal())), { excludeTestServices: true })(
  "exec and process tools",
  (it) => {
    it.scoped("exec: the facts first, then the output; a command line runs on a terminal by default", () =>
      Effect.gen(function*() {
        const done = yield* call("exec", { command: "echo hello; exit 3" })
        expect(done.isError).toBe(false)
        expect(done.structured).toMatchObject({ mode: "pty", status: "exited", reason: "exited", exitCode: 3 })
        expect(done.text).toBe("[exec: exited] [exit: 3]\nhello")
        const piped = yield* call("exec", { argv: ["printf", "%s\\n", "a b"] })
        expect(piped.structured).toMatchObject({ mode: "child", exitCode: 0 })
        // the output is sent once, in the text
        expect(piped.structured.output).toBeUndefined()
        expect(piped.text).toBe("[exec: exited] [exit: 0]\na b\n")
        const shell = yield* call("exec", { command: "echo $((6*7))", mode: "child" })
        expect(shell.structured).toMatchObject({ mode: "child", exitCode: 0 })
        expect(shell.text).toBe("[exec: exited] [exit: 0]\n42\n")
      }))

    it.scoped("exec: a timeout says the tree was killed and keeps the output", () =>
      Effect.gen(function*() {
        const seconds = uniqueSleep()
        const result = yield* call("exec", { argv: ["bash", "-c", `echo partial; sleep ${seconds}`], timeoutMs: 3000 })
        // 3 s: room for bash to start and print under load before the deadline kills it
        expect(result.structured).toMatchObject({ status: "killed", reason: "timeout" })
        expect(result.text.split("\n")[0]).toMatch(
          /^\[exec: timeout\] (\[signal: SIG\w+\] )?\[the process tree was killed\]$/
        )
        expect(result.text).toContain("partial")
        expect(sleepers(seconds)).toEqual([])
      }))

    it.scoped("exec: parameters are checked; a failure is isError with its tag", () =>
      Effect.gen(function*() {
        const both = yield* call("exec", { command: "true", argv: ["true"] })
        expect(both.structured).toMatchObject({ _tag: "InvalidInput", field: "command" })
        const neither = yield* call("exec", {})
        expect(neither.structured).toMatchObject({ _tag: "InvalidInput", field: "command" })
        const ptyArgv = yield* call("exec", { argv: ["true"], mode: "pty" })
        expect(ptyArgv.structured).toMatchObject({ _tag: "InvalidInput", field: "mode" })
        const negative = yield* call("exec", { command: "true", timeoutMs: -1 })
        expect(negative.structured).toMatchObject({ _tag: "InvalidInput", field: "timeoutMs" })
        const missing = yield* call("exec", { argv: ["no-such-program-xyz"] })
        expect(missing.isError).toBe(true)
        expect(missing.text).toMatch(/^\[error: SpawnFailed\]/)
        const noTask = yield* call("process", { action: "poll" })
        expect(noTask.structured).toMatchObject({ _tag: "InvalidInput", field: "taskId" })
      }))

    it.scoped("process: the whole follow-up cycle on a background run", () =>
      Effect.gen(function*() {
        const started = yield* call("exec", {
          command: "read -p 'name? ' x; echo \"hi $x\"; sleep 0.2",
          background: true
        })
        const taskId = (started.structured as { taskId: string }).taskId
        expect(started.text).toBe(
          `[task: ${taskId}] [exec: running] [still running: process poll with wait: true returns when it ends]`
        )
        let waiting = yield* call("process", { action: "poll", taskId, wait: true, timeoutMs: 10_000 })
        while ((waiting.structured as { status: string }).status === "running") {
          waiting = yield* call("process", { action: "poll", taskId, wait: true, timeoutMs: 10_000 })
        }
        expect(waiting.text).toContain("[exec: waiting_input]")
        const listed = yield* call("process", { action: "list" })
        expect(listed.text).toMatch(new RegExp(`^\\[tasks: 1\\]\\n${taskId} exec \\(pty\\) waiting_input`))
        const submitted = yield* call("process", { action: "submit", taskId, text: "bob" })
        expect(submitted.text).toBe(`[task: ${taskId}] [submit: 4 bytes]`)
        const done = yield* call("process", { action: "poll", taskId, wait: true, timeoutMs: 10_000 })
        expect(done.structured).toMatchObject({ action: "poll", status: "exited", exitCode: 0 })
        expect(done.text.startsWith(`[task: ${taskId}] [exec: exited] [exit: 0]\n`)).toBe(true)
        expect(done.text).toContain("hi bob")
        const log = yield* call("process", { action: "log", taskId })
        expect(log.text).toMatch(
          new RegExp(`^\\[task: ${taskId}\\] \\[lines \\d+-\\d+ of \\d+\\]\\nname\\? bob\\nhi bob$`)
        )
        const killed = yield* call("process", { action: "kill", taskId })
        expect(killed.structured).toMatchObject({ action: "kill", status: "exited", reason: "exited" })
        expect((yield* call("process", { action: "remove", taskId })).text).toBe(`[task: ${taskId}] [removed]`)
        expect((yield* call("process", { action: "remove", taskId })).text).toBe(`[task: ${taskId}] [already-removed]`)
        const gone = yield* call("process", { action: "poll", taskId })
        expect(gone.structured).toMatchObject({ _tag: "TaskNotFound", taskId })
      }))

    it.scoped("process reaches background sends too: write answers a read, kill stops one", () =>
      Effect.gen(function*() {
        const opened = yield* call("terminal_open", {})
        const sessionId = (opened.structured as { sessionId: string }).sessionId
        yield* Effect.addFinalizer(() => call("terminal_close", { sessionId }))
        const sent = yield* call("terminal_send", {
          sessionId,
          text: "read y; echo \"got $y\"",
          run_in_background: true
        })
        const taskId = (sent.structured as { taskId: string }).taskId
        // answer once the read waits (typed-ahead input may be taken by the shell's line editor instead)
        let status = ""
        for (let attempt = 0; attempt < 50 && status !== "waiting_input"; attempt++) {
          const view = yield* call("process", { action: "poll", taskId })
          status = (view.structured as { status: string }).status
          if (status !== "waiting_input") yield* Effect.sleep(100)
        }
        expect(status).toBe("waiting_input")
        const submitted = yield* call("process", { action: "submit", taskId, text: "yes" })
        expect(submitted.isError).toBe(false)
        const done = yield* call("process", { action: "poll", taskId, wait: true, timeoutMs: 10_000 })
        expect(done.structured).toMatchObject({ kind: "send", status: "completed", exitCode: 0 })
        expect(done.text).toContain("got yes")
        const log = yield* call("process", { action: "log", taskId })
        expect(log.structured).toMatchObject({ _tag: "InvalidInput", field: "taskId" })
        expect(log.text).toContain("terminal_read")
      }))
  }
)
