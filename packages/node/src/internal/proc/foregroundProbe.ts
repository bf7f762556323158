/**
 * The Linux probe: the terminal's foreground group (the shell's `tpgid`), its live members, and whether any
 * of their threads is blocked reading the terminal. Plain synchronous functions over a `ProcFs`, so they run
 * against the real `/proc` and against recorded fixtures alike.
 */
import type { ProcessInspector } from "@agent-terminal/core"
import type { ProcFs, ProcResult } from "./procFs.js"
import { isProcError, procError } from "./procFs.js"
import type { ProcStat } from "./procStat.js"
import { isGone, isStopped, parseChildren, parseReadBytes, parseReadCalls, parseStat, parseTpgid } from "./procStat.js"
import type { TerminalIdentity } from "./stdinWait.js"
import { threadVerdict } from "./stdinWait.js"
import type { Arch } from "./syscalls.js"

/** A probe and, when the group waits, which thread and descriptor showed it (for diagnostics and tests). */
export interface Inspection {
  readonly probe: ProcessInspector.Probe
  readonly how: string | undefined
}

interface Member {
  readonly stat: ProcStat
  readonly tids: ReadonlyArray<string> | undefined
}

const miss = (reason: string): Inspection => ({ probe: { _tag: "Miss", reason }, how: undefined })

const statOf = (text: ProcResult<string>): ProcResult<ProcStat> =>
  isProcError(text) ? text : parseStat(text) ?? procError("EBADSTAT")

/** `/proc/<pid>/stat`, parsed. */
export const readStat = (procFs: ProcFs, pid: number): ProcResult<ProcStat> => statOf(procFs.readText(`${pid}/stat`))

const threadsOf = (procFs: ProcFs, stat: ProcStat): ProcResult<ReadonlyArray<string>> =>
  stat.numThreads === 1 ? [String(stat.pid)] : procFs.list(`${stat.pid}/task`)

/**
 * The foreground process group of the shell's terminal, undefined when unreadable or none. Read through
 * the shell's pinned `stat` where the reader keeps one (a check made on every send).
 */
export const foregroundGroup = (procFs: ProcFs, shellPid: number): number | undefined => {
  const text = procFs.readPinnedStat === undefined
    ? procFs.readText(`${shellPid}/stat`)
    : procFs.readPinnedStat(shellPid)
  const tpgid = isProcError(text) ? undefined : parseTpgid(text)
  return tpgid === undefined || tpgid <= 0 ? undefined : tpgid
}

/**
 * Members of group `pgid` among the shell and its descendants, walked through `task/<tid>/children` (a few
 * reads instead of all of `/proc`). Undefined when some part of the tree cannot be listed.
 */
const membersByDescent = (procFs: ProcFs, shell: ProcStat, pgid: number): Map<number, Member> | undefined => {
  const members = new Map<number, Member>()
  const seen = new Set<number>([shell.pid])
  const queue: Array<ProcStat> = [shell]
  for (let i = 0; i < queue.length; i++) {
    const stat = queue[i]
    const tids = threadsOf(procFs, stat)
    if (isProcError(tids)) {
      if (tids.code === "ENOENT" && stat.pid !== shell.pid) continue
      return undefined
    }
    if (stat.pgid === pgid && !isGone(stat.state)) members.set(stat.pid, { stat, tids })
    for (const tid of tids) {
      const text = procFs.readText(`${stat.pid}/task/${tid}/children`)
      if (isProcError(text)) {
        if (text.code === "ENOENT" && (stat.pid !== shell.pid || tid !== String(shell.pid))) continue
        return undefined
      }
      for (const child of parseChildren(text)) {
        if (seen.has(child)) continue
        seen.add(child)
        const childStat = readStat(procFs, child)
        if (!isProcError(childStat)) queue.push(childStat)
      }
    }
  }
  if (!members.has(pgid)) {
    const leader = readStat(procFs, pgid)
    if (!isProcError(leader) && leader.pgid === pgid && !isGone(leader.state)) {
      members.set(pgid, { stat: leader, tids: undefined })
    }
  }
  return members
}

