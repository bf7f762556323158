import { describe, expect, it } from "@effect/vitest"
import { parseChildren, parseReadCalls, parseStat, parseTpgid } from "../src/internal/proc/procStat.js"
import {
  kernelDevToUser,
  parseEpollFdinfo,
  pollReadFds,
  selectReadFds,
  wantsInput
} from "../src/internal/proc/stdinWait.js"
import { archOf, classify, parseSyscall } from "../src/internal/proc/syscalls.js"
import { fixture } from "./helpers/fixtureProcFs.js"

const text = (name: string, path: string): string => {
  const read = fixture(name).procFs.readText(path)
  if (typeof read !== "string") throw new Error(`${name}/${path}: ${read.code}`)
  return read
}

describe("parseStat", () => {
  it("reads the fields after the last ')' when comm holds spaces and ')'", () => {
    const stat = parseStat(text("comm-paren", "8159/stat"))
    expect(stat).toMatchObject({
      pid: 8159,
      comm: "a) (b c",
      state: "S",
      ppid: 7970,
      pgid: 8159,
      sid: 8159,
      ttyNr: 34817,
      tpgid: 8159,
      numThreads: 1,
      startTime: 66840
    })
  })

  it("takes a comm that looks like more fields", () => {
    const line = "42 (x) R 1 2 3 4 5) S 1 42 42 34816 42 4194304 0 0 0 0 0 0 0 0 20 0 3 0 777 0 0 0\n"
    expect(parseStat(line)).toMatchObject({ pid: 42, comm: "x) R 1 2 3 4 5", state: "S", ppid: 1, tpgid: 42 })
  })

  it("reads tpgid -1 and rejects what is not a stat line", () => {
    expect(parseStat("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 24 0 0")?.tpgid).toBe(-1)
    expect(parseStat("")).toBeUndefined()
    expect(parseStat("12 (short) S 1 2")).toBeUndefined()
  })
})

describe("parseTpgid", () => {
  it("reads the tpgid parseStat reads, with comm holding spaces and ')'", () => {
    const lines = [
      text("comm-paren", "8159/stat"),
      "42 (x) R 1 2 3 4 5) S 1 42 42 34816 42 4194304 0 0 0 0 0 0 0 0 20 0 3 0 777 0 0 0\n",
      "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 24 0 0",
      `${process.pid} (node) S 1 7 7 34817 9001 4194304 0 0 0 0 0 0 0 0 20 0 11 0 5000 0 0`
    ]
    for (const line of lines) expect(parseTpgid(line)).toBe(parseStat(line)!.tpgid)
    expect(parseTpgid(lines[0]!)).toBe(8159)
    expect(parseTpgid(lines[2]!)).toBe(-1)
  })

  it("rejects what is not a stat line", () => {
    expect(parseTpgid("")).toBeUndefined()
    expect(parseTpgid("12 (short) S 1 2")).toBeUndefined()
    expect(parseTpgid("12 (short) S 1 2 3 4")).toBeUndefined()
    expect(parseTpgid("12 (x) S 1 2 3 4 x5 0")).toBeUndefined()
    expect(parseTpgid("12 (x) S 1 2 3 4  0")).toBeUndefined()
    expect(parseTpgid("no paren) S 1 2 3 4 5 0")).toBeUndefined()
  })
})

describe("io and children", () => {
  it("reads syscr", () => {
    expect(parseReadCalls(text("python3-repl", "7982/io"))).toBe(691)
    expect(parseReadCalls("rchar: 1\n")).toBeUndefined()
  })

  it("reads children lists with a trailing space", () => {
    expect(parseChildren(text("shell-python", "8178/task/8178/children"))).toEqual([8180])
    expect(parseChildren("")).toEqual([])
    expect(parseChildren("1 22 333 ")).toEqual([1, 22, 333])
  })
})

describe("parseSyscall", () => {
  it("reads a blocked syscall with its arguments", () => {
    expect(parseSyscall(text("python3-repl", "7982/task/7982/syscall"))).toEqual({
      _tag: "InSyscall",
      nr: 270,
      args: [0x1n, 0x7ffc4e4ba6b0n, 0n, 0n, 0n, 0n]
    })
  })

  it("tells running, blocked outside a syscall and malformed apart", () => {
    expect(parseSyscall("running\n")).toEqual({ _tag: "Running" })
    expect(parseSyscall("-1 0x7ffd1 0x7f001\n")).toEqual({ _tag: "Blocked" })
    expect(parseSyscall("0 0x0 0x1\n")._tag).toBe("Malformed")
    expect(parseSyscall("garbage")._tag).toBe("Malformed")
  })
})

