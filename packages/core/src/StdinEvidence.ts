/**
 * The evidence rule of the `stdin_read` readiness tier. A program seen blocked reading the terminal right
 * after a write may still be in the wait that existed before it (the kernel hands the bytes to the reader a
 * few milliseconds later), so a wait proves readiness for the NEXT input only after evidence that input was
 * consumed since the write:
 *
 * - the group was seen NOT waiting after the write (it left the wait) and is seen waiting again;
 * - the foreground group changed (the shell started a program, or the program exited back to the shell);
 * - the group's read syscall count rose (it read, then came back to the wait between two probes).
 *
 * A `Miss` never counts, neither as a wait nor as leaving one. Pure: the readiness engine feeds probes one
 * at a time through `step`.
 *
 * @since 0.1.0
 */
import type { Probe } from "./ProcessInspector.js"

/**
 * What consumed input since the write, once something did.
 *
 * @since 0.1.0
 */
export type Evidence = "left_wait" | "group_changed" | "reads_rose"

/**
 * The rule's memory: the last known group and its read count, and the evidence seen so far.
 *
 * @since 0.1.0
 */
export interface State {
  /** The latest snapshot's group (the probe before the write, then each later snapshot). */
  readonly pgid: number | undefined
  /** That group's read count, undefined when unknown. */
  readonly readCalls: number | undefined
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
 * The state from the probe taken just before the write. A `Miss` there leaves no baseline: only evidence
 * seen among the later probes counts.
 *
 * @since 0.1.0
 */
export const initial = (before: Probe): State =>
  before._tag === "Snapshot"
    ? { pgid: before.pgid, readCalls: before.readCalls, evidence: undefined }
    : { pgid: undefined, readCalls: undefined, evidence: undefined }

const evidenceOf = (state: State, probe: Probe & { readonly _tag: "Snapshot" }): Evidence | undefined => {
  if (!probe.waitingOnTerminal) return "left_wait"
  if (state.pgid === undefined) return undefined
  if (probe.pgid !== state.pgid) return "group_changed"
  if (state.readCalls !== undefined && probe.readCalls !== undefined && probe.readCalls > state.readCalls) {
    return "reads_rose"
  }
  return undefined
}

/**
 * Feeds the next probe taken after the write. Ready when the group waits on the terminal and input was
 * consumed since the write (by this probe or an earlier one).
 *
 * @since 0.1.0
 */
export const step = (state: State, probe: Probe): Step => {
  if (probe._tag === "Miss") return { state, ready: false }
  const next: State = {
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
export const run = (before: Probe, after: Iterable<Probe>): Step => {
  let current: Step = { state: initial(before), ready: false }
  for (const probe of after) current = step(current.state, probe)
  return current
}
