/**
 * What a terminal's foreground program is doing, as `/proc` shows it: running on a CPU, sleeping, waiting
 * for a child, blocked reading the terminal, a pipe, a socket or a file, accepting connections, stopped.
 * Read from `/proc/<pid>/stat` (the state letter), `/proc/<pid>/syscall` (the syscall a sleeping process is
 * blocked in, and its descriptor) and `/proc/<pid>/fd/<n>` (what that descriptor is). Said to the model
 * when a send ends by `timeout` or `inferred_idle`, so it can choose between waiting, signalling and reading.
 */
import type { ProcessInspector } from "@agent-terminal/core"
import { readStat } from "./foregroundProbe.js"
import type { ProcFs } from "./procFs.js"
import { isProcError } from "./procFs.js"
import type { ProcStat } from "./procStat.js"
import { parseChildren } from "./procStat.js"
import { type Arch, asInt, parseSyscall } from "./syscalls.js"

type Activity = ProcessInspector.ProcessActivity

/** How a blocked syscall reads: its name, and what waiting in it means. */
interface Blocked {
  readonly name: string
  readonly state: Activity["state"]
  /** The argument holding the descriptor it waits on, when the descriptor tells more. */
  readonly fdArg?: number
}

const table = (entries: ReadonlyArray<readonly [number, Blocked]>) => new Map(entries)
const reading = (name: string): Blocked => ({ name, state: "reading_file", fdArg: 0 })
const b = (name: string, state: Activity["state"]): Blocked => ({ name, state })

// arch/x86/entry/syscalls/syscall_64.tbl
const x64 = table([
  [0, reading("read")],
  [1, { name: "write", state: "writing", fdArg: 0 }],
  [7, b("poll", "polling")],
  [17, reading("pread64")],
  [19, reading("readv")],
  [23, b("select", "polling")],
  [34, b("pause", "sleeping")],
  [35, b("nanosleep", "sleeping")],
  [42, b("connect", "connecting")],
  [43, b("accept", "accepting")],
  [45, b("recvfrom", "reading_socket")],
  [47, b("recvmsg", "reading_socket")],
  [61, b("wait4", "waiting_child")],
  [128, b("rt_sigtimedwait", "sleeping")],
  [130, b("rt_sigsuspend", "sleeping")],
  [202, b("futex", "waiting_lock")],
  [230, b("clock_nanosleep", "sleeping")],
  [232, b("epoll_wait", "polling")],
  [247, b("waitid", "waiting_child")],
  [270, b("pselect6", "polling")],
  [271, b("ppoll", "polling")],
  [281, b("epoll_pwait", "polling")],
  [288, b("accept4", "accepting")],
  [441, b("epoll_pwait2", "polling")]
])

// include/uapi/asm-generic/unistd.h
const arm64 = table([
  [22, b("epoll_pwait", "polling")],
  [63, reading("read")],
  [64, { name: "write", state: "writing", fdArg: 0 }],
  [65, reading("readv")],
  [67, reading("pread64")],
  [72, b("pselect6", "polling")],
  [73, b("ppoll", "polling")],
  [95, b("waitid", "waiting_child")],
  [98, b("futex", "waiting_lock")],
  [101, b("nanosleep", "sleeping")],
  [115, b("clock_nanosleep", "sleeping")],
  [133, b("rt_sigsuspend", "sleeping")],
  [137, b("rt_sigtimedwait", "sleeping")],
  [202, b("accept", "accepting")],
  [203, b("connect", "connecting")],
  [207, b("recvfrom", "reading_socket")],
  [212, b("recvmsg", "reading_socket")],
  [242, b("accept4", "accepting")],
  [260, b("wait4", "waiting_child")],
  [441, b("epoll_pwait2", "polling")]
])

/** What a descriptor's link (`/proc/<pid>/fd/<n>`) names: a pipe, a socket, a terminal, or a file. */
const kindOfLink = (link: string): "pipe" | "socket" | "terminal" | "file" =>
  link.startsWith("pipe:")
    ? "pipe"
    : link.startsWith("socket:")
    ? "socket"
    : link.startsWith("/dev/pts/") || link === "/dev/tty" || link.startsWith("/dev/tty")
    ? "terminal"
    : "file"