describe("classify", () => {
  it("knows the x86-64 waits", () => {
    expect(classify("x64", 0)).toEqual({ _tag: "Fd", arg: 0 })
    expect(classify("x64", 19)).toEqual({ _tag: "Fd", arg: 0 })
    expect(classify("x64", 23)._tag).toBe("Select")
    expect(classify("x64", 270)._tag).toBe("Select")
    expect(classify("x64", 7)._tag).toBe("Poll")
    expect(classify("x64", 271)._tag).toBe("Poll")
    for (const nr of [232, 281, 441]) expect(classify("x64", nr)._tag).toBe("Epoll")
    expect(classify("x64", 426)).toEqual({ _tag: "Opaque", name: "io_uring_enter" })
  })

  it("knows arm64 has only the p-variants", () => {
    expect(classify("arm64", 63)).toEqual({ _tag: "Fd", arg: 0 })
    expect(classify("arm64", 72)._tag).toBe("Select")
    expect(classify("arm64", 73)._tag).toBe("Poll")
    expect(classify("arm64", 22)._tag).toBe("Epoll")
    // x86-64's select, poll and epoll_wait numbers are other syscalls there (dup, fremovexattr, …).
    expect(classify("arm64", 23)._tag).toBe("Other")
    expect(classify("arm64", 7)._tag).toBe("Other")
    expect(classify("arm64", 232)._tag).toBe("Other")
  })

  it("separates syscalls that cannot read a terminal from unknown numbers", () => {
    expect(classify("x64", 202)._tag).toBe("Other") // futex
    expect(classify("x64", 230)._tag).toBe("Other") // clock_nanosleep
    expect(classify("x64", 400)._tag).toBe("Unknown")
    expect(classify("x64", 5000)._tag).toBe("Unknown")
    expect(classify("arm64", 300)._tag).toBe("Unknown")
  })

  it("supports x64 and arm64 only", () => {
    expect(archOf("x64")).toBe("x64")
    expect(archOf("arm64")).toBe("arm64")
    expect(archOf("ia32")).toBeUndefined()
    expect(archOf("riscv64")).toBeUndefined()
  })
})

describe("select and poll sets", () => {
  it("reads fd_set bits little-endian within 64-bit words", () => {
    const bitmap = new Uint8Array(16)
    bitmap[0] = 0b0000_1001 // fds 0 and 3
    bitmap[8] = 0b0000_0010 // fd 65: word 1, bit 1
    expect(selectReadFds(bitmap, 128)).toEqual([0, 3, 65])
    expect(selectReadFds(bitmap, 3)).toEqual([0])
  })

  it("reads the recorded python3 pselect6 set", () => {
    expect(selectReadFds(Uint8Array.of(0x01), 1)).toEqual([0])
  })

  it("reads the recorded gdb pollfd array, keeping POLLIN/POLLRDNORM entries", () => {
    const { procFs, scenario } = fixture("gdb")
    const region = scenario.memory["8067"][0]
    const bytes = procFs.readMemory(8067, BigInt(region.address), 32)
    expect(bytes).toBeInstanceOf(Uint8Array)
    expect(pollReadFds(bytes as Uint8Array, 4)).toEqual([3, 5, 9, 0])
  })

  it("ignores negative fds and entries without input events", () => {
    const buffer = new Uint8Array(32)
    const view = new DataView(buffer.buffer)
    view.setInt32(0, -1, true)
    view.setInt16(4, 1, true)
    view.setInt32(8, 4, true)
    view.setInt16(12, 4, true) // POLLOUT
    view.setInt32(16, 5, true)
    view.setInt16(20, 0x40, true) // POLLRDNORM
    view.setInt32(24, 6, true)
    view.setInt16(28, 2, true) // POLLPRI
    expect(pollReadFds(buffer, 4)).toEqual([5])
    expect(pollReadFds(buffer, 9)).toEqual([5])
  })
})

describe("epoll fdinfo", () => {
  it("reads node's interest list: the reopened tty, no fd 0", () => {
    const entries = parseEpollFdinfo(text("node-repl", "8024/fdinfo/13"))
    expect(entries.map((entry) => entry.fd)).toEqual([14, 16, 21])
    expect(entries.every(wantsInput)).toBe(true)
    expect(entries[2]).toEqual({ fd: 21, events: 0x19, ino: 4n, sdev: 0x1an })
  })

  it("reads lines without ino/sdev and masked-out entries", () => {
    const entries = parseEpollFdinfo(
      "pos:\t0\nflags:\t02\ntfd:        5 events:        4 data: 1\ntfd: 7 events: 80000001 data: 2\n"
    )
    expect(entries).toEqual([
      { fd: 5, events: 4, ino: undefined, sdev: undefined },
      { fd: 7, events: 0x80000001, ino: undefined, sdev: undefined }
    ])
    expect(entries.map(wantsInput)).toEqual([false, true])
  })

  it("converts the kernel's dev_t to stat's encoding", () => {
    expect(kernelDevToUser(0x1an)).toBe(26n)
    expect(kernelDevToUser((136n << 20n) | 3n)).toBe((136n << 8n) | 3n)
    expect(kernelDevToUser((8n << 20n) | 300n)).toBe((8n << 8n) | 44n | (256n << 12n))
  })
})
