import type { ProcessInspector } from "@agent-terminal/core"
import * as fs from "node:fs"
import { isProcError, makeProcFs } from "../proc/procFs.js"

type ProcessInfo = ProcessInspector.ProcessInfo

/**
 * The raw `/proc` texts teardown needs, behind an interface so the identity logic can be tested against
 * scripted tables (a recycled pid, a zombie, a process in our own group).
 */
export interface ProcReader {
  readonly pids: () => ReadonlyArray<number>
  readonly stat: (pid: number) => string | undefined
  readonly status: (pid: number) => string | undefined
  /** `/proc/<pid>/environ` (entries separated by NUL), when the reader can tell. */
  readonly environ?: ((pid: number) => string | undefined) | undefined
}

/** A signal teardown sends. */
export type TreeSignal = "SIGTERM" | "SIGKILL" | "SIGCONT"

/** Sends one signal to one pid; a vanished or foreign pid is not an error. */
export type Signaller = (pid: number, signal: TreeSignal) => void

/** The process table at one instant, by pid. */
export type ProcTable = ReadonlyMap<number, ProcessInfo>

/** One reader with its scratch buffer: no `fstat` and no allocation per read (a sweep makes hundreds). */
const procFs = makeProcFs()

const readText = (path: string): string | undefined => {
  const text = procFs.readText(path)
  return isProcError(text) ? undefined : text
}

/** The real `/proc`. */
export const nodeProcReader: ProcReader = {
  pids: () => {
    try {
      return fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number)
    } catch {
      return []
    }
  },
  stat: (pid) => readText(`${pid}/stat`),
  status: (pid) => readText(`${pid}/status`),
  environ: (pid) => readText(`${pid}/environ`)
}

/** `process.kill` that swallows ESRCH/EPERM: the target vanished or is not ours to signal. */
export const nodeSignaller: Signaller = (pid, signal) => {
  try {
    process.kill(pid, signal)
  } catch {
    // gone, or not permitted: the verify step reports it if it is still alive
  }
}

/**
 * Parses `/proc/<pid>/stat`. The command name is in parentheses and may itself contain `)` or spaces,
 * so the fields are read after the last `)`.
 */
export const parseStat = (text: string): ProcessInfo | undefined => {
  const open = text.indexOf("(")
  const close = text.lastIndexOf(")")
  if (open < 0 || close < open) return undefined
  const pid = Number(text.slice(0, open).trim())
  const fields = text.slice(close + 2).trim().split(" ")
  // fields[0] is stat field 3 (state); starttime is field 22
  if (fields.length < 20 || !Number.isInteger(pid)) return undefined
  const numbers = [fields[1], fields[2], fields[3], fields[4], fields[19]].map(Number)
  if (numbers.some((n) => !Number.isFinite(n))) return undefined
  const [ppid, pgid, sid, ttyNr, startTime] = numbers as [number, number, number, number, number]
  return { pid, ppid, pgid, sid, ttyNr, startTime, state: fields[0] ?? "", comm: text.slice(open + 1, close) }
}

/** A dead process: a zombie waiting to be reaped (`Z`) or one being torn down (`X`). */
export const isGone = (info: ProcessInfo): boolean => info.state === "Z" || info.state === "X"

/** Reads and parses the whole table; processes that vanish between the listing and the read are skipped. */
export const readTable = (reader: ProcReader): ProcTable => {
  const table = new Map<number, ProcessInfo>()
  for (const pid of reader.pids()) {
    const text = reader.stat(pid)
    const info = text === undefined ? undefined : parseStat(text)
    if (info !== undefined) table.set(info.pid, info)
  }
  return table
}

/** The same process still holds the pid (same start time) and has not died. */
export const identityHolds = (reader: ProcReader, pid: number, startTime: number): boolean => {
  const text = reader.stat(pid)
  const info = text === undefined ? undefined : parseStat(text)
  return info !== undefined && info.startTime === startTime && !isGone(info)
}

/** How a process treats SIGTERM, from the signal masks of `/proc/<pid>/status`. */
export type TermDisposition = "handled" | "ignored" | "default"

const SIGTERM_BIT = 1n << 14n

const maskOf = (status: string, name: string): bigint | undefined => {
  const match = new RegExp(`^${name}:\\s*([0-9a-fA-F]+)\\s*$`, "m").exec(status)
  return match === null ? undefined : BigInt(`0x${match[1]}`)
}

/**
 * `handled`: a handler is installed (`SigCgt`) or TERM is blocked (`SigBlk`: pending until unblocked),
 * so waiting may let it clean up. `ignored` (`SigIgn`) and `default` never need a grace: the first dies at
 * KILL only, the second already died of the TERM.
 */
export const parseTermDisposition = (status: string): TermDisposition | undefined => {
  const caught = maskOf(status, "SigCgt")
  const blocked = maskOf(status, "SigBlk")
  const ignored = maskOf(status, "SigIgn")
  if (caught === undefined || blocked === undefined || ignored === undefined) return undefined
  if ((caught & SIGTERM_BIT) !== 0n || (blocked & SIGTERM_BIT) !== 0n) return "handled"
  return (ignored & SIGTERM_BIT) !== 0n ? "ignored" : "default"
}

/** Whether it is worth waiting for this process to act on a TERM. */
export const handlesTerm = (reader: ProcReader, pid: number): boolean => {
  const status = reader.status(pid)
  return status !== undefined && parseTermDisposition(status) === "handled"
}