const readingState: Record<ReturnType<typeof kindOfLink>, Activity["state"]> = {
  pipe: "reading_pipe",
  socket: "reading_socket",
  terminal: "reading_terminal",
  file: "reading_file"
}

/** What one process is doing now; `undefined` when its `stat` cannot be read (it is gone). */
export const activityOf = (procFs: ProcFs, arch: Arch | undefined, stat: ProcStat): Activity => {
  const base = { pid: stat.pid, name: stat.comm }
  switch (stat.state) {
    case "R":
      return { ...base, state: "running" }
    case "T":
    case "t":
      return { ...base, state: "stopped" }
    case "Z":
    case "X":
      return { ...base, state: "exited" }
    case "D":
      return { ...base, state: "blocked", detail: "uninterruptible (disk or device I/O)" }
  }
  const text = procFs.readText(`${stat.pid}/syscall`)
  if (isProcError(text) || arch === undefined) return { ...base, state: "sleeping" }
  const syscall = parseSyscall(text)
  if (syscall._tag === "Running") return { ...base, state: "running" }
  if (syscall._tag !== "InSyscall") return { ...base, state: "sleeping" }
  const blocked = (arch === "x64" ? x64 : arm64).get(syscall.nr)
  if (blocked === undefined) return { ...base, state: "blocked", detail: `syscall ${syscall.nr}` }
  if (blocked.fdArg === undefined) return { ...base, state: blocked.state, detail: blocked.name }
  const fd = asInt(syscall.args[blocked.fdArg]!)
  const link = procFs.readLink?.(`${stat.pid}/fd/${fd}`)
  if (link === undefined || isProcError(link)) {
    return { ...base, state: blocked.state, detail: `${blocked.name} fd ${fd}` }
  }
  const kind = kindOfLink(link)
  return {
    ...base,
    state: blocked.state === "writing" ? "writing" : readingState[kind],
    detail: `${blocked.name} fd ${fd} (${kind === "file" ? link : kind})`
  }
}

/** The processes of group `pgid` among the shell's descendants (the shell included), by descent. */
export const groupMembers = (procFs: ProcFs, shellPid: number, pgid: number): Array<ProcStat> => {
  const shell = readStat(procFs, shellPid)
  if (isProcError(shell)) return []
  const out: Array<ProcStat> = []
  const seen = new Set<number>([shellPid])
  const queue: Array<ProcStat> = [shell]
  for (let i = 0; i < queue.length && i < 4096; i++) {
    const stat = queue[i]!
    if (stat.pgid === pgid) out.push(stat)
    const children = procFs.readText(`${stat.pid}/task/${stat.pid}/children`)
    if (isProcError(children)) continue
    for (const child of parseChildren(children)) {
      if (seen.has(child)) continue
      seen.add(child)
      const childStat = readStat(procFs, child)
      if (!isProcError(childStat)) queue.push(childStat)
    }
  }
  return out
}

/**
 * What the terminal's foreground program is doing: of its foreground group, the member doing the work — one
 * on a CPU, else the newest one not merely waiting for a child (a shell script waits for its `sleep`: the
 * `sleep` is named; of a pipeline started at once, the last stage), else the group's leader.
 */
export const foregroundActivity = (
  procFs: ProcFs,
  arch: Arch | undefined,
  shellPid: number,
  pgid: number
): Activity | undefined => {
  const members = groupMembers(procFs, shellPid, pgid)
  if (members.length === 0) return undefined
  const activities = members.map((stat) => ({ stat, activity: activityOf(procFs, arch, stat) }))
  const busy = activities.find(({ activity }) => activity.state === "running")
  if (busy !== undefined) return busy.activity
  const working = activities
    .filter(({ activity }) => activity.state !== "waiting_child" && activity.state !== "exited")
    .sort((a, b) => b.stat.startTime - a.stat.startTime || b.stat.pid - a.stat.pid)
  if (working.length > 0) return working[0]!.activity
  return (activities.find(({ stat }) => stat.pid === pgid) ?? activities[0]!).activity
}
