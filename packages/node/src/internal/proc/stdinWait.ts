/**
 * Whether one blocked thread waits to read a given terminal: decode the descriptors its syscall waits on
 * (a plain fd, a `select` bitmap or `poll` array from its memory, an epoll interest list from fdinfo) and
 * compare each with the terminal's identity.
 */
import type { FileId, ProcFs } from "./procFs.js"
import { isProcError } from "./procFs.js"
import type { Arch } from "./syscalls.js"
import { asInt, asUint, classify, parseSyscall } from "./syscalls.js"

const POLLIN = 0x1
const POLLRDNORM = 0x40
const EPOLLIN = 0x1
const EPOLLRDNORM = 0x40
/** `/dev/tty` is char device 5:0 everywhere; glibc `makedev(5, 0)`. */
const DEV_TTY_RDEV = 5n << 8n
/** Beyond this a `select`/`poll` set is not a terminal program's: no guess, a miss. */
const MAX_FDS = 1 << 20

/** The descriptors set in a `select` read bitmap: bit `fd % 8` of byte `fd / 8` (little-endian words). */
export const selectReadFds = (bitmap: Uint8Array, nfds: number): Array<number> => {
  const out: Array<number> = []
  const limit = Math.min(nfds, bitmap.length * 8)
  for (let fd = 0; fd < limit; fd++) {
    if ((bitmap[fd >> 3] & (1 << (fd & 7))) !== 0) out.push(fd)
  }
  return out
}

/** The descriptors of a `struct pollfd[]` (`int fd; short events; short revents`) polled for input. */
export const pollReadFds = (buffer: Uint8Array, nfds: number): Array<number> => {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  const out: Array<number> = []
  const count = Math.min(nfds, Math.floor(buffer.byteLength / 8))
  for (let i = 0; i < count; i++) {
    const fd = view.getInt32(i * 8, true)
    const events = view.getInt16(i * 8 + 4, true)
    if (fd >= 0 && (events & (POLLIN | POLLRDNORM)) !== 0) out.push(fd)
  }
  return out
}

/** One entry of an epoll interest list, from `/proc/<pid>/fdinfo/<epfd>`. */
export interface EpollEntry {
  /** The descriptor number in the process that registered it (it may since have been closed or reused). */
  readonly fd: number
  readonly events: number
  /** The target's inode and device (kernel `MKDEV` encoding), when the kernel prints them. */
  readonly ino: bigint | undefined
  readonly sdev: bigint | undefined
}

/** Parses the `tfd:` lines of an epoll descriptor's fdinfo. */
export const parseEpollFdinfo = (text: string): Array<EpollEntry> => {
  const out: Array<EpollEntry> = []
  const line = /^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)\s.*?(?:ino:\s*([0-9a-f]+)\s+sdev:\s*([0-9a-f]+))?\s*$/gim
  for (const match of text.matchAll(line)) {
    out.push({
      fd: Number(match[1]),
      events: parseInt(match[2], 16),
      ino: match[3] === undefined ? undefined : BigInt(`0x${match[3]}`),
      sdev: match[4] === undefined ? undefined : BigInt(`0x${match[4]}`)
    })
  }
  return out
}

/** Whether an interest-list entry asks for input readiness. */
export const wantsInput = (entry: EpollEntry): boolean => (entry.events & (EPOLLIN | EPOLLRDNORM)) !== 0

/** A kernel `dev_t` (`major << 20 | minor`, as fdinfo prints it) in glibc `makedev` encoding (as `stat` reports). */
export const kernelDevToUser = (kdev: bigint): bigint => {
  const major = kdev >> 20n
  const minor = kdev & 0xfffffn
  return ((major & 0xfffff000n) << 32n) | ((major & 0xfffn) << 8n) | ((minor & 0xffffff00n) << 12n) | (minor & 0xffn)
}

/** How to recognise the session's terminal. */
export interface TerminalIdentity {
  /** The pty slave's file identity, when its path is known. */
  readonly file: FileId | undefined
  /** Its device number, in the encoding of `stat`'s `rdev` and `/proc/<pid>/stat`'s `tty_nr`. */
  readonly rdev: bigint
}

/** The process whose thread is examined: its pid and controlling tty (`tty_nr`). */
export interface Reader {
  readonly pid: number
  readonly ttyNr: number
}

/** The verdict on one thread (or descriptor): it waits on the terminal, it does not, or we cannot tell. */
export type Verdict =
  | { readonly _tag: "Waiting"; readonly how: string }
  | { readonly _tag: "NotWaiting" }
  | { readonly _tag: "Unknown"; readonly reason: string }

const notWaiting: Verdict = { _tag: "NotWaiting" }
const waiting = (how: string): Verdict => ({ _tag: "Waiting", how })
const unknown = (reason: string): Verdict => ({ _tag: "Unknown", reason })

const sameFile = (a: FileId, b: { readonly dev: bigint; readonly ino: bigint }): boolean =>
  a.dev === b.dev && a.ino === b.ino

