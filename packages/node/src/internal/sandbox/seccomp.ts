/**
 * The seccomp filter of a confined session, built here as a classic BPF program (what `bwrap --seccomp FD`
 * loads): a short list of instructions over `struct seccomp_data` (`nr` at 0, `arch` at 4, the six 64-bit
 * arguments from 16), checked against the architecture first so a syscall number is never read under the
 * wrong table. The rules, the ones Flatpak's `flatpak-run.c` applies for the same reasons:
 *
 * - `ioctl` `TIOCSTI` and `TIOCLINUX` → EPERM: no pushing input into a terminal (CVE-2017-5226,
 *   CVE-2023-28100). Only the low 32 bits of the command are compared: the kernel's `cmd` is an
 *   `unsigned int`, so high bits set by the caller must not hide it (CVE-2019-10063);
 * - `clone` and `unshare` with `CLONE_NEWUSER` → EPERM, `clone3` → ENOSYS (seccomp cannot read the flags
 *   of `clone3`'s struct; libc then falls back to `clone`): no nested user namespace, the door to every
 *   other namespace and to capabilities inside it;
 * - `keyctl`, `add_key`, `request_key` → EPERM: the kernel keyrings are not namespaced (as root, the host's
 *   user keyring);
 * - everything else allowed — `ptrace` too (gdb must debug inside; the pid namespace bounds what it reaches).
 *
 * On x86_64 the i386 ABI (`int 0x80`, which the kernel takes from any 64-bit process when it has IA-32
 * emulation) gets the same rules under its own numbers, and an x32 syscall (`nr` with bit 30) kills the
 * process; on aarch64 the 32-bit ARM ABI gets its own numbers. Any other architecture value kills the
 * process. Other host architectures are refused (`filterFor`), never run without the filter.
 */

/** The host architectures a filter is built for (`process.arch` names). */
export type HostArch = "x64" | "arm64"

/** One syscall table: the `AUDIT_ARCH_*` value the kernel reports and the numbers of the filtered calls. */
export interface SyscallTable {
  readonly name: string
  readonly auditArch: number
  readonly ioctl: number
  readonly clone: number
  readonly unshare: number
  readonly clone3: number
  readonly keyctl: number
  readonly addKey: number
  readonly requestKey: number
  /** Numbers at or above this are another ABI sharing the architecture value (x32 on x86_64): kill. */
  readonly foreignFrom?: number
}

/** x86_64 (`arch/x86/entry/syscalls/syscall_64.tbl`). */
export const x86_64: SyscallTable = {
  name: "x86_64",
  auditArch: 0xc000003e,
  ioctl: 16,
  clone: 56,
  unshare: 272,
  clone3: 435,
  keyctl: 250,
  addKey: 248,
  requestKey: 249,
  foreignFrom: 0x40000000
}

/** i386, also reachable from a 64-bit process on x86_64 (`syscall_32.tbl`). */
export const i386: SyscallTable = {
  name: "i386",
  auditArch: 0x40000003,
  ioctl: 54,
  clone: 120,
  unshare: 310,
  clone3: 435,
  keyctl: 288,
  addKey: 286,
  requestKey: 287
}

/** aarch64 (the generic table, `include/uapi/asm-generic/unistd.h`). */
export const aarch64: SyscallTable = {
  name: "aarch64",
  auditArch: 0xc00000b7,
  ioctl: 29,
  clone: 220,
  unshare: 97,
  clone3: 435,
  keyctl: 219,
  addKey: 217,
  requestKey: 218
}

/** 32-bit ARM EABI, the compat ABI of aarch64 (`arch/arm/tools/syscall.tbl`). */
export const arm: SyscallTable = {
  name: "arm",
  auditArch: 0x40000028,
  ioctl: 54,
  clone: 120,
  unshare: 337,
  clone3: 435,
  keyctl: 311,
  addKey: 309,
  requestKey: 310
}

/** The tables a host's filter covers: its own first, then its compat ABI. */
export const tablesOf: Readonly<Record<HostArch, ReadonlyArray<SyscallTable>>> = {
  x64: [x86_64, i386],
  arm64: [aarch64, arm]
}

export const TIOCSTI = 0x5412
export const TIOCLINUX = 0x541c
export const CLONE_NEWUSER = 0x10000000
export const EPERM = 1
export const ENOSYS = 38

export const SECCOMP_RET_KILL_PROCESS = 0x80000000
export const SECCOMP_RET_ERRNO = 0x00050000
export const SECCOMP_RET_ALLOW = 0x7fff0000

/** Classic BPF opcodes used here. */
export const BPF_LD_W_ABS = 0x20
export const BPF_JMP_JEQ_K = 0x15
export const BPF_JMP_JGE_K = 0x35
export const BPF_JMP_JSET_K = 0x45
export const BPF_RET_K = 0x06

/** Offsets in `struct seccomp_data` (little-endian: an argument's low word comes first). */
export const OFFSET_NR = 0
export const OFFSET_ARCH = 4
export const argLow = (index: number): number => 16 + 8 * index

/** One instruction: `code`, the jump offsets when true/false, and the constant. */
export interface Instruction {
  readonly code: number
  readonly jt: number
  readonly jf: number
  readonly k: number
}

type Step =
  | { readonly _tag: "label"; readonly name: string }
  | { readonly _tag: "load"; readonly offset: number }
  | {
    readonly _tag: "jump"
    readonly code: number
    readonly k: number
    readonly whenTrue: string | undefined
    readonly whenFalse: string | undefined
  }
  | { readonly _tag: "ret"; readonly value: number }

