import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { openShell, owner, tempDir, TestTerminal } from "../support/terminal.js"

layer(TestTerminal(), { excludeTestServices: true })("the stdin_read tier on real programs", (it) => {
  it.scoped("python3 REPL: started from the shell, and a line to a REPL already waiting (5)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const started = yield* send("python3 -q")
      expect(started.waitReason).toBe("stdin_read")
      expect(started.output.endsWith(">>> ")).toBe(true)
      const line = yield* send("print(6*7)")
      expect(line.waitReason).toBe("stdin_read")
      expect(line.output).toBe("42\n>>> ")
      const multi = yield* send("for i in range(3): print(i)")
      expect(multi.waitReason).toBe("stdin_read")
      expect(multi.output.endsWith("... ")).toBe(true)
      const done = yield* send("")
      expect(done.output).toBe("0\n1\n2\n>>> ")
      const back = yield* send("exit()")
      expect(back.waitReason).toBe("prompt")
      expect(back.exitCode).toBe(0)
    }))

  it.scoped("node REPL: it reopens the tty, fd 0 is not what it waits on (6)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const started = yield* send("node")
      expect(started.waitReason).toBe("stdin_read")
      expect(started.output).toContain("> ")
      const sum = yield* send("1 + 1")
      expect(sum.waitReason).toBe("stdin_read")
      expect(sum.output.split("\n")).toContain("2")
      // node reads `.exit` and goes back to its event loop — still polling the tty — while it shuts down:
      // the probe may catch that wait (docs/readiness.md, limits). Either way the shell is ours again.
      expect(["prompt", "stdin_read"]).toContain((yield* send(".exit")).waitReason)
      const after = yield* send("echo after node")
      expect(after.waitReason).toBe("prompt")
      expect(after.output).toBe("after node")
    }))

  it.scoped("gdb, cat, ed, read X and input() wait on the terminal (7)", () =>
    Effect.gen(function*() {
      const { keys, send } = yield* openShell()
      const gdb = yield* send("gdb -q -nx")
      expect(gdb.waitReason).toBe("stdin_read")
      expect(gdb.output).toContain("(gdb)")
      const print = yield* send("p 1+2")
      expect(print.waitReason).toBe("stdin_read")
      expect(print.output).toContain("$1 = 3")
      expect((yield* send("quit")).waitReason).toBe("prompt")

      expect((yield* send("cat")).waitReason).toBe("stdin_read")
      const echoed = yield* send("hello cat")
      expect(echoed.waitReason).toBe("stdin_read")
      expect(echoed.output).toBe("hello cat")
      expect((yield* keys(["C-d"])).waitReason).toBe("prompt")

      expect((yield* send("ed")).waitReason).toBe("stdin_read")
      expect((yield* send("a")).waitReason).toBe("stdin_read")
      expect((yield* send(".")).waitReason).toBe("stdin_read")
      expect((yield* send("Q")).waitReason).toBe("prompt")

      const read = yield* send("read X")
      expect(read.waitReason).toBe("stdin_read")
      expect((yield* send("typed")).waitReason).toBe("prompt")
      expect((yield* send("echo \"$X\"")).output).toBe("typed")

      const input = yield* send("python3 -c 'print(\"got\", input(\"? \"))'")
      expect(input.waitReason).toBe("stdin_read")
      expect(input.output).toBe("? ")
      const answered = yield* send("yes")
      expect(answered.waitReason).toBe("prompt")
      expect(answered.output).toBe("got yes")
    }))

  it.scoped("a getpass prompt waits on /dev/tty (7)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const asked = yield* send("python3 -c 'import getpass; print(len(getpass.getpass()))'")
      expect(asked.waitReason).toBe("stdin_read")
      expect(asked.output).toBe("Password: ")
      const answered = yield* send("s3cret")
      expect(answered.waitReason).toBe("prompt")
      expect(answered.output).toBe("6")
    }))

  it.scoped("sleep, a FIFO read and a socket wait are not stdin_read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir()
      const { id, send, service } = yield* openShell({ cwd: dir })
      const interrupt = Effect.zipRight(service.signal(owner, id, "SIGINT"), send("true"))
      const sleeping = yield* send("sleep 30", { idleMs: 600 })
      expect(sleeping.waitReason).toBe("inferred_idle")
      yield* interrupt
      yield* send("mkfifo pipe && exec 3<>pipe")
      const fifo = yield* send("cat < pipe", { idleMs: 600 })
      expect(fifo.waitReason).toBe("inferred_idle")
      yield* interrupt
      const socket = yield* send(
        "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); s.accept()'",
        { idleMs: 600 }
      )
      expect(socket.waitReason).toBe("inferred_idle")
      yield* interrupt
    }))

  it.scoped("a command printing then sleeping is not cut short at the idle bound while it runs (9)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const result = yield* send("echo start; sleep 2.5; echo end")
      expect(result.waitReason).toBe("prompt")
      expect(result.output).toBe("start\nend")
    }))

  it.scoped("an interactive child bash with the inherited hook does not settle as our prompt (10)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      yield* send("export -f __agent_terminal_prompt; export PROMPT_COMMAND PS0")
      const child = yield* send("bash --norc --noprofile -i", { idleMs: 800 })
      expect(child.waitReason).not.toBe("prompt")
      const inner = yield* send("echo inside", { idleMs: 800 })
      expect(inner.waitReason).not.toBe("prompt")
      expect(inner.output).toContain("inside")
      const out = yield* send("exit")
      expect(out.waitReason).toBe("prompt")
      expect((yield* send("echo outside")).output).toBe("outside")
    }))
})
