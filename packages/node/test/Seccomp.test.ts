/**
 * The seccomp program, run by a small classic-BPF interpreter over `struct seccomp_data` the way the kernel
 * runs it: decoded from the very bytes bwrap loads, for every rule, on every table of both host
 * architectures, with the tricks an attacker would try (high bits on the ioctl command, the other ABI of
 * the same machine, x32 numbers). The real kernel's verdicts are tested in test/security/seccomp.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import type { Instruction, SyscallTable } from "../src/internal/sandbox/seccomp.js"
import {
  aarch64,
  arm,
  BPF_JMP_JEQ_K,
  BPF_JMP_JGE_K,
  BPF_JMP_JSET_K,
  BPF_LD_W_ABS,
  BPF_RET_K,
  CLONE_NEWUSER,
  filterFor,
  i386,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  TIOCLINUX,
  TIOCSTI,
  x86_64
} from "../src/internal/sandbox/seccomp.js"

const decode = (bytes: Uint8Array): ReadonlyArray<Instruction> => {
  expect(bytes.length % 8).toBe(0)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return Array.from({ length: bytes.length / 8 }, (_, i) => ({
    code: view.getUint16(i * 8, true),
    jt: view.getUint8(i * 8 + 2),
    jf: view.getUint8(i * 8 + 3),
    k: view.getUint32(i * 8 + 4, true)
  }))
}

interface Call {
  readonly arch: number
  readonly nr: number
  readonly args?: ReadonlyArray<bigint>
}

/** Classic BPF as seccomp runs it: accumulator A, forward jumps, the verdict of the RET reached. */
const run = (program: ReadonlyArray<Instruction>, call: Call): number => {
  const data = new DataView(new ArrayBuffer(64))
  data.setUint32(0, call.nr >>> 0, true)
  data.setUint32(4, call.arch >>> 0, true)
  data.setBigUint64(8, 0x7fff_0000_1234n, true)
  ;(call.args ?? []).forEach((arg, i) => data.setBigUint64(16 + 8 * i, BigInt.asUintN(64, arg), true))
  let a = 0
  let pc = 0
  for (let steps = 0; steps < program.length + 1; steps++) {
    const ins = program[pc]
    if (ins === undefined) throw new Error(`pc ${pc} ran off the program`)
    switch (ins.code) {
      case BPF_LD_W_ABS:
        if (ins.k % 4 !== 0 || ins.k > 60) throw new Error(`bad load offset ${ins.k}`)
        a = data.getUint32(ins.k, true)
        pc++
        break
      case BPF_JMP_JEQ_K:
        pc += 1 + (a === ins.k ? ins.jt : ins.jf)
        break
      case BPF_JMP_JGE_K:
        pc += 1 + (a >= ins.k ? ins.jt : ins.jf)
        break
      case BPF_JMP_JSET_K:
        pc += 1 + ((a & ins.k) !== 0 ? ins.jt : ins.jf)
        break
      case BPF_RET_K:
        return ins.k
      default:
        throw new Error(`unknown opcode ${ins.code}`)
    }
  }
  throw new Error("no verdict")
}

const EPERM = (SECCOMP_RET_ERRNO | 1) >>> 0
const ENOSYS = (SECCOMP_RET_ERRNO | 38) >>> 0
const KILL = SECCOMP_RET_KILL_PROCESS >>> 0
const ALLOW = SECCOMP_RET_ALLOW >>> 0

const programOf = (arch: string): ReadonlyArray<Instruction> => {
  const filter = filterFor(arch, "LE")
  if (filter._tag !== "Filter") throw new Error(filter.reason)
  return decode(filter.bytes)
}

const ptraceOf: Readonly<Record<string, number>> = { x86_64: 101, i386: 26, aarch64: 117, arm: 26 }
const writeOf: Readonly<Record<string, number>> = { x86_64: 1, i386: 4, aarch64: 64, arm: 4 }

const hosts: ReadonlyArray<{ readonly arch: string; readonly tables: ReadonlyArray<SyscallTable> }> = [
  { arch: "x64", tables: [x86_64, i386] },
  { arch: "arm64", tables: [aarch64, arm] }
]

