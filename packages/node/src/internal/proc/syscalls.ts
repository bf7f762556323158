/**
 * The syscalls a thread can be blocked in while it waits for terminal input, per architecture, and the
 * parser of `/proc/<pid>/task/<tid>/syscall`.
 */

/** The architectures whose syscall numbers we know. */
export type Arch = "x64" | "arm64"

/** How a syscall names the descriptors it waits on. */
export type WaitKind =
  /** One descriptor, in the given argument. */
  | { readonly _tag: "Fd"; readonly arg: number }
  /** `select`/`pselect6`: nfds in arg0, the read `fd_set` pointer in arg1. */
  | { readonly _tag: "Select" }
  /** `poll`/`ppoll`: the `struct pollfd` array in arg0, its length in arg1. */
  | { readonly _tag: "Poll" }
  /** `epoll_*wait*`: the epoll descriptor in arg0; its interest list is in fdinfo. */
  | { readonly _tag: "Epoll" }
  /** Could be a terminal read, but its descriptors cannot be decoded from `/proc` (AIO, io_uring). */
  | { readonly _tag: "Opaque"; readonly name: string }

/** What a syscall number means for a blocked thread. */
export type SyscallClass =
  | WaitKind
  /** A known syscall that cannot be a read of a terminal (futex, nanosleep, wait4, accept…). */
  | { readonly _tag: "Other" }
  /** A number we do not know on this architecture: no guess. */
  | { readonly _tag: "Unknown" }

const fd0: WaitKind = { _tag: "Fd", arg: 0 }
const fd1: WaitKind = { _tag: "Fd", arg: 1 }
const select: WaitKind = { _tag: "Select" }
const poll: WaitKind = { _tag: "Poll" }
const epoll: WaitKind = { _tag: "Epoll" }
const opaque = (name: string): WaitKind => ({ _tag: "Opaque", name })

interface Table {
  readonly waits: ReadonlyMap<number, WaitKind>
  /** Inclusive ranges of assigned syscall numbers. */
  readonly known: ReadonlyArray<readonly [number, number]>
}

// arch/x86/entry/syscalls/syscall_64.tbl
const x64: Table = {
  waits: new Map<number, WaitKind>([
    [0, fd0], // read
    [7, poll], // poll
    [17, fd0], // pread64
    [19, fd0], // readv
    [23, select], // select
    [40, fd1], // sendfile (in_fd)
    [208, opaque("io_getevents")],
    [232, epoll], // epoll_wait
    [270, select], // pselect6
    [271, poll], // ppoll
    [275, fd0], // splice (fd_in)
    [281, epoll], // epoll_pwait
    [295, fd0], // preadv
    [327, fd0], // preadv2
    [333, opaque("io_pgetevents")],
    [426, opaque("io_uring_enter")],
    [441, epoll] // epoll_pwait2
  ]),
  known: [[0, 336], [424, 469]]
}

// include/uapi/asm-generic/unistd.h
const arm64: Table = {
  waits: new Map<number, WaitKind>([
    [4, opaque("io_getevents")],
    [22, epoll], // epoll_pwait
    [63, fd0], // read
    [65, fd0], // readv
    [67, fd0], // pread64
    [69, fd0], // preadv
    [71, fd1], // sendfile (in_fd)
    [72, select], // pselect6
    [73, poll], // ppoll
    [76, fd0], // splice (fd_in)
    [286, fd0], // preadv2
    [292, opaque("io_pgetevents")],
    [426, opaque("io_uring_enter")],
    [441, epoll] // epoll_pwait2
  ]),
  known: [[0, 294], [424, 469]]
}

const other: SyscallClass = { _tag: "Other" }
const unknown: SyscallClass = { _tag: "Unknown" }

/** The architecture of this process when we know its syscall table. */
export const archOf = (nodeArch: string): Arch | undefined =>
  nodeArch === "x64" || nodeArch === "arm64" ? nodeArch : undefined

/** Classifies a syscall number of a blocked thread. */
export const classify = (arch: Arch, nr: number): SyscallClass => {
  const table = arch === "x64" ? x64 : arm64
  const wait = table.waits.get(nr)
  if (wait !== undefined) return wait
  return table.known.some(([low, high]) => nr >= low && nr <= high) ? other : unknown
}

/** One thread's `syscall` file. */
export type SyscallState =
  /** On a CPU or runnable: not blocked. */
  | { readonly _tag: "Running" }
  /** Blocked, but not inside a syscall (`-1 sp pc`: stopped, faulting). */
  | { readonly _tag: "Blocked" }
  /** Blocked in syscall `nr` with its six arguments. */
  | { readonly _tag: "InSyscall"; readonly nr: number; readonly args: ReadonlyArray<bigint> }
  | { readonly _tag: "Malformed"; readonly text: string }

const running: SyscallState = { _tag: "Running" }
const blocked: SyscallState = { _tag: "Blocked" }

/** Parses `/proc/<pid>/task/<tid>/syscall`: `running`, `-1 sp pc`, or `nr a0 … a5 sp pc` (args in hex). */
export const parseSyscall = (text: string): SyscallState => {
  const fields = text.trim().split(/\s+/)
  if (fields[0] === "running") return running
  const nr = Number(fields[0])
  if (!Number.isInteger(nr)) return { _tag: "Malformed", text }
  if (nr < 0) return blocked
  if (fields.length < 7) return { _tag: "Malformed", text }
  const args: Array<bigint> = []
  for (let i = 1; i <= 6; i++) {
    const field = fields[i]
    if (!/^0x[0-9a-f]+$/i.test(field)) return { _tag: "Malformed", text }
    args.push(BigInt(field))
  }
  return { _tag: "InSyscall", nr, args }
}

/** A syscall argument as a C `int` (a descriptor). */
export const asInt = (arg: bigint): number => Number(BigInt.asIntN(32, arg))

/** A syscall argument as a C `unsigned int` (a count). */
export const asUint = (arg: bigint): number => Number(BigInt.asUintN(32, arg))