/**
 * Whether an open file is the terminal: the same file as the pty slave, or `/dev/tty` in a process whose
 * controlling terminal is ours. Without the slave's path, a char device with the pty's number.
 */
export const isTerminalFile = (file: FileId, reader: Reader, terminal: TerminalIdentity): boolean => {
  if (!file.isCharDevice) return false
  if (terminal.file !== undefined ? sameFile(file, terminal.file) : file.rdev === terminal.rdev) return true
  return file.rdev === DEV_TTY_RDEV && BigInt(reader.ttyNr) === terminal.rdev
}

const checkFds = (procFs: ProcFs, reader: Reader, fds: ReadonlyArray<number>, terminal: TerminalIdentity) => {
  let verdict: Verdict = notWaiting
  for (const fd of fds) {
    const file = procFs.statFd(reader.pid, fd)
    if (isProcError(file)) {
      verdict = unknown(`fd ${fd} of ${reader.pid}: ${file.code}`)
    } else if (isTerminalFile(file, reader, terminal)) {
      return waiting(`fd ${fd}`)
    }
  }
  return verdict
}

const checkEpoll = (procFs: ProcFs, reader: Reader, epfd: number, terminal: TerminalIdentity): Verdict => {
  const text = procFs.readText(`${reader.pid}/fdinfo/${epfd}`)
  if (isProcError(text)) return unknown(`fdinfo ${epfd} of ${reader.pid}: ${text.code}`)
  const entries = parseEpollFdinfo(text).filter(wantsInput)
  const undecided: Array<EpollEntry> = []
  for (const entry of entries) {
    if (entry.ino === undefined || entry.sdev === undefined) {
      undecided.push(entry)
    } else if (
      terminal.file !== undefined && sameFile(terminal.file, { dev: kernelDevToUser(entry.sdev), ino: entry.ino })
    ) {
      return waiting(`epoll ${epfd} fd ${entry.fd}`)
    } else {
      undecided.push(entry)
    }
  }
  // Not the slave itself: it may still be `/dev/tty` (or, without the slave's path, the pty by number); only
  // the registered fd can tell, when it still names the file the entry was registered with.
  let verdict: Verdict = notWaiting
  for (const entry of undecided) {
    const file = procFs.statFd(reader.pid, entry.fd)
    if (isProcError(file)) {
      if (file.code !== "ENOENT") verdict = unknown(`fd ${entry.fd} of ${reader.pid}: ${file.code}`)
      continue
    }
    const registered = entry.ino === undefined || entry.sdev === undefined ||
      sameFile(file, { dev: kernelDevToUser(entry.sdev), ino: entry.ino })
    if (registered && isTerminalFile(file, reader, terminal)) return waiting(`epoll ${epfd} fd ${entry.fd}`)
  }
  return verdict
}

/**
 * Whether a thread, given the text of its `syscall` file, is blocked waiting to read the terminal.
 * Anything we cannot read or decode is `Unknown`, never a guess.
 */
export const threadVerdict = (
  procFs: ProcFs,
  arch: Arch,
  reader: Reader,
  syscallText: string,
  terminal: TerminalIdentity
): Verdict => {
  const state = parseSyscall(syscallText)
  switch (state._tag) {
    case "Running":
    case "Blocked":
      return notWaiting
    case "Malformed":
      return unknown(`unreadable syscall line of ${reader.pid}: ${JSON.stringify(state.text)}`)
    case "InSyscall":
      break
  }
  const kind = classify(arch, state.nr)
  const args = state.args
  switch (kind._tag) {
    case "Other":
      return notWaiting
    case "Unknown":
      return unknown(`unknown syscall ${state.nr} (${arch}) in ${reader.pid}`)
    case "Opaque":
      return unknown(`${kind.name} in ${reader.pid} cannot be decoded`)
    case "Fd":
      return checkFds(procFs, reader, [asInt(args[kind.arg])], terminal)
    case "Epoll":
      return checkEpoll(procFs, reader, asInt(args[0]), terminal)
    case "Select": {
      const nfds = asInt(args[0])
      const readSet = args[1]
      if (nfds <= 0 || readSet === 0n) return notWaiting
      if (nfds > MAX_FDS) return unknown(`select of ${nfds} fds in ${reader.pid}`)
      const bitmap = procFs.readMemory(reader.pid, readSet, Math.ceil(nfds / 8))
      if (isProcError(bitmap)) return unknown(`select set of ${reader.pid}: ${bitmap.code}`)
      return checkFds(procFs, reader, selectReadFds(bitmap, nfds), terminal)
    }
    case "Poll": {
      const fds = args[0]
      const nfds = asUint(args[1])
      if (nfds === 0) return notWaiting
      if (nfds > MAX_FDS) return unknown(`poll of ${nfds} fds in ${reader.pid}`)
      const array = procFs.readMemory(reader.pid, fds, nfds * 8)
      if (isProcError(array)) return unknown(`poll set of ${reader.pid}: ${array.code}`)
      return checkFds(procFs, reader, pollReadFds(array, nfds), terminal)
    }
  }
}
