import { ProcessInspector } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { foregroundGroup, inspect } from "../src/internal/proc/foregroundProbe.js"
import { makeWith } from "../src/internal/proc/linuxInspector.js"
import { makeProcFs } from "../src/internal/proc/procFs.js"
import { parseEpollFdinfo } from "../src/internal/proc/stdinWait.js"
import type { Overlay } from "./helpers/fixtureProcFs.js"
import { fixture, fixtureNames } from "./helpers/fixtureProcFs.js"

const probeOf = (name: string, overlay?: Overlay, arch: "x64" | "arm64" | "unsupported" = "x64") => {
  const { procFs, scenario } = fixture(name, overlay)
  return inspect(procFs, arch === "unsupported" ? undefined : arch, scenario.terminal)
}

const textOf = (name: string, path: string): string => {
  const read = fixture(name).procFs.readText(path)
  if (typeof read !== "string") throw new Error(`${name}/${path}: ${read.code}`)
  return read
}

/** A stat line with one field after the comm replaced (0 = state, 4 = tty_nr, …). */
const withStatField = (stat: string, index: number, value: string): string => {
  const close = stat.lastIndexOf(")")
  const fields = stat.slice(close + 2).split(" ")
  fields[index] = value
  return `${stat.slice(0, close + 2)}${fields.join(" ")}`
}

/** A syscall line with its number replaced. */
const withSyscall = (line: string, nr: number): string => line.replace(/^\S+/, String(nr))

describe("recorded programs", () => {
  for (const name of fixtureNames()) {
    it(`${name}: the probe of the recording is the probe observed live`, () => {
      const { procFs, scenario } = fixture(name)
      const result = inspect(procFs, scenario.arch, scenario.terminal)
      // Recorded before `readBytes` (rchar) joined the snapshot; it has its own test below.
      const { readBytes: _readBytes, ...probe } = result.probe as typeof result.probe & { readBytes?: number }
      expect(probe).toEqual(scenario.expected.probe)
      expect(result.how).toEqual(scenario.expected.how)
    })
  }

  it("sees the waits of terminal programs, whatever fd and syscall they use", () => {
    const waits = ["python3-repl", "node-repl", "gdb", "less", "getpass", "input-thread", "comm-paren"]
    for (const name of waits) expect(probeOf(name).probe).toMatchObject({ _tag: "Snapshot", waitingOnTerminal: true })
    expect(probeOf("less").how).toBe("8072/8072 fd 3")
    expect(probeOf("gdb").how).toBe("8067/8067 fd 0")
  })

  it("does not count reads of a fifo, a sleep or a socket", () => {
    for (const name of ["fifo", "sleep", "socket"]) {
      expect(probeOf(name).probe).toMatchObject({ _tag: "Snapshot", waitingOnTerminal: false })
    }
  })

  it("finds a wait on a thread that is not the leader", () => {
    const result = probeOf("input-thread")
    expect(result.how).toBe("8116/8158 fd 0")
    expect(textOf("input-thread", "8116/task/8116/syscall")).toMatch(/^202 /) // the main thread joins (futex)
  })

  it("finds the tty in an epoll interest list that does not hold fd 0", () => {
    const entries = parseEpollFdinfo(textOf("node-repl", "8024/fdinfo/13"))
    expect(entries.map((entry) => entry.fd)).not.toContain(0)
    expect(probeOf("node-repl").how).toBe("8024/8024 epoll 13 fd 21")
  })

  it("counts /dev/tty only while the reader's controlling terminal is ours", () => {
    expect(probeOf("getpass").probe).toMatchObject({ waitingOnTerminal: true })
    const stat = textOf("getpass", "8074/stat")
    const otherTty = probeOf("getpass", { texts: { "8074/stat": withStatField(stat, 4, "34999") } })
    expect(otherTty.probe).toMatchObject({ _tag: "Snapshot", waitingOnTerminal: false })
  })

  it("finds the foreground group through the shell, and pipeline members besides the leader", () => {
    expect(probeOf("shell-python").probe).toEqual({
      _tag: "Snapshot",
      pgid: 8180,
      members: [8180],
      waitingOnTerminal: true,
      readCalls: 692,
      readBytes: 2049677
    })
    const pipeline = probeOf("pipeline-devtty")
    expect(pipeline.probe).toMatchObject({ pgid: 8223, members: [8223, 8224], waitingOnTerminal: true })
    expect(pipeline.how).toBe("8224/8224 fd 3")
    expect(pipeline.probe).toMatchObject({ readCalls: 21, readBytes: 6976 * 2 })
  })

  it("recognises the terminal by device number when its path is unknown", () => {
    const { procFs, scenario } = fixture("less")
    const result = inspect(procFs, "x64", { shellPid: scenario.terminal.shellPid, ttyPath: undefined })
    expect(result.probe).toMatchObject({ waitingOnTerminal: true })
  })

  it("reports the foreground group from the shell's tpgid", () => {
    expect(foregroundGroup(fixture("shell-python").procFs, 8178)).toBe(8180)
    expect(foregroundGroup(fixture("shell-python").procFs, 1)).toBeUndefined()
    const stat = textOf("sleep", "8227/stat")
    const noGroup = fixture("sleep", { texts: { "8227/stat": withStatField(stat, 5, "-1") } }).procFs
    expect(foregroundGroup(noGroup, 8227)).toBeUndefined()
  })
})

