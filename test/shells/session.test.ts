import { Errors, Ids, PtyService, TaskRuntime } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { afterAll, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { alive, failureOf, openShell, owner, testConfig, TestTerminal } from "../support/terminal.js"

/** What differs between the shells: their syntax for the same acceptance. */
interface Shell {
  readonly shell: "zsh" | "fish"
  readonly promptText: string
  readonly setState: string
  readonly exit7: string
  readonly breakPrompt: string
  readonly pipefail?: string
  /** Sets `n` to the session's nonce, read from the integration. */
  readonly readNonce: string
  /** Prints a perfect prompt of ours (nonce `$n`) from a process that holds the terminal, then `after`. */
  readonly printMarkers: string
}

const shells: ReadonlyArray<Shell> = [
  {
    shell: "zsh",
    promptText: "% ",
    setState: "cd /tmp; export K=v",
    exit7: "(exit 7)",
    breakPrompt: "PS1='broken> '; PS2='more> '",
    pipefail: "setopt pipefail; false | true",
    readNonce: "n=${${PS1#*7331;D;}%%;*}",
    printMarkers: "( printf '\\033]7331;D;%s;0\\007%% \\033]7331;B;%s\\007' $n $n; sleep 0.5; echo after )"
  },
  {
    shell: "fish",
    promptText: "> ",
    setState: "cd /tmp; set -x K v",
    exit7: "fish -c 'exit 7'",
    breakPrompt: "function fish_prompt; echo 'broken> '; end",
    readNonce: "set n (string match -r '7331;D;([0-9a-f]+)' (functions __agent_terminal_prompt))[2]",
    printMarkers: "fish -c \"printf '\\e]7331;D;%s;0\\a> \\e]7331;B;%s\\a' $n $n; sleep 0.5; echo after\""
  }
]

for (const spec of shells) {
  const { shell } = spec
  layer(TestTerminal({ shell }), { excludeTestServices: true })(`${shell} as the session's shell`, (it) => {
    it.scoped("opens at its prompt; motd shows it; the session names its shell (1)", () =>
      Effect.gen(function*() {
        const { opened } = yield* openShell()
        expect(opened).toMatchObject({ type: "shell", shell, status: { _tag: "running" } })
        expect(opened.motd).toBe(spec.promptText)
        expect(alive(opened.pid)).toBe(true)
        const listed = (yield* (yield* PtyService.PtyService).list(owner)).find((one) =>
          one.sessionId === opened.sessionId
        )
        expect(listed?.shell).toBe(shell)
      }))

    it.scoped("keeps cwd and exported variables between sends, each settling by prompt (2)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        expect(yield* send(spec.setState)).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "" })
        expect(yield* send("echo \"$PWD $K\"")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "/tmp v" })
      }))

    it.scoped("a prompt the user overwrote still settles by prompt (3)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        expect((yield* send(spec.breakPrompt)).waitReason).toBe("prompt")
        expect(yield* send("echo still here")).toMatchObject({ waitReason: "prompt", output: "still here" })
        expect((yield* send("echo \"abc")).continuation).toBe(true)
        expect(yield* send("def\"")).toMatchObject({ waitReason: "prompt", output: "abc\ndef" })
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

    it.scoped("our markers with the right nonce, from a process that holds the terminal, settle nothing (4)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        yield* send(spec.readNonce)
        expect((yield* send("echo $n")).output).toMatch(/^[0-9a-f]{24}$/)
        const result = yield* send(spec.printMarkers)
        expect(result).toMatchObject({ waitReason: "prompt", exitCode: 0, output: `${spec.promptText}after` })
        expect((yield* send("echo next")).output).toBe("next")
      }))

    it.scoped("a stale prompt of an earlier command never settles the current send (4)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        expect((yield* send("sleep 1; echo slept", { timeoutMs: 200 })).waitReason).toBe("timeout")
        const next = yield* send("echo next")
        expect(next).toMatchObject({ waitReason: "prompt", exitCode: 0 })
        expect(next.output.split("\n")).toContain("next")
      }))

    it.scoped("a Python REPL started from it settles by stdin_read, and leaving it by prompt (5)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        expect(yield* send("python3 -q")).toMatchObject({ waitReason: "stdin_read", output: ">>> " })
        expect(yield* send("print(6*7)")).toMatchObject({ waitReason: "stdin_read", output: "42\n>>> " })
        expect(yield* send("exit()")).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      }))

    it.scoped("silence ends a send by inferred_idle without killing anything; one send at a time (8)", () =>
      Effect.gen(function*() {
        const { id, send, service } = yield* openShell()
        const fiber = yield* Effect.fork(send("sleep 5", { idleMs: 1000 }))
        yield* Effect.sleep(100)
        expect(failureOf(yield* Effect.exit(send("echo busy")))).toBeInstanceOf(Errors.SendActive)
        const idle = yield* fiber.await.pipe(Effect.flatten)
        expect(idle).toMatchObject({ waitReason: "inferred_idle", sessionStatus: { _tag: "running" } })
        expect(idle.exitCode).toBeUndefined()
        yield* service.signal(owner, id, "SIGINT")
        expect((yield* send("echo alive")).output.split("\n")).toContain("alive")
      }))

    it.scoped("exit ends the session with its code; later sends fail with SessionExited (11)", () =>
      Effect.gen(function*() {
        const { id, send, service } = yield* openShell()
        yield* send("echo before exit")
        const exited = yield* send("exit 3")
        expect(exited.waitReason).toBe("session_exit")
        expect(exited.sessionStatus).toEqual({ _tag: "exited", exitCode: 3, signal: null })
        const later = failureOf(yield* Effect.exit(send("echo nope")))
        expect(later).toBeInstanceOf(Errors.SessionExited)
        expect((later as Errors.SessionExited).exitCode).toBe(3)
        expect((yield* service.read(owner, id, {})).text).toContain("before exit")
      }))

    it.scoped("reports exit codes and a pipeline's status as the shell does (12)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        for (
          const [line, code] of [
            ["true", 0],
            ["false", 1],
            [spec.exit7, 7],
            ["false | true", 0],
            ["true | false", 1],
            ["nosuchcommand-xyz", 127],
            ...(spec.pipefail !== undefined ? [[spec.pipefail, 1] as const] : [])
          ] as const
        ) {
          const result = yield* send(line)
          expect({ line, waitReason: result.waitReason, exitCode: result.exitCode }).toEqual({
            line,
            waitReason: "prompt",
            exitCode: code
          })
        }
      }))

    it.scoped("sends quotes and ! verbatim (13)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        expect((yield* send("echo \"done!\"")).output).toBe("done!")
        expect((yield* send("echo 'a \"b\" c!' \"it's\"")).output).toBe("a \"b\" c! it's")
        expect((yield* send("echo !!")).output).toBe("!!")
      }))

    it.scoped("sleep 60, then SIGINT to the foreground group: the prompt is back (14)", () =>
      Effect.gen(function*() {
        const { id, opened, send, service } = yield* openShell()
        expect((yield* send("sleep 60", { timeoutMs: 300 })).waitReason).toBe("timeout")
        const signalled = yield* service.signal(owner, id, "SIGINT")
        expect(signalled.delivered).toBe(true)
        expect(signalled.targetPgid).not.toBe(opened.pid)
        const back = yield* send("echo back")
        expect(back).toMatchObject({ waitReason: "prompt", exitCode: 0 })
        expect(back.output.split("\n")).toContain("back")
      }))

    it.scoped("an unclosed quote is reported as a continuation; the rest completes the command", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        const first = yield* send("echo \"abc")
        expect(first).toMatchObject({ waitReason: "prompt", continuation: true })
        expect(first.exitCode).toBeUndefined()
        expect(yield* send("def\"")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "abc\ndef" })
      }))

    it.scoped("several lines run as one unit; an incomplete unit is dropped, nothing of it run (33)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        expect(yield* send("echo one\necho two")).toMatchObject({ waitReason: "prompt", output: "one\ntwo" })
        const incomplete = yield* send("echo \"abc\ntouch /tmp/never-$PPID")
        expect(incomplete).toMatchObject({ waitReason: "prompt", continuation: true })
        expect(incomplete.output).toContain("nothing ran")
        expect(yield* send("echo after")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "after" })
      }))

    it.scoped("output without a final newline comes without the shell's padding before the prompt", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        expect(yield* send("printf foo")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "foo" })
        expect(yield* send("printf 'a\\nb'")).toMatchObject({ waitReason: "prompt", output: "a\nb" })
      }))

    it.scoped("a background send runs until the prompt is back and reports its exit code (DESIGN §10)", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        const started = yield* send("sleep 0.3; echo done; false", { background: true })
        expect(started.waitReason).toBe("background")
        const tasks = yield* TaskRuntime.TaskRuntime
        const done = yield* tasks.output(owner, started.taskId!, { wait: true, timeoutMs: 10_000 })
        expect(done).toMatchObject({ status: "completed", result: { waitReason: "prompt", exitCode: 1 } })
        expect(done.output).toBe("done")
      }))

    it.scoped("close ends the shell and its children, leaving nothing", () =>
      Effect.gen(function*() {
        const { id, opened, send, service } = yield* openShell()
        yield* send("sleep 300 &")
        const closed = yield* service.close(owner, id)
        expect(closed).toMatchObject({ outcome: "closed", survivors: [] })
        expect(alive(opened.pid)).toBe(false)
        expect(yield* service.list(owner)).toEqual([])
      }))
  })
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-home-"))
const rc = "echo USER-RC-READ; export FROM_RC=1\n"
for (const file of [".zshenv", ".zshrc", ".zprofile", ".zlogin"]) fs.writeFileSync(path.join(home, file), rc)
fs.mkdirSync(path.join(home, ".config/fish/conf.d"), { recursive: true })
fs.writeFileSync(path.join(home, ".config/fish/config.fish"), "echo USER-RC-READ; set -gx FROM_RC 1\n")
fs.writeFileSync(path.join(home, ".config/fish/conf.d/user.fish"), "echo USER-RC-READ; set -gx FROM_RC 1\n")
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

