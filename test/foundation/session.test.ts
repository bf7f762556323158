import { Errors, Ids, PtyService, TerminalConfig } from "@agent-terminal/core"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { alive, failureOf, openShell, otherOwner, owner, TestTerminal } from "../support/terminal.js"

layer(TestTerminal(), { excludeTestServices: true })("a persistent bash session", (it) => {
  it.scoped("opens at the prompt, and the motd shows it (1)", () =>
    Effect.gen(function*() {
      const { opened } = yield* openShell()
      expect(opened.status._tag).toBe("running")
      expect(opened.type).toBe("shell")
      expect(opened.motd.endsWith("$ ")).toBe(true)
      expect(alive(opened.pid)).toBe(true)
    }))

  it.scoped("keeps cwd and exported variables between sends (2)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const first = yield* send("export KEEP=ok; cd /")
      expect(first.waitReason).toBe("prompt")
      expect(first.exitCode).toBe(0)
      const second = yield* send("echo \"$PWD $KEEP\"")
      expect(second.waitReason).toBe("prompt")
      expect(second.output).toBe("/ ok")
    }))

  it.scoped("still settles by prompt after the user sets PS1 (3)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      yield* send("PS1='broken> '")
      const result = yield* send("echo still here")
      expect(result.waitReason).toBe("prompt")
      expect(result.output).toBe("still here")
    }))

  it.scoped("a copy of our marker without the nonce settles nothing (4)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const result = yield* send(
        "printf '\\033]7331;D;0123456789abcdef;0\\007$ \\033]7331;B;0123456789abcdef\\007'; sleep 0.5; echo after"
      )
      expect(result.waitReason).toBe("prompt")
      expect(result.output).toContain("after")
      expect(result.output).not.toContain("7331")
    }))

  it.scoped("our markers with the right nonce, printed by a program that holds the terminal, settle nothing (4)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      // a subshell inherits the hook, so it can print a perfect prompt; it is not the shell at its prompt
      // (the foreground group is the subshell's), which only the foreground check can tell
      yield* send("n=$(declare -f __agent_terminal_prompt | grep -o '7331;D;[0-9a-f]*' | head -1 | cut -d';' -f3)")
      const result = yield* send(
        "( printf '\\033]7331;D;%s;0\\007$ \\033]7331;B;%s\\007' \"$n\" \"$n\"; sleep 0.5; echo after )"
      )
      expect(result.waitReason).toBe("prompt")
      expect(result.output).toBe("$ after")
      const next = yield* send("echo next")
      expect(next.output).toBe("next")
    }))

  it.scoped("a stale prompt of an earlier command never settles the current send (4)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const slow = yield* send("sleep 1; echo slept", { timeoutMs: 200 })
      expect(slow.waitReason).toBe("timeout")
      const next = yield* send("echo next")
      expect(next.waitReason).toBe("prompt")
      expect(next.output.split("\n")).toContain("next")
      expect(next.exitCode).toBe(0)
    }))

  it.scoped("silence ends a send by inferred_idle without killing anything; one send at a time (8)", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      const fiber = yield* Effect.fork(send("sleep 5", { idleMs: 1000 }))
      yield* Effect.sleep(100)
      const busy = yield* Effect.exit(send("echo busy"))
      expect(failureOf(busy)).toBeInstanceOf(Errors.SendActive)
      const idle = yield* fiber.await.pipe(Effect.flatten)
      expect(idle.waitReason).toBe("inferred_idle")
      expect(idle.sessionStatus._tag).toBe("running")
      expect(idle.exitCode).toBeUndefined()
      yield* service.signal(owner, id, "SIGINT")
      const after = yield* send("echo alive")
      expect(after.output.split("\n")).toContain("alive")
    }))

  it.scoped("exit ends the session with its code; later sends fail with SessionExited (11)", () =>
    Effect.gen(function*() {
      const { id, service, send } = yield* openShell()
      yield* send("echo before exit")
      const exited = yield* send("exit 3")
      expect(exited.waitReason).toBe("session_exit")
      expect(exited.sessionStatus).toEqual({ _tag: "exited", exitCode: 3, signal: null })
      const later = yield* Effect.exit(send("echo nope"))
      const error = failureOf(later)
      expect(error).toBeInstanceOf(Errors.SessionExited)
      expect((error as Errors.SessionExited).exitCode).toBe(3)
      const transcript = yield* service.read(owner, id, {})
      expect(transcript.text).toContain("before exit")
    }))

  it.scoped("reports exit codes as bash does (12)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      expect((yield* send("true")).exitCode).toBe(0)
      expect((yield* send("false")).exitCode).toBe(1)
      expect((yield* send("(exit 7)")).exitCode).toBe(7)
      expect((yield* send("false | true")).exitCode).toBe(0)
      expect((yield* send("true | false")).exitCode).toBe(1)
      expect((yield* send("set -o pipefail; false | true")).exitCode).toBe(1)
      expect((yield* send("nosuchcommand-xyz")).exitCode).toBe(127)
    }))

  it.scoped("a prompt readline draws again (C-l) settles by prompt, its status the last command's", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      expect((yield* send("(exit 4)")).exitCode).toBe(4)
      // readline clears the screen and draws the prompt again: both of its markers come with it
      const redrawn = yield* service.send(owner, id, { keys: ["C-l"] })
      expect(redrawn.waitReason).toBe("prompt")
      expect(redrawn.exitCode).toBe(4)
      expect(redrawn.output).toBe("")
      expect((yield* send("echo after")).output).toBe("after")
    }))

  it.scoped("sends quotes and ! verbatim (13)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      expect((yield* send("echo \"done!\"")).output).toBe("done!")
      expect((yield* send("echo 'a \"b\" c!' \"it's\"")).output).toBe("a \"b\" c! it's")
      expect((yield* send("echo !!")).output).toBe("!!")
    }))

  it.scoped("a signal interrupts the foreground command and the prompt comes back", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      const running = yield* send("sleep 60", { timeoutMs: 300 })
      expect(running.waitReason).toBe("timeout")
      const signalled = yield* service.signal(owner, id, "SIGINT")
      expect(signalled.delivered).toBe(true)
      expect(signalled.targetPgid).not.toBe(running.sessionStatus._tag === "running" ? 0 : -1)
      const back = yield* send("echo back")
      expect(back.waitReason).toBe("prompt")
      expect(back.output.split("\n")).toContain("back")
    }))

  it.scoped("SIGKILL at the shell itself is refused (16)", () =>
    Effect.gen(function*() {
      const { id, opened, send, service } = yield* openShell()
      const refused = yield* Effect.exit(service.signal(owner, id, "SIGKILL"))
      expect(failureOf(refused)).toBeInstanceOf(Errors.SignalRefused)
      expect(alive(opened.pid)).toBe(true)
      expect((yield* send("echo fine")).output).toBe("fine")
    }))

  it.scoped("pages through the transcript", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      yield* send("seq 1 50")
      const page = yield* service.read(owner, id, { count: 5, offset: 1 })
      expect(page.text.split("\n")).toEqual(["46", "47", "48", "49", "50"])
      expect(page.lineEnd - page.lineBegin).toBe(5)
      const bad = yield* Effect.exit(service.read(owner, id, { offset: -1 }))
      expect(failureOf(bad)).toMatchObject({ _tag: "InvalidInput", field: "offset" })
    }))
})