describe("facts the probe cannot vouch for", () => {
  it("a zombie-only group is a snapshot with no members, not waiting", () => {
    const stat = textOf("shell-python", "8180/stat")
    const result = probeOf("shell-python", { texts: { "8180/stat": withStatField(stat, 0, "Z") } })
    expect(result.probe).toEqual({
      _tag: "Snapshot",
      pgid: 8180,
      members: [],
      waitingOnTerminal: false,
      readCalls: 0,
      readBytes: 0
    })
  })

  it("an unknown syscall in a blocked thread is a miss", () => {
    const line = textOf("python3-repl", "7982/task/7982/syscall")
    const result = probeOf("python3-repl", { texts: { "7982/task/7982/syscall": withSyscall(line, 400) } })
    expect(result.probe).toMatchObject({ _tag: "Miss", reason: expect.stringContaining("unknown syscall 400") })
  })

  it("a wait that cannot be decoded (io_uring) is a miss", () => {
    const line = textOf("comm-paren", "8159/task/8159/syscall")
    const result = probeOf("comm-paren", { texts: { "8159/task/8159/syscall": withSyscall(line, 426) } })
    expect(result.probe).toMatchObject({ _tag: "Miss", reason: expect.stringContaining("io_uring_enter") })
  })

  it("unreadable memory is a miss", () => {
    expect(probeOf("python3-repl", { errors: { "7982/mem": "EIO" } }).probe).toMatchObject({ _tag: "Miss" })
    expect(probeOf("gdb", { errors: { "8067/mem": "EACCES" } }).probe).toMatchObject({
      _tag: "Miss",
      reason: expect.stringContaining("EACCES")
    })
  })

  it("an unreadable shell, syscall file or descriptor is a miss", () => {
    expect(probeOf("less", { errors: { "8072/stat": "EACCES" } }).probe).toMatchObject({ _tag: "Miss" })
    expect(probeOf("less", { errors: { "8072/task/8072/syscall": "EACCES" } }).probe).toMatchObject({ _tag: "Miss" })
    expect(probeOf("less", { fds: { "8072/3": "EACCES" } }).probe).toMatchObject({ _tag: "Miss" })
  })

  it("a thread that exited is not waiting; a member that vanished is a miss", () => {
    const noThread = probeOf("input-thread", { errors: { "8116/task/8158/syscall": "ENOENT" } })
    expect(noThread.probe).toMatchObject({ _tag: "Snapshot", waitingOnTerminal: false })
    expect(probeOf("input-thread", { errors: { "8116/io": "ENOENT" } }).probe).toMatchObject({ _tag: "Miss" })
  })

  it("an unreadable io file only loses the read count", () => {
    expect(probeOf("less", { errors: { "8072/io": "EACCES" } }).probe).toMatchObject({
      _tag: "Snapshot",
      waitingOnTerminal: true,
      readCalls: undefined
    })
  })

  it("a positive wait stands even when another thread cannot be decoded", () => {
    const main = textOf("input-thread", "8116/task/8116/syscall")
    const result = probeOf("input-thread", { texts: { "8116/task/8116/syscall": withSyscall(main, 400) } })
    expect(result.probe).toMatchObject({ _tag: "Snapshot", waitingOnTerminal: true })
  })

  it("a stopped member is not waiting, whatever its last syscall", () => {
    const stat = textOf("less", "8072/stat")
    const result = probeOf("less", { texts: { "8072/stat": withStatField(stat, 0, "T") } })
    expect(result.probe).toMatchObject({ _tag: "Snapshot", waitingOnTerminal: false })
  })

  it("an unsupported architecture is a miss; arm64 decodes its own numbers", () => {
    expect(probeOf("python3-repl", {}, "unsupported").probe).toMatchObject({ _tag: "Miss" })
    const line = textOf("python3-repl", "7982/task/7982/syscall")
    const arm64 = { texts: { "7982/task/7982/syscall": withSyscall(line, 72) } } // pselect6 on arm64
    expect(probeOf("python3-repl", arm64, "arm64").probe).toMatchObject({ waitingOnTerminal: true })
    // 270 is process_vm_readv on arm64: not a terminal read.
    expect(probeOf("python3-repl", {}, "arm64").probe).toMatchObject({ waitingOnTerminal: false })
  })
})