const label = (name: string): Step => ({ _tag: "label", name })
const load = (offset: number): Step => ({ _tag: "load", offset })
const ret = (value: number): Step => ({ _tag: "ret", value })
/** Jump to `whenTrue` when the test holds, else fall through (or to `whenFalse`). */
const jump = (code: number, k: number, whenTrue: string | undefined, whenFalse?: string): Step => ({
  _tag: "jump",
  code,
  k,
  whenTrue,
  whenFalse
})

const KILL = "kill"
const DENY = "eperm"
const NO_SYSCALL = "enosys"

const rules = (table: SyscallTable): ReadonlyArray<Step> => {
  const ioctl = `${table.name}.ioctl`
  const namespaces = `${table.name}.newuser`
  return [
    label(table.name),
    load(OFFSET_NR),
    ...(table.foreignFrom !== undefined ? [jump(BPF_JMP_JGE_K, table.foreignFrom, KILL)] : []),
    jump(BPF_JMP_JEQ_K, table.ioctl, ioctl),
    jump(BPF_JMP_JEQ_K, table.clone, namespaces),
    jump(BPF_JMP_JEQ_K, table.unshare, namespaces),
    jump(BPF_JMP_JEQ_K, table.clone3, NO_SYSCALL),
    jump(BPF_JMP_JEQ_K, table.keyctl, DENY),
    jump(BPF_JMP_JEQ_K, table.addKey, DENY),
    jump(BPF_JMP_JEQ_K, table.requestKey, DENY),
    ret(SECCOMP_RET_ALLOW),
    label(ioctl),
    load(argLow(1)),
    jump(BPF_JMP_JEQ_K, TIOCSTI, DENY),
    jump(BPF_JMP_JEQ_K, TIOCLINUX, DENY),
    ret(SECCOMP_RET_ALLOW),
    label(namespaces),
    load(argLow(0)),
    jump(BPF_JMP_JSET_K, CLONE_NEWUSER, DENY),
    ret(SECCOMP_RET_ALLOW)
  ]
}

/** The program as steps: the architecture dispatch, each table's rules, the shared verdicts. */
const steps = (tables: ReadonlyArray<SyscallTable>): ReadonlyArray<Step> => [
  load(OFFSET_ARCH),
  ...tables.map((table) => jump(BPF_JMP_JEQ_K, table.auditArch, table.name)),
  ret(SECCOMP_RET_KILL_PROCESS),
  ...tables.flatMap(rules),
  label(KILL),
  ret(SECCOMP_RET_KILL_PROCESS),
  label(DENY),
  ret(SECCOMP_RET_ERRNO | EPERM),
  label(NO_SYSCALL),
  ret(SECCOMP_RET_ERRNO | ENOSYS)
]

/** Resolve labels into forward jump offsets (classic BPF jumps only forward, by at most 255). */
export const assemble = (program: ReadonlyArray<Step>): ReadonlyArray<Instruction> => {
  const positions = new Map<string, number>()
  let index = 0
  for (const step of program) {
    if (step._tag === "label") positions.set(step.name, index)
    else index++
  }
  const out: Array<Instruction> = []
  const offset = (target: string | undefined, at: number): number => {
    if (target === undefined) return 0
    const position = positions.get(target)
    if (position === undefined) throw new Error(`seccomp: no label ${target}`)
    const distance = position - (at + 1)
    if (distance < 0 || distance > 255) throw new Error(`seccomp: jump to ${target} out of range (${distance})`)
    return distance
  }
  for (const step of program) {
    const at = out.length
    switch (step._tag) {
      case "label":
        break
      case "load":
        out.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: step.offset })
        break
      case "ret":
        out.push({ code: BPF_RET_K, jt: 0, jf: 0, k: step.value >>> 0 })
        break
      case "jump":
        out.push({ code: step.code, jt: offset(step.whenTrue, at), jf: offset(step.whenFalse, at), k: step.k >>> 0 })
        break
    }
  }
  return out
}

/** The instructions of the filter for these tables (the first is the host's own). */
export const instructionsFor = (tables: ReadonlyArray<SyscallTable>): ReadonlyArray<Instruction> =>
  assemble(steps(tables))

/** `struct sock_filter[]` as bwrap reads it: 8 bytes per instruction, little-endian. */
export const encode = (instructions: ReadonlyArray<Instruction>): Uint8Array => {
  const bytes = new Uint8Array(instructions.length * 8)
  const view = new DataView(bytes.buffer)
  instructions.forEach((instruction, i) => {
    view.setUint16(i * 8, instruction.code, true)
    view.setUint8(i * 8 + 2, instruction.jt)
    view.setUint8(i * 8 + 3, instruction.jf)
    view.setUint32(i * 8 + 4, instruction.k, true)
  })
  return bytes
}

/**
 * The filter's bytes for a host (`process.arch`, `os.endianness()`), or why there is none: only
 * little-endian x86_64 and aarch64 have tables here.
 */
export const filterFor = (
  arch: string,
  endianness: "LE" | "BE"
): { readonly _tag: "Filter"; readonly bytes: Uint8Array } | {
  readonly _tag: "Unsupported"
  readonly reason: string
} => {
  if ((arch === "x64" || arch === "arm64") && endianness === "LE") {
    return { _tag: "Filter", bytes: encode(instructionsFor(tablesOf[arch])) }
  }
  return {
    _tag: "Unsupported",
    reason: `no seccomp filter for the ${arch}${endianness === "BE" ? " (big-endian)" : ""} architecture ` +
      "(only x86_64 and aarch64 have one); the confined modes do not run without it"
  }
}