layer(TestTerminal(), { excludeTestServices: true })("ownership and bad input", (it) => {
  it.scoped("other owners, unknown ids, duplicate names, double close (36)", () =>
    Effect.gen(function*() {
      const { id, opened, send, service } = yield* openShell({ name: "mine" })
      yield* send("echo kept")
      for (
        const attempt of [
          service.send(otherOwner, id, { text: "echo hijack" }),
          service.read(otherOwner, id, {}),
          service.signal(otherOwner, id, "SIGINT"),
          service.close(otherOwner, id)
        ]
      ) {
        expect(failureOf(yield* Effect.exit(attempt as Effect.Effect<unknown, unknown>))).toBeInstanceOf(
          Errors.ForeignSession
        )
      }
      expect(yield* service.list(otherOwner)).toEqual([])
      const unknown = Ids.SessionId.make("s-doesnotexist")
      expect(failureOf(yield* Effect.exit(service.send(owner, unknown, { text: "x" })))).toBeInstanceOf(
        Errors.SessionNotFound
      )
      const duplicate = yield* Effect.exit(service.open(owner, { name: "mine" }))
      expect(failureOf(duplicate)).toMatchObject({ _tag: "DuplicateName", name: "mine", sessionId: id })
      const another = yield* service.open(otherOwner, { name: "mine" })
      expect(another.name).toBe("mine")
      yield* service.close(otherOwner, Ids.SessionId.make(another.sessionId))
      expect((yield* service.read(owner, id, {})).text).toContain("kept")
      expect((yield* send("echo still mine")).output).toBe("still mine")
      const [first, second] = yield* Effect.all([service.close(owner, id), service.close(owner, id)], {
        concurrency: 2
      })
      expect([first.outcome, second.outcome].sort()).toEqual(["already-closing", "closed"])
      expect((yield* service.close(owner, id)).outcome).toBe("closed")
      expect(yield* service.list(owner)).toEqual([])
      expect(alive(opened.pid)).toBe(false)
    }))

  it.scoped("bad input gets a typed error and the session keeps working", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      yield* send("echo first")
      const noInput = yield* Effect.exit(service.send(owner, id, {}))
      expect(failureOf(noInput)).toMatchObject({ _tag: "InvalidInput" })
      const badKey = yield* Effect.exit(service.send(owner, id, { keys: ["NoSuchKey"] }))
      expect(failureOf(badKey)).toMatchObject({ _tag: "InvalidInput", field: "keys" })
      const badCwd = yield* Effect.exit(service.open(owner, { cwd: "/no/such/dir" }))
      expect(failureOf(badCwd)).toMatchObject({ _tag: "InvalidInput", field: "cwd" })
      const shellWithArgv = yield* Effect.exit(service.open(owner, { argv: [] }))
      expect(failureOf(shellWithArgv)).toMatchObject({ _tag: "InvalidInput", field: "argv" })
      expect((yield* send("echo second")).output).toBe("second")
      expect((yield* service.read(owner, id, {})).text).toContain("first")
    }))

  it.scoped("a command session runs argv on the terminal; a missing program is SpawnFailed", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const missing = yield* Effect.exit(service.open(owner, { argv: ["no-such-program-xyz", "--help"] }))
      expect(failureOf(missing)).toMatchObject({ _tag: "SpawnFailed", command: "no-such-program-xyz" })
      const opened = yield* service.open(owner, { argv: ["python3", "-q"] })
      const id = Ids.SessionId.make(opened.sessionId)
      expect(opened.type).toBe("command")
      const line = yield* service.send(owner, id, { text: "print(2 ** 10)" })
      expect(line.waitReason).toBe("stdin_read")
      expect(line.output).toBe("1024\n>>> ")
      const end = yield* service.send(owner, id, { text: "exit()" })
      expect(end.waitReason).toBe("session_exit")
      expect(end.sessionStatus).toEqual({ _tag: "exited", exitCode: 0, signal: null })
      yield* service.close(owner, id)
    }))

  it.scoped("list shows the shell's working directory now, and how its processes are contained", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell({ cwd: "/" })
      yield* send("cd /tmp")
      const [listed] = (yield* service.list(owner)).filter((session) => session.sessionId === id)
      expect(listed).toMatchObject({ cwd: "/tmp", status: { _tag: "running" }, busy: false })
      expect(["cgroup", "sweep", "pid-namespace"]).toContain(listed!.containment)
    }))

  it.effect("invalid configuration names the field", () =>
    Effect.gen(function*() {
      const cases: Array<[TerminalConfig.TerminalConfigInput, string]> = [
        [{ handoffGraceMs: 10, pollIntervalMs: 50 }, "handoffGraceMs"],
        [{ maxReadBytes: 1024, scrollbackMaxBytes: 512 }, "maxReadBytes"],
        [{ timeoutMs: 0 }, "timeoutMs"],
        [{ idleSilenceMs: -5 }, "idleSilenceMs"],
        [{ maxResultBytes: 10 }, "maxResultBytes"],
        [{ cols: "wide" as unknown as number }, "cols"]
      ]
      for (const [input, field] of cases) {
        const error = failureOf(yield* Effect.exit(TerminalConfig.make(input)))
        expect(error).toBeInstanceOf(Errors.InvalidConfig)
        expect(error).toMatchObject({ field })
        expect((error as Errors.InvalidConfig).message).toContain(field)
      }
      const defaults = yield* TerminalConfig.make({})
      expect(defaults).toMatchObject({ pollIntervalMs: 50, idleSilenceMs: 3000, maxResultBytes: 32 * 1024 })
    }))
})

describe("opening a shell that never prompts", () => {
  const silent = path.resolve(__dirname, "../fixtures/silent-shell/bash")
  layer(TestTerminal({ shell: silent, openTimeoutMs: 800 }), { excludeTestServices: true })("", (it) => {
    it.scoped("fails with SpawnFailed and leaves no process behind (1)", () =>
      Effect.gen(function*() {
        const service = yield* PtyService.PtyService
        const exit = yield* Effect.exit(service.open(owner, {}))
        const error = failureOf(exit)
        expect(error).toBeInstanceOf(Errors.SpawnFailed)
        expect((error as Errors.SpawnFailed).reason).toContain("no prompt within 800 ms")
        const leftovers = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).filter((pid) => {
          try {
            return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").includes("silent-shell/bash")
          } catch {
            return false
          }
        })
        expect(leftovers).toEqual([])
        expect(yield* service.list(owner)).toEqual([])
      }))
  })
})