layer(
  NodeTerminal.layer(testConfig, { hostEnv: { ...process.env, HOME: home, ZDOTDIR: home } }),
  { excludeTestServices: true }
)("the user's rc files", (it) => {
  for (const shell of ["zsh", "fish"] as const) {
    it.scoped(`${shell}: none is read by the session's shell`, () =>
      Effect.gen(function*() {
        const { opened, send } = yield* openShell({ shell })
        expect(opened.motd).not.toContain("USER-RC-READ")
        expect(yield* send("echo \"[$FROM_RC]\"")).toMatchObject({ waitReason: "prompt", output: "[]" })
      }))
  }

  it.scoped("zsh: a zsh started inside the session reads them as usual (ZDOTDIR is not left pointing at ours)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell({ shell: "zsh" })
      const child = yield* send("HOME=" + home + " zsh -i -c 'echo \"[$FROM_RC]\"'")
      expect(child.output.split("\n")).toContain("[1]")
    }))
})

layer(TestTerminal(), { excludeTestServices: true })("choosing the shell", (it) => {
  it.scoped("by name or path per open, next to the configured bash", () =>
    Effect.gen(function*() {
      const bash = yield* openShell()
      const zsh = yield* openShell({ shell: "/usr/bin/zsh" })
      const fish = yield* openShell({ shell: "fish" })
      expect([bash.opened.shell, zsh.opened.shell, fish.opened.shell]).toEqual(["bash", "zsh", "fish"])
      expect((yield* zsh.send("echo $ZSH_NAME")).output).toBe("zsh")
      expect((yield* fish.send("echo $FISH_VERSION")).output).toMatch(/^\d+\.\d+/)
      expect((yield* bash.send("echo $BASH_VERSION")).output).toMatch(/^\d+\.\d+/)
    }))

  it.scoped("a shell with no dialect is refused with InvalidInput naming the supported ones; nothing is left", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const refused = failureOf(yield* Effect.exit(service.open(owner, { shell: "/bin/dash", name: "dash" })))
      expect(refused).toMatchObject({ _tag: "InvalidInput", field: "shell" })
      expect((refused as Errors.InvalidInput).message).toContain("bash, zsh, fish, pwsh")
      expect((refused as Errors.InvalidInput).message).toContain("type \"command\"")
      expect(yield* service.list(owner)).toEqual([])
      // the name was not taken
      const dash = yield* service.open(owner, { type: "command", argv: ["/bin/dash", "-i"], name: "dash" })
      expect(dash.shell).toBeUndefined()
      const id = Ids.SessionId.make(dash.sessionId)
      const line = yield* service.send(owner, id, { text: "echo plain" })
      expect(line.waitReason).toBe("stdin_read")
      expect(line.output).toContain("plain")
      expect(line.exitCode).toBeUndefined()
      yield* service.close(owner, id)
    }))

  it.scoped("shell applies to a shell session only", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const refused = failureOf(yield* Effect.exit(service.open(owner, { argv: ["cat"], shell: "zsh" })))
      expect(refused).toMatchObject({ _tag: "InvalidInput", field: "shell" })
      expect(yield* service.list(owner)).toEqual([])
    }))
})