describe("the layer over a fixture", () => {
  it.effect("never fails: a miss, an empty tree, no group", () =>
    Effect.gen(function*() {
      const { procFs, scenario } = fixture("python3-repl")
      const inspector = makeWith({ procFs, arch: "x64" })
      expect(inspector.exact).toBe(true)
      expect(yield* inspector.probe(scenario.terminal)).toMatchObject({ waitingOnTerminal: true })
      expect(yield* inspector.foregroundGroup(scenario.terminal)).toEqual(Option.some(7982))
      expect(yield* inspector.foregroundGroup({ shellPid: 4, ttyPath: undefined })).toEqual(Option.none())
      expect(yield* inspector.probe({ shellPid: 4, ttyPath: undefined })).toMatchObject({ _tag: "Miss" })
      const tree = yield* inspector.processTree(7982)
      expect(tree.map((info) => info.pid)).toEqual([7982])
      expect(makeWith({ procFs, arch: undefined }).exact).toBe(false)
    }))

  it.effect("a throwing reader becomes a miss, not a defect", () =>
    Effect.gen(function*() {
      const throwing = () => {
        throw new Error("boom")
      }
      const inspector = makeWith({
        procFs: { readText: throwing, list: throwing, statFd: throwing, statPath: throwing, readMemory: throwing },
        arch: "x64"
      })
      const terminal: ProcessInspector.TerminalRef = { shellPid: 1, ttyPath: undefined }
      expect(yield* inspector.probe(terminal)).toMatchObject({ _tag: "Miss", reason: expect.stringContaining("boom") })
      expect(yield* inspector.foregroundGroup(terminal)).toEqual(Option.none())
      expect(yield* inspector.processTree(1)).toEqual([])
    }))
})

describe("the pinned stat of a shell (real /proc)", () => {
  it.live("reads through one descriptor bound to its process, which reads ESRCH once it is gone; unpin closes it", () =>
    Effect.gen(function*() {
      const procFs = makeProcFs()
      const openFds = () => fs.readdirSync("/proc/self/fd").length
      const child = spawn("sleep", ["30"], { stdio: "ignore" })
      const pid = child.pid!
      const before = openFds()
      const first = procFs.readPinnedStat!(pid)
      expect(typeof first === "string" && first.startsWith(`${pid} (sleep)`)).toBe(true)
      expect(openFds()).toBe(before + 1)
      procFs.readPinnedStat!(pid)
      expect(openFds()).toBe(before + 1)
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited)
      expect(procFs.readPinnedStat!(pid)).toMatchObject({ _tag: "ProcError", code: "ESRCH" })
      expect(openFds()).toBe(before)
      const again = spawn("sleep", ["30"], { stdio: "ignore" })
      procFs.readPinnedStat!(again.pid!)
      expect(openFds()).toBe(before + 1)
      procFs.unpin!(again.pid!)
      expect(openFds()).toBe(before)
      again.kill("SIGKILL")
    }))
})
