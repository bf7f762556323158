import { TaskRuntime } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { failureOf, openShell, owner, TestTerminal } from "../support/terminal.js"

layer(TestTerminal({ idleSilenceMs: 1000, idleWhileRunning: true }), { excludeTestServices: true })("waitFor", (it) => {
  it.scoped("a text printed after 2 s of silence settles as matched, not inferred_idle (idle at 1 s here)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const result = yield* send("sleep 2; echo READY-NOW; sleep 30", { waitFor: { text: "READY-NOW" } })
      expect(result.waitReason).toBe("matched")
      expect(result.match).toEqual({ text: "READY-NOW" })
      expect(result.output).toContain("READY-NOW")
      expect(result.sessionStatus).toEqual({ _tag: "running" })
    }))

  it.scoped("the echo of the command line never matches: the text typed is not the text printed", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const result = yield* send("echo MARK-$((40+2)); sleep 30", { waitFor: { text: "MARK-" }, timeoutMs: 10_000 })
      expect(result.waitReason).toBe("matched")
      expect(result.output).toBe("MARK-42")
      const fresh = yield* openShell()
      // the pattern is only in the command line typed: nothing printed shows it
      const never = yield* fresh.send(": ONLY-TYPED; sleep 1; echo other; sleep 30", {
        waitFor: { text: "ONLY-TYPED" },
        timeoutMs: 2000
      })
      expect(never.waitReason).toBe("timeout")
      expect(never.output).toBe("other")
    }))

  it.scoped("a regex gives its groups; a command that ends first settles by prompt with its exit code", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const matched = yield* send("printf 'listening on port %d\\n' 8123; sleep 30", {
        waitFor: { regex: "port (\\d+)" }
      })
      expect(matched.waitReason).toBe("matched")
      expect(matched.match).toEqual({ text: "port 8123", groups: ["8123"] })
      const fresh = yield* openShell()
      const ended = yield* fresh.send("sh -c 'echo starting; exit 3'", { waitFor: { regex: "port (\\d+)" } })
      expect(ended.waitReason).toBe("prompt")
      expect(ended.exitCode).toBe(3)
      expect(ended.match).toBeUndefined()
    }))

  it.scoped("a bad regex is InvalidInput before anything runs", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const bad = yield* Effect.exit(send("echo never", { waitFor: { regex: "(unclosed" } }))
      expect(failureOf(bad)).toMatchObject({ _tag: "InvalidInput", field: "waitFor.regex" })
      const backreference = yield* Effect.exit(send("echo never", { waitFor: { regex: "(a)\\1" } }))
      expect(failureOf(backreference)).toMatchObject({ _tag: "InvalidInput", field: "waitFor.regex" })
      expect((failureOf(backreference) as { reason: string }).reason).toContain("uses a backreference")
      const lookahead = yield* Effect.exit(send("echo never", { waitFor: { regex: "port(?= open)" } }))
      expect((failureOf(lookahead) as { reason: string }).reason).toContain("uses a lookahead")
      const two = yield* Effect.exit(send("echo never", { waitFor: { text: "a", regex: "b" } }))
      expect(failureOf(two)).toMatchObject({ _tag: "InvalidInput", field: "waitFor" })
    }))

  it.scoped("in the background: the first return waits for the banner; task_output waits for the next text", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const started = yield* send(
        "echo booting; sleep 1; echo 'ready on port 4242'; sleep 1; echo second-line; sleep 60",
        {
          background: true,
          waitFor: { regex: "port (\\d+)" }
        }
      )
      expect(started.waitReason).toBe("matched")
      expect(started.taskId).toMatch(/^t-/)
      expect(started.match).toEqual({ text: "port 4242", groups: ["4242"] })
      expect(started.output).toContain("booting")
      const next = yield* tasks.output(owner, started.taskId!, { waitFor: { text: "second-line" }, timeoutMs: 20_000 })
      expect(next.status).toBe("running")
      expect(next.match).toEqual({ text: "second-line" })
      expect(next.output).not.toContain("port 4242")
      // the line already seen does not match again: the look waits until the timeout
      const again = yield* tasks.output(owner, started.taskId!, { waitFor: { text: "second-line" }, timeoutMs: 500 })
      expect(again.match).toBeUndefined()
      const killed = yield* tasks.kill(owner, started.taskId!)
      expect(killed.status).toBe("killed")
    }))

  it.scoped("in the background: a command that fails before its banner settles by prompt with its exit code", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const started = yield* send("sh -c 'echo address in use >&2; exit 9'", {
        background: true,
        waitFor: { regex: "port (\\d+)" },
        timeoutMs: 20_000
      })
      expect(started.waitReason).toBe("prompt")
      expect(started.exitCode).toBe(9)
      expect(started.taskId).toMatch(/^t-/)
    }))

  it.scoped("screenStableMs on htop returns once its first screen is drawn (matched, with the screen); q leaves it", () =>
    Effect.gen(function*() {
      const { keys, send } = yield* openShell()
      const drawn = yield* send("htop -d 50", { waitFor: { screenStableMs: 300 }, timeoutMs: 20_000 })
      expect(drawn.waitReason).toBe("matched")
      expect(drawn.match).toEqual({ text: "" })
      expect(drawn.screen).toBeDefined()
      const screen = drawn.screen!.rows.join("\n")
      expect(screen).toMatch(/Mem|Swp/)
      expect(screen).toMatch(/PID/)
      const left = yield* keys(["q"])
      expect(left.waitReason).toBe("prompt")
    }))

  it.scoped("a caller that gives up on a background send's first return leaves no task and frees the session", () =>
    Effect.gen(function*() {
      const tasks = yield* TaskRuntime.TaskRuntime
      const { send } = yield* openShell()
      const gaveUp = yield* send("sleep 60", { background: true, waitFor: { text: "never" } }).pipe(
        Effect.timeoutOption(500)
      )
      expect(gaveUp._tag).toBe("None")
      expect((yield* tasks.list(owner)).filter((task) => task.label === "sleep 60")).toEqual([])
      const after = yield* send("echo free")
      expect(after).toMatchObject({ waitReason: "prompt", output: "free" })
    }))
})
