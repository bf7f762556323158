/**
 * The evidence rule of the `stdin_read` readiness tier. A program seen blocked reading the terminal right
 * after a write may still be in the wait that existed before it (the kernel hands the bytes to the reader a
 * few milliseconds later), or — a line editor such as readline reads one byte per call — back in the wait
 * after the first of many bytes. So a wait proves readiness for the NEXT input only after evidence that
 * the input was consumed since the write:
 *
 * - the foreground group changed (the shell started a program, or the program exited back to the shell);
 * - where byte counters are known (`readBytes`, from `rchar`): the group has read at least as many bytes
 *   as were written since the probe before the write;
 * - otherwise: the group was seen NOT waiting after the write (it left the wait), or its read syscall
 *   count rose (it read, then came back to the wait between two probes);
 * - or the shell reported taking the command line (`line_taken`, through `witness`): one line written to a
 *   shell at its prompt is consumed whole once the shell starts the command (its `C` marker), so a wait
 *   after that is a wait for the next input. This needs no probe before the write;
 * - or, when a signal was sent instead of input, the program printed something after it (`signal_handled`,
 *   through `witness`): it handled the signal (a REPL's `KeyboardInterrupt`) and its wait is a new one.
 *
 * A `Miss` never counts, neither as a wait nor as leaving one. Pure: the readiness engine feeds probes one
 * at a time through `step`.
 *
 * @since 0.1.0
 */
import type { GroupSnapshot, Probe } from "./ProcessInspector.js"

/**
 * What consumed input since the write, once something did.
 *
 * @since 0.1.0
 */
export type Evidence =
  | "left_wait"
  | "group_changed"
  | "reads_rose"
  | "bytes_consumed"
  | "line_taken"
  | "signal_handled"

/**
 * The rule's memory: the last known group and its counters, the baseline of the group that was in the
 * foreground at the write, and the evidence seen so far.
 *
 * @since 0.1.0
 */
export interface State {
  /** The latest snapshot's group (the probe before the write, then each later snapshot). */
  readonly pgid: number | undefined
  /** That group's read count, undefined when unknown. */
  readonly readCalls: number | undefined
  /** The group at the write and the bytes it had read then, when known. */
  readonly baseline: { readonly pgid: number; readonly readBytes: number } | undefined
  /** How many bytes were written. */
  readonly written: number
  /** The first evidence of consumed input since the write, if any. */
  readonly evidence: Evidence | undefined
}

/**
 * One step's outcome: the next state, and whether the program now waits for the next input.
 *
 * @since 0.1.0
 */
export interface Step {
  readonly state: State
  readonly ready: boolean
}

/**
 * The state from the probe taken just before writing `written` bytes. A `Miss` there leaves no baseline:
 * only evidence seen among the later probes counts.
 *
 * @since 0.1.0
 */
export const initial = (before: Probe, written = 0): State =>
  before._tag === "Snapshot"
    ? {
      pgid: before.pgid,
      readCalls: before.readCalls,
      baseline: before.readBytes === undefined ? undefined : { pgid: before.pgid, readBytes: before.readBytes },
      written,
      evidence: undefined
    }
    : { pgid: undefined, readCalls: undefined, baseline: undefined, written, evidence: undefined }

const evidenceOf = (state: State, probe: GroupSnapshot): Evidence | undefined => {
  if (state.pgid !== undefined && probe.pgid !== state.pgid) return "group_changed"
  const { baseline } = state
  if (baseline !== undefined && baseline.pgid === probe.pgid && probe.readBytes !== undefined) {
    return probe.readBytes - baseline.readBytes >= state.written && state.written > 0 ? "bytes_consumed" : undefined
  }
  if (!probe.waitingOnTerminal) return "left_wait"
  if (state.pgid === undefined) return undefined
  if (state.readCalls !== undefined && probe.readCalls !== undefined && probe.readCalls > state.readCalls) {
    return "reads_rose"
  }
  return undefined
}

/**
 * Evidence that came from elsewhere than a probe (the shell's own report that it took the command line).
 * The first evidence is kept.
 *
 * @since 0.1.0
 */
export const witness = (state: State, evidence: Evidence): State =>
  state.evidence !== undefined ? state : { ...state, evidence }

/**
 * Feeds the next probe taken after the write. Ready when the group waits on the terminal and input was
 * consumed since the write (by this probe or an earlier one).
 *
 * @since 0.1.0
 */
export const step = (state: State, probe: Probe): Step => {
  if (probe._tag === "Miss") return { state, ready: false }
  const next: State = {
    ...state,
    pgid: probe.pgid,
    readCalls: probe.readCalls,
    evidence: state.evidence ?? evidenceOf(state, probe)
  }
  return { state: next, ready: probe.waitingOnTerminal && next.evidence !== undefined }
}

/**
 * Feeds a sequence of probes; whether the last one is ready (for tests and one-shot checks).
 *
 * @since 0.1.0
 */
export const run = (before: Probe, after: Iterable<Probe>, written = 0): Step => {
  let current: Step = { state: initial(before, written), ready: false }
  for (const probe of after) current = step(current.state, probe)
  return current
}
