import { ProcessInspector, StdinEvidence } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as LinuxInspector from "../src/LinuxInspector.js"
import { eventually, spawnProgram, syscallOf, tempDir } from "./helpers/ptyProgram.js"
import type { PtyProgram } from "./helpers/ptyProgram.js"

const supported = process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64")

const nr = process.arch === "arm64"
  ? { read: "63", clockNanosleep: "115", recvfrom: "207", epollPwait: "22" }
  : { read: "0", clockNanosleep: "230", recvfrom: "45", epollPwait: "281" }

type Inspector = ProcessInspector.ProcessInspector["Type"]

const isWaiting = (probe: ProcessInspector.Probe): probe is ProcessInspector.GroupSnapshot =>
  probe._tag === "Snapshot" && probe.waitingOnTerminal

const waitsOnTerminal = (inspector: Inspector, program: PtyProgram) =>
  eventually(inspector.probe(program.terminal), isWaiting)

/** Starts a program and checks the probe sees its own group waiting on the terminal. */
const expectWaiting = (file: string, args: ReadonlyArray<string>, options?: { readonly cwd?: string }) =>
  Effect.gen(function*() {
    const inspector = yield* LinuxInspector.make
    const program = yield* spawnProgram(file, args, options)
    const probe = yield* waitsOnTerminal(inspector, program)
    expect(probe).toMatchObject({ _tag: "Snapshot", pgid: program.pid, waitingOnTerminal: true })
    expect(probe._tag === "Snapshot" && probe.members).toContain(program.pid)
  })

/** Starts a program, waits until it is blocked in `syscall`, and checks the probe says it is NOT waiting. */
const expectNotWaiting = (file: string, args: ReadonlyArray<string>, syscall: string, cwd?: string) =>
  Effect.gen(function*() {
    const inspector = yield* LinuxInspector.make
    const program = yield* spawnProgram(file, args, cwd === undefined ? {} : { cwd })
    yield* eventually(Effect.sync(() => syscallOf(program.pid)), (current) => current === syscall)
    const probe = yield* inspector.probe(program.terminal)
    expect(probe).toMatchObject({ _tag: "Snapshot", pgid: program.pid, waitingOnTerminal: false })
  })

