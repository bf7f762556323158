/**
 * Parsers of the small per-process `/proc` texts: `stat`, `io`, `task/<tid>/children`.
 */
import type { ProcessInspector } from "@agent-terminal/core"

/** `/proc/<pid>/stat`, the fields we use. */
export interface ProcStat extends ProcessInspector.ProcessInfo {
  /** The foreground process group of the process's controlling terminal, -1 for none. */
  readonly tpgid: number
  readonly numThreads: number
}

/**
 * Parses `/proc/<pid>/stat`. `comm` may hold spaces and `)`, so the fixed fields are the ones after the LAST
 * `)`. Undefined when the text is not a stat line.
 */
export const parseStat = (text: string): ProcStat | undefined => {
  const open = text.indexOf(" (")
  const close = text.lastIndexOf(")")
  if (open < 0 || close < open) return undefined
  const pid = Number(text.slice(0, open))
  // only the first 20 fields are read: splitting the other ~30 was most of the parse (once per send)
  const rest = text.slice(close + 2).split(" ", 20)
  if (!Number.isInteger(pid) || rest.length < 20) return undefined
  const stat: ProcStat = {
    pid,
    comm: text.slice(open + 2, close),
    state: rest[0],
    ppid: Number(rest[1]),
    pgid: Number(rest[2]),
    sid: Number(rest[3]),
    ttyNr: Number(rest[4]),
    tpgid: Number(rest[5]),
    numThreads: Number(rest[17]),
    startTime: Number(rest[19])
  }
  return [stat.ppid, stat.pgid, stat.sid, stat.ttyNr, stat.tpgid, stat.numThreads, stat.startTime].every(
      Number.isInteger
    ) && stat.state.length === 1
    ? stat
    : undefined
}

/**
 * Only the `tpgid` field of `/proc/<pid>/stat` (the sixth after `comm`'s last `)`): the foreground check made
 * on every send reads nothing else, so it scans to that field instead of splitting the line and building a
 * `ProcStat` (`parseStat`). Undefined when the text is not a stat line or the field is not an integer.
 */
export const parseTpgid = (text: string): number | undefined => {
  const close = text.lastIndexOf(")")
  if (close < 0 || text.indexOf(" (") < 0 || text.charCodeAt(close + 1) !== 32) return undefined
  // state ppid pgid sid tty_nr tpgid: five spaces after the one that follows `)`
  let start = close + 2
  for (let field = 0; field < 5; field++) {
    const space = text.indexOf(" ", start)
    if (space < 0) return undefined
    start = space + 1
  }
  const end = text.indexOf(" ", start)
  if (end <= start) return undefined
  const tpgid = Number(text.slice(start, end))
  return Number.isInteger(tpgid) ? tpgid : undefined
}

/** A process that can no longer run or read anything: a zombie, or dead. */
export const isGone = (state: string): boolean => state === "Z" || state === "X" || state === "x"

/** Stopped by a signal or a tracer: not waiting for input, whatever its last syscall. */
export const isStopped = (state: string): boolean => state === "T" || state === "t"

/** The `syscr` counter (read syscalls) of `/proc/<pid>/io`. */
export const parseReadCalls = (text: string): number | undefined => {
  const match = /^syscr:\s*(\d+)$/m.exec(text)
  return match === null ? undefined : Number(match[1])
}

/** The `rchar` counter (bytes read, from any file) of `/proc/<pid>/io`. */
export const parseReadBytes = (text: string): number | undefined => {
  const match = /^rchar:\s*(\d+)$/m.exec(text)
  return match === null ? undefined : Number(match[1])
}

/** `/proc/<pid>/task/<tid>/children`: space-separated pids. */
export const parseChildren = (text: string): Array<number> => {
  const out: Array<number> = []
  for (const field of text.split(" ")) {
    const pid = Number(field)
    if (field.length > 0 && Number.isInteger(pid) && pid > 0) out.push(pid)
  }
  return out
}