for (const host of hosts) {
  describe(`the seccomp program of ${host.arch}`, () => {
    const program = programOf(host.arch)
    for (const table of host.tables) {
      const call = (nr: number, ...args: ReadonlyArray<bigint>) => run(program, { arch: table.auditArch, nr, args })

      it(`${table.name}: TIOCSTI and TIOCLINUX are EPERM, whatever the high bits; other ioctls pass`, () => {
        expect(call(table.ioctl, 0n, BigInt(TIOCSTI))).toBe(EPERM)
        expect(call(table.ioctl, 3n, BigInt(TIOCLINUX))).toBe(EPERM)
        expect(call(table.ioctl, 0n, 0xdead_beef_0000_0000n | BigInt(TIOCSTI))).toBe(EPERM)
        expect(call(table.ioctl, 0n, 0x5401n)).toBe(ALLOW)
        expect(call(table.ioctl, 0n, 0x5413n)).toBe(ALLOW)
        expect(call(writeOf[table.name]!, 1n, BigInt(TIOCSTI))).toBe(ALLOW)
      })

      it(`${table.name}: clone and unshare with CLONE_NEWUSER are EPERM; without it they pass; clone3 is ENOSYS`, () => {
        const fork = 0x01200011n
        expect(call(table.clone, BigInt(CLONE_NEWUSER))).toBe(EPERM)
        expect(call(table.clone, BigInt(CLONE_NEWUSER) | 0x20000n | 0x11n)).toBe(EPERM)
        expect(call(table.clone, fork)).toBe(ALLOW)
        expect(call(table.clone, 0xffff_ffff_0000_0000n | fork)).toBe(ALLOW)
        expect(call(table.unshare, BigInt(CLONE_NEWUSER))).toBe(EPERM)
        expect(call(table.unshare, 0x20000n)).toBe(ALLOW)
        expect(call(table.clone3, 0x7ffd_0000n, 88n)).toBe(ENOSYS)
      })

      it(`${table.name}: keyctl, add_key and request_key are EPERM; ptrace and write pass`, () => {
        expect(call(table.keyctl, 0n)).toBe(EPERM)
        expect(call(table.addKey, 0n)).toBe(EPERM)
        expect(call(table.requestKey, 0n)).toBe(EPERM)
        expect(call(ptraceOf[table.name]!, 16n, 1234n)).toBe(ALLOW)
        expect(call(writeOf[table.name]!, 1n)).toBe(ALLOW)
      })
    }

    it("any other architecture value kills the process before a number is read", () => {
      const foreign = host.arch === "x64" ? aarch64 : x86_64
      expect(run(program, { arch: foreign.auditArch, nr: foreign.ioctl, args: [0n, BigInt(TIOCSTI)] })).toBe(KILL)
      expect(run(program, { arch: 0, nr: 0 })).toBe(KILL)
    })
  })
}

describe("seccomp program edges", () => {
  it("x86_64: an x32 syscall number (bit 30) kills the process", () => {
    const program = programOf("x64")
    expect(run(program, { arch: x86_64.auditArch, nr: 0x40000000 | 16, args: [0n, BigInt(TIOCSTI)] })).toBe(KILL)
    expect(run(program, { arch: x86_64.auditArch, nr: 0x40000000 | 1 })).toBe(KILL)
  })

  it("other host architectures get no filter, and say so", () => {
    const riscv = filterFor("riscv64", "LE")
    expect(riscv._tag).toBe("Unsupported")
    expect(riscv._tag === "Unsupported" && riscv.reason).toContain("riscv64")
    expect(filterFor("arm64", "BE")._tag).toBe("Unsupported")
    expect(filterFor("ia32", "LE")._tag).toBe("Unsupported")
  })

  const headers: ReadonlyArray<readonly [SyscallTable, string]> = [
    [x86_64, "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"],
    [i386, "/usr/include/x86_64-linux-gnu/asm/unistd_32.h"],
    [aarch64, "/usr/include/asm-generic/unistd.h"]
  ]
  for (const [table, header] of headers) {
    it.skipIf(!fs.existsSync(header))(
      `the ${table.name} numbers match the kernel headers${fs.existsSync(header) ? "" : ` (skipped: no ${header})`}`,
      () => {
        const text = fs.readFileSync(header, "utf8")
        const number = (name: string) => Number(new RegExp(`#define __NR(?:3264)?_${name}\\s+(\\d+)`).exec(text)?.[1])
        expect({
          ioctl: number("ioctl"),
          clone: number("clone"),
          unshare: number("unshare"),
          clone3: number("clone3"),
          keyctl: number("keyctl"),
          addKey: number("add_key"),
          requestKey: number("request_key")
        }).toEqual({
          ioctl: table.ioctl,
          clone: table.clone,
          unshare: table.unshare,
          clone3: table.clone3,
          keyctl: table.keyctl,
          addKey: table.addKey,
          requestKey: table.requestKey
        })
      }
    )
  }
})