/** Members of group `pgid` by a scan of every `/proc/<pid>/stat`. */
const membersByScan = (procFs: ProcFs, pgid: number): ProcResult<Map<number, Member>> => {
  const names = procFs.list("")
  if (isProcError(names)) return names
  const members = new Map<number, Member>()
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid <= 0) continue
    const stat = readStat(procFs, pid)
    if (!isProcError(stat) && stat.pgid === pgid && !isGone(stat.state)) members.set(pid, { stat, tids: undefined })
  }
  return members
}

const terminalIdentity = (
  procFs: ProcFs,
  terminal: ProcessInspector.TerminalRef,
  shell: ProcStat
): ProcResult<TerminalIdentity> => {
  if (terminal.ttyPath === undefined) return { file: undefined, rdev: BigInt(shell.ttyNr) }
  const file = procFs.statPath(terminal.ttyPath)
  if (isProcError(file)) return file
  return { file, rdev: file.rdev }
}

/**
 * One probe of the terminal's foreground group. A `Miss` when the shell or a member cannot be read (gone,
 * forbidden), when the architecture is unsupported, or when a blocked thread's wait cannot be decoded and no
 * other thread is seen waiting on the terminal.
 */
export const inspect = (
  procFs: ProcFs,
  arch: Arch | undefined,
  terminal: ProcessInspector.TerminalRef
): Inspection => {
  if (arch === undefined) return miss("unsupported architecture")
  const shell = readStat(procFs, terminal.shellPid)
  if (isProcError(shell)) return miss(`shell ${terminal.shellPid}: ${shell.code}`)
  const pgid = shell.tpgid
  if (pgid <= 0) return miss("the terminal has no foreground group")
  const identity = terminalIdentity(procFs, terminal, shell)
  if (isProcError(identity)) return miss(`terminal ${terminal.ttyPath}: ${identity.code}`)

  let members = membersByDescent(procFs, shell, pgid)
  if (members === undefined || members.size === 0) {
    const scanned = membersByScan(procFs, pgid)
    if (isProcError(scanned)) return miss(`/proc: ${scanned.code}`)
    members = scanned
  }

  let how: string | undefined
  let undecided: string | undefined
  let readCalls: number | undefined = 0
  let readBytes: number | undefined = 0
  for (const { stat, tids: knownTids } of members.values()) {
    const pid = stat.pid
    const io = procFs.readText(`${pid}/io`)
    if (isProcError(io)) {
      if (io.code === "ENOENT") return miss(`process ${pid} vanished`)
      readCalls = undefined
      readBytes = undefined
    } else {
      const calls = parseReadCalls(io)
      const bytes = parseReadBytes(io)
      readCalls = readCalls === undefined || calls === undefined ? undefined : readCalls + calls
      readBytes = readBytes === undefined || bytes === undefined ? undefined : readBytes + bytes
    }
    if (how !== undefined || isStopped(stat.state)) continue
    const tids = knownTids ?? procFs.list(`${pid}/task`)
    if (isProcError(tids)) {
      if (tids.code === "ENOENT") return miss(`process ${pid} vanished`)
      undecided ??= `threads of ${pid}: ${tids.code}`
      continue
    }
    const reader = { pid, ttyNr: stat.ttyNr }
    for (const tid of tids) {
      const text = procFs.readText(`${pid}/task/${tid}/syscall`)
      if (isProcError(text)) {
        // A thread that exited is not waiting; anything else (EACCES) we cannot tell.
        if (text.code !== "ENOENT") undecided ??= `syscall of ${pid}/${tid}: ${text.code}`
        continue
      }
      const verdict = threadVerdict(procFs, arch, reader, text, identity)
      if (verdict._tag === "Waiting") {
        how = `${pid}/${tid} ${verdict.how}`
        break
      }
      if (verdict._tag === "Unknown") undecided ??= verdict.reason
    }
  }
  if (how === undefined && undecided !== undefined) return miss(undecided)
  return {
    probe: {
      _tag: "Snapshot",
      pgid,
      members: Array.from(members.keys()).sort((a, b) => a - b),
      waitingOnTerminal: how !== undefined,
      readCalls,
      readBytes
    },
    how
  }
}

/** Every readable process, by a scan of `/proc`. */
export const processTable = (procFs: ProcFs): Array<ProcStat> => {
  const names = procFs.list("")
  if (isProcError(names)) return []
  const out: Array<ProcStat> = []
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid <= 0) continue
    const stat = readStat(procFs, pid)
    if (!isProcError(stat)) out.push(stat)
  }
  return out
}
