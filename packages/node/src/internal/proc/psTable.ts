/**
 * The process table as `ps` prints it (macOS has no `/proc`): the pure parser of
 * `ps -o pid=,ppid=,pgid=,tpgid=,stat=,lstart=,comm=` output and the command that produces it.
 */
import type { ProcessInspector } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"

/** The columns we ask `ps` for; `comm` last, as it may hold spaces. */
export const PS_COLUMNS = "pid=,ppid=,pgid=,tpgid=,stat=,lstart=,comm="

/** One row of the table. */
export interface PsRow extends ProcessInspector.ProcessInfo {
  /** The foreground group of the process's controlling terminal; 0 (macOS) or -1 (procps) for none. */
  readonly tpgid: number
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

const ROW =
  /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\S+)\s+\w{3}\s+(\w{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})\s+(.*?)\s*$/

/**
 * `lstart` (`Mon Nov 30 01:17:22 2025`, C locale) as seconds, read as if the local clock were UTC: an
 * identity token that, with the pid, tells a reused pid apart. Undefined when it does not parse.
 */
export const parseLstart = (
  month: string,
  day: string,
  hours: string,
  minutes: string,
  seconds: string,
  year: string
): number | undefined => {
  const index = MONTHS.indexOf(month)
  if (index < 0) return undefined
  return Date.UTC(Number(year), index, Number(day), Number(hours), Number(minutes), Number(seconds)) / 1000
}

/**
 * Parses `ps -o pid=,ppid=,pgid=,tpgid=,stat=,lstart=,comm=` output (macOS or procps, C locale). Lines that
 * do not parse are skipped. `ps` reports neither the session id nor the terminal's device number here: both
 * are 0.
 */
export const parsePsTable = (text: string): Array<PsRow> => {
  const out: Array<PsRow> = []
  for (const line of text.split("\n")) {
    const match = ROW.exec(line)
    if (match === null) continue
    const startTime = parseLstart(match[6], match[7], match[8], match[9], match[10], match[11])
    if (startTime === undefined) continue
    out.push({
      pid: Number(match[1]),
      ppid: Number(match[2]),
      pgid: Number(match[3]),
      tpgid: Number(match[4]),
      sid: 0,
      ttyNr: 0,
      startTime,
      state: match[5].slice(0, 1),
      comm: match[12]
    })
  }
  return out
}

/** Runs `ps` with the given selection (`["-ax"]`, `["-p", "123"]`); its stdout, or undefined when it failed. */
export const runPs = (selection: ReadonlyArray<string>): Effect.Effect<string | undefined> =>
  Effect.async<string | undefined>((resume) => {
    try {
      const child = execFile(
        "ps",
        [...selection, "-o", PS_COLUMNS],
        { env: { ...process.env, LC_ALL: "C" }, timeout: 10_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout) => resume(Effect.succeed(error === null ? stdout : undefined))
      )
      return Effect.sync(() => {
        child.kill("SIGKILL")
      })
    } catch {
      resume(Effect.succeed(undefined))
    }
  })
