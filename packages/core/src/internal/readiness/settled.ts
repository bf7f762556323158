/**
 * How a wait for readiness ended (`Settled`), and the facts of the send it waited for (`Watch`).
 */
import type { Emulator, OutputWatch } from "@agent-terminal/terminal"
import type * as Effect from "effect/Effect"
import type { Probe, ProcessInspector } from "../../ProcessInspector.js"
import type { Match, WaitFor, WaitReason } from "../../Session.js"
import type { TerminalConfig } from "../../TerminalConfig.js"
import type { CancelSignal, Timers } from "../clock/wake.js"
import type { InputKind } from "../send/input.js"
import type { SessionRuntime } from "../session/runtime.js"

type Position = Emulator.Position

/**
 * How a send's wait ended: each decisive tier with where the send's output ends, or the send was cancelled.
 * `Continuation`: the shell waits at its continuation prompt (an unfinished command line); it is reported as
 * `prompt` with `continuation: true`.
 */
export type Settled =
  | { readonly _tag: "Prompt"; readonly end: Position; readonly exitCode: number | undefined }
  | { readonly _tag: "Continuation"; readonly end: Position }
  | { readonly _tag: "StdinRead"; readonly end: Position }
  | { readonly _tag: "Matched"; readonly end: Position; readonly match: Match }
  | { readonly _tag: "InferredIdle"; readonly end: Position }
  | { readonly _tag: "Timeout"; readonly end: Position }
  | { readonly _tag: "SessionExit"; readonly end: Position }
  | { readonly _tag: "Cancelled" }

/** A wait that ended with something to report. */
export type Decisive = Exclude<Settled, { readonly _tag: "Cancelled" }>

/** The `waitReason` a decisive end reports. */
export const reasonOf = (settled: Decisive): WaitReason => {
  switch (settled._tag) {
    case "Prompt":
    case "Continuation":
      return "prompt"
    case "StdinRead":
      return "stdin_read"
    case "Matched":
      return "matched"
    case "InferredIdle":
      return "inferred_idle"
    case "Timeout":
      return "timeout"
    case "SessionExit":
      return "session_exit"
  }
}

/** The facts of one send the tiers look at. */
export interface Watch {
  readonly session: SessionRuntime
  readonly inspector: ProcessInspector["Type"]
  readonly config: TerminalConfig
  readonly timers: Timers
  readonly promptText: string
  /** What the input is, classified once before the write. */
  readonly kind: InputKind
  /** Marker sequence number at the write: only later markers count. */
  readonly baseline: number
  readonly writtenAt: number
  readonly timeoutMs: number
  /** An explicit silence bound for this send (applies even while a command runs). */
  readonly idleMs: number | undefined
  /** The probe taken just before the write (the `stdin_read` tier needs evidence beyond it). */
  readonly before: Probe | undefined
  /** How many bytes were written. */
  readonly written: number
  /** The session's output byte count at the write. */
  readonly bytesAtWrite: number
  readonly capture: Emulator.Capture
  /**
   * Where the cursor was at the write. A prompt drawn again where the shell already was (readline redraws its
   * line at a resize) is not the prompt after this input (see the `prompt` tier).
   */
  readonly from: Emulator.Position
  /** What the send waits for besides readiness (`matched`). */
  readonly waitFor?: WaitFor | undefined
  /** The watch of the output for a `text` or `regex` wait, from the capture's start. */
  readonly output?: OutputWatch.OutputWatch | undefined
  /** A cancel of the send ends the wait (`Cancelled`). */
  readonly cancel?: CancelSignal | undefined
  /** A signal was sent instead of input (`signal_handled` is evidence for the `stdin_read` tier). */
  readonly signalled?: boolean | undefined
  /** For a `listening` wait: the sockets that were listening before the write (they do not count). */
  readonly listenersBefore?: ReadonlySet<string> | undefined
}

/** A wait that decides something on its own; the race runs several and takes the first. */
export type Tier = (watch: Watch) => Effect.Effect<Decisive>
