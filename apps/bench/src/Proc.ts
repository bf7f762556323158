/**
 * `/proc` facts the benchmarks check independently of the library: CPU time of processes, the processes
 * of a tree (with start times, so a reused pid is never mistaken), whether a process is alive.
 */
import * as childProcess from "node:child_process"
import * as fs from "node:fs"

/** Clock ticks per second of `/proc/<pid>/stat` times. */
export const clockTicks: number = (() => {
  try {
    const ticks = Number(childProcess.execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100
  } catch {
    return 100
  }
})()

/** The fields of `/proc/<pid>/stat` the benchmarks use. */
export interface Stat {
  readonly pid: number
  readonly comm: string
  readonly state: string
  readonly ppid: number
  readonly pgid: number
  readonly sid: number
  /** utime + stime of the process itself, ms. */
  readonly cpuMs: number
  /** cutime + cstime: its waited-for children, ms. */
  readonly childCpuMs: number
  readonly startTime: number
}

/** `/proc/<pid>/stat`, or `undefined` when the process is gone. */
export const stat = (pid: number): Stat | undefined => {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  } catch {
    return undefined
  }
  const close = text.lastIndexOf(")")
  const fields = text.slice(close + 2).split(" ")
  const tick = (index: number) => Number(fields[index]) * 1000 / clockTicks
  return {
    pid,
    comm: text.slice(text.indexOf("(") + 1, close),
    state: fields[0]!,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    cpuMs: tick(11) + tick(12),
    childCpuMs: tick(13) + tick(14),
    startTime: Number(fields[19])
  }
}

/** Every process now. */
export const all = (): Array<Stat> => {
  const out: Array<Stat> = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const entry = stat(Number(name))
    if (entry !== undefined) out.push(entry)
  }
  return out
}

/** `root` and its descendants (by parent links) now. */
export const tree = (root: number, processes: ReadonlyArray<Stat> = all()): Array<Stat> => {
  const children = new Map<number, Array<Stat>>()
  for (const process of processes) {
    const list = children.get(process.ppid) ?? []
    list.push(process)
    children.set(process.ppid, list)
  }
  const self = processes.find((process) => process.pid === root)
  const out: Array<Stat> = self === undefined ? [] : [self]
  const queue = [root]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child)
      queue.push(child.pid)
    }
  }
  return out
}

/** The command line of a process ("" when gone). */
export const cmdline = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ").trim()
  } catch {
    return ""
  }
}

/** Still the same process (same start time), and not a zombie. */
export const alive = (process: Pick<Stat, "pid" | "startTime">): boolean => {
  const now = stat(process.pid)
  return now !== undefined && now.startTime === process.startTime && now.state !== "Z" && now.state !== "X"
}

/** Whether a process has a handler for SIGTERM (bit 15 of `SigCgt`). */
export const handlesTerm = (pid: number): boolean => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "latin1")
    const mask = /^SigCgt:\s*([0-9a-f]+)/m.exec(status)?.[1]
    return mask !== undefined && (BigInt(`0x${mask}`) & (1n << 14n)) !== 0n
  } catch {
    return false
  }
}

/** Whether a process ignores SIGTERM (bit 15 of `SigIgn`). */
export const ignoresTerm = (pid: number): boolean => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "latin1")
    const mask = /^SigIgn:\s*([0-9a-f]+)/m.exec(status)?.[1]
    return mask !== undefined && (BigInt(`0x${mask}`) & (1n << 14n)) !== 0n
  } catch {
    return false
  }
}

/** SIGKILL processes that are still the same process (cleanup after a failed close). */
export const killSurvivors = (processes: ReadonlyArray<Pick<Stat, "pid" | "startTime">>): void => {
  for (const process_ of processes) {
    if (!alive(process_)) continue
    try {
      process.kill(process_.pid, "SIGKILL")
    } catch {
      // gone
    }
  }
}

/** The resident set of a process (`VmRSS` of `/proc/<pid>/status`), KiB; `undefined` when it is gone. */
export const rssKiB = (pid: number): number | undefined => {
  try {
    const found = /^VmRSS:\s*(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "latin1"))?.[1]
    return found === undefined ? undefined : Number(found)
  } catch {
    return undefined
  }
}

/** CPU time of this node process so far (user + system), ms. */
export const selfCpuMs = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** CPU time of the given processes and their descendants now (own + reaped children), ms. */
export const treeCpuMs = (roots: ReadonlyArray<number>): number => {
  const processes = all()
  let total = 0
  for (const root of roots) {
    for (const process_ of tree(root, processes)) total += process_.cpuMs + process_.childCpuMs
  }
  return total
}

/** The pty slave a process has on fd 0 (e.g. `/dev/pts/3`). */
export const ttyOf = (pid: number): string | undefined => {
  try {
    return fs.readlinkSync(`/proc/${pid}/fd/0`)
  } catch {
    return undefined
  }
}