// Real /proc and a known syscall table are needed: Linux on x86-64 or arm64 (the fixtures cover the rest).
describe.skipIf(!supported)("LinuxInspector on real programs", () => {
  it.effect("is exact here", () =>
    Effect.gen(function*() {
      const inspector = yield* LinuxInspector.make
      expect(inspector.exact).toBe(true)
    }))

  describe("waiting on the terminal", () => {
    it.scopedLive("python3 REPL (pselect6 on fd 0)", () => expectWaiting("python3", ["-q"]))
    it.scopedLive("node REPL (epoll on a reopened tty fd)", () => expectWaiting(process.execPath, []))
    it.scopedLive("gdb (poll)", () => expectWaiting("gdb", ["-q", "-nx"]))
    it.scopedLive("cat (read fd 0)", () => expectWaiting("cat", []))
    it.scopedLive("ed", () => expectWaiting("ed", []))
    it.scopedLive("bash read builtin", () => expectWaiting("bash", ["--norc", "--noprofile", "-c", "read X"]))
    it.scopedLive("python3 input()", () => expectWaiting("python3", ["-c", "input()"]))
    it.scopedLive("getpass (an fd opened from /dev/tty)", () =>
      expectWaiting("python3", ["-c", "import getpass; getpass.getpass()"]))
    it.scopedLive("less on a long file (fd 3)", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const lines = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join("\n")
        fs.writeFileSync(path.join(dir, "long.txt"), lines)
        yield* expectWaiting("less", ["long.txt"], { cwd: dir })
      }))
  })

  describe("not waiting on the terminal", () => {
    it.scopedLive("sleep", () => expectNotWaiting("sleep", ["30"], nr.clockNanosleep))

    it.scopedLive("cat reading a fifo on fd 0", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const fifo = path.join(dir, "fifo")
        execFileSync("mkfifo", [fifo])
        // A writer that never writes: cat gets past open and blocks reading the fifo.
        yield* Effect.acquireRelease(
          Effect.sync(() => fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK)),
          (fd) => Effect.sync(() => fs.closeSync(fd))
        )
        yield* expectNotWaiting("bash", ["--norc", "--noprofile", "-c", "exec cat < fifo"], nr.read, dir)
      }))

    it.scopedLive("node in its event loop without reading stdin (epoll without the tty)", () =>
      expectNotWaiting(process.execPath, ["-e", "setInterval(() => {}, 1000)"], nr.epollPwait))

    it.scopedLive("python3 blocked in recv on a loopback socket", () =>
      expectNotWaiting(
        "python3",
        [
          "-c",
          "import socket; s = socket.create_server(('127.0.0.1', 0)); c = socket.create_connection(s.getsockname()); c.recv(1)"
        ],
        nr.recvfrom
      ))
  })

  it.scopedLive("follows the foreground group through a shell, and the evidence rule sees input consumed", () =>
    Effect.gen(function*() {
      const inspector = yield* LinuxInspector.make
      const shell = yield* spawnProgram("bash", ["--norc", "--noprofile", "-i"], { env: { PS1: "$ " } })
      const atPrompt = yield* waitsOnTerminal(inspector, shell)
      expect(atPrompt).toMatchObject({ pgid: shell.pid })
      expect(yield* inspector.foregroundGroup(shell.terminal)).toEqual(Option.some(shell.pid))

      yield* shell.write("python3 -q\r")
      const python = yield* eventually(
        inspector.foregroundGroup(shell.terminal),
        (group) => Option.isSome(group) && group.value !== shell.pid
      ).pipe(Effect.map(Option.getOrThrow))
      const waiting = yield* eventually(
        inspector.probe(shell.terminal),
        (probe) => isWaiting(probe) && probe.pgid === python
      )
      expect(waiting).toMatchObject({ members: [python] })
      const tree = yield* inspector.processTree(shell.pid)
      expect(tree.map((info) => info.pid)).toEqual([shell.pid, python])
      expect(tree[1]).toMatchObject({
        ppid: shell.pid,
        pgid: python,
        sid: shell.pid,
        comm: expect.stringMatching(/^python/)
      })

      // A line for python: the pre-write wait proves nothing; readline reads it a byte at a time, so the
      // rule waits until python has read as many bytes as were written.
      const ready = (before: ProcessInspector.Probe, written: number) =>
        Effect.gen(function*() {
          let state = StdinEvidence.initial(before, written)
          return yield* eventually(
            inspector.probe(shell.terminal).pipe(Effect.map((probe) => {
              const step = StdinEvidence.step(state, probe)
              state = step.state
              return { ready: step.ready, probe, evidence: step.state.evidence }
            })),
            (step) => step.ready
          )
        })
      const beforeLine = yield* inspector.probe(shell.terminal)
      yield* shell.write("6 * 7\r")
      const afterLine = yield* ready(beforeLine, "6 * 7\r".length)
      expect(afterLine.probe).toMatchObject({ pgid: python, waitingOnTerminal: true })
      expect(afterLine.evidence).toBeDefined()
      // Ready can come before node-pty has delivered the output python already wrote: it is on its way.
      yield* eventually(Effect.sync(shell.output), (output) => output.includes("42"))

      const beforeExit = yield* inspector.probe(shell.terminal)
      yield* shell.write("exit()\r")
      const backAtShell = yield* ready(beforeExit, "exit()\r".length)
      expect(backAtShell.probe).toMatchObject({ pgid: shell.pid, waitingOnTerminal: true })
    }))

  it.scopedLive("processTree lists the descendants with their identities", () =>
    Effect.gen(function*() {
      const inspector = yield* LinuxInspector.make
      const program = yield* spawnProgram("bash", ["--norc", "--noprofile", "-c", "sleep 30 & sleep 31 & wait"])
      const tree = yield* eventually(inspector.processTree(program.pid), (tree) =>
        tree.length === 3 && tree.slice(1).every((info) => info.comm === "sleep"))
      expect(tree[0]).toMatchObject({ pid: program.pid, ppid: process.pid, sid: program.pid, comm: "bash" })
      for (const child of tree.slice(1)) {
        expect(child).toMatchObject({ ppid: program.pid, sid: program.pid, comm: "sleep" })
        expect(child.startTime).toBeGreaterThan(0)
      }
      expect(yield* inspector.processTree(2 ** 22 + 1)).toEqual([])
    }))
})
