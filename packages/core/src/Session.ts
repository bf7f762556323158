/**
 * The domain shapes of a terminal session: what you ask of one and what it answers. Schemas, so the tool
 * adapter derives its JSON Schemas and validation from the same definitions the service uses.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * What runs in a session: an interactive `shell` (with prompt integration), or a `command` given as argv.
 *
 * @since 0.1.0
 */
export const SessionType = Schema.Literal("shell", "command")
/** @since 0.1.0 */
export type SessionType = typeof SessionType.Type

/**
 * Why a send returned.
 *
 * - `prompt`: the shell is back at its prompt (the command ended; `exitCode` is its status).
 * - `matched`: the output showed what `waitFor` waited for (`match`); the program may still run.
 * - `stdin_read`: the foreground program is blocked reading this terminal (a REPL, a question).
 * - `inferred_idle`: no output for a while — a guess; the program may still be running.
 * - `timeout`: the deadline passed; nothing was killed.
 * - `session_exit`: the session's program exited.
 * - `background`: the send runs on as a background task (`taskId`); nothing was waited for.
 *
 * @since 0.1.0
 */
export const WaitReason = Schema.Literal(
  "prompt",
  "matched",
  "stdin_read",
  "inferred_idle",
  "timeout",
  "session_exit",
  "background"
)
/** @since 0.1.0 */
export type WaitReason = typeof WaitReason.Type

/**
 * The wait ended without the program showing it is ready (no prompt, no read of its input): silence
 * (`inferred_idle`) or the deadline (`timeout`). The command may still be running; a batch stops there, and
 * the result says what the foreground program is doing.
 *
 * @since 0.4.0
 */
export const isUnconfirmed = (reason: WaitReason): boolean => reason === "inferred_idle" || reason === "timeout"

/**
 * The command may still be running when the send returns: an unconfirmed end, or a `waitFor` match (which
 * ends the wait, not the program).
 *
 * @since 0.4.0
 */
export const mayStillRun = (reason: WaitReason): boolean => isUnconfirmed(reason) || reason === "matched"

/**
 * A step of a batch that ended this way stops the batch: an unconfirmed end, or the session's exit.
 *
 * @since 0.4.0
 */
export const stopsBatch = (reason: WaitReason): boolean => isUnconfirmed(reason) || reason === "session_exit"

/**
 * Whether the session's program still runs.
 *
 * @since 0.1.0
 */
export const SessionStatus = Schema.Union(
  Schema.TaggedStruct("running", {}),
  Schema.TaggedStruct("exited", { exitCode: Schema.NullOr(Schema.Number), signal: Schema.NullOr(Schema.String) })
)
/** @since 0.1.0 */
export type SessionStatus = typeof SessionStatus.Type

/**
 * How a session's processes are contained (and so how close ends them).
 *
 * @since 0.1.0
 */
export const ContainmentSchema = Schema.Literal("cgroup", "sweep", "pid-namespace")

export {
  Argv,
  bounds,
  Columns,
  IdString,
  inputBytes,
  integerBetween,
  KeyNames,
  LineCount,
  Millis,
  Name,
  outputRoom,
  Path,
  Rows
} from "./internal/bounds.js"
export { HumanNote, humanNoteText, HumanRequest, HumanRequestResult, reasonLength } from "./internal/oversight/human.js"
export { Match, WaitFor } from "./internal/readiness/waitFor.js"
export { activityText, Listener, listenerText, ProcessActivity } from "./internal/send/activity.js"
import { Argv, Columns, KeyNames, LineCount, Millis, Name, Path, Rows } from "./internal/bounds.js"
import { HumanNote } from "./internal/oversight/human.js"
import { Match, WaitFor } from "./internal/readiness/waitFor.js"
import { ProcessActivity } from "./internal/send/activity.js"

/**
 * Options of a new session.
 *
 * @since 0.1.0
 */
export const OpenRequest = Schema.Struct({
  type: Schema.optional(SessionType),
  /**
   * The shell of a `shell` session: a dialect's name (`bash`, `zsh`, `fish`, `pwsh`) or a path whose
   * basename names one; the configured shell when absent.
   */
  shell: Schema.optional(Path.pipe(Schema.minLength(1))),
  name: Schema.optional(Name),
  cwd: Schema.optional(Path),
  argv: Schema.optional(Argv),
  cols: Schema.optional(Columns),
  rows: Schema.optional(Rows),
  /**
   * Record the session as asciicast v2 (the live view lists, downloads and replays recordings). Refused
   * (`InvalidInput`) for an owner whose sandbox is read-only: a recording is written to the server's disk,
   * which such an owner may not fill; only the server's configuration records its sessions.
   */
  record: Schema.optional(Schema.Boolean)
})
/** @since 0.1.0 */
export type OpenRequest = typeof OpenRequest.Type

/**
 * A session as listed.
 *
 * @since 0.1.0
 */
export const SessionInfo = Schema.Struct({
  sessionId: Schema.String,
  name: Schema.String,
  type: SessionType,
  pid: Schema.Number,
  status: SessionStatus,
  cwd: Schema.optional(Schema.String),
  containment: ContainmentSchema,
  busy: Schema.Boolean,
  /** The shell's dialect (`bash`, `zsh`, `fish`, `pwsh`), for a `shell` session. */
  shell: Schema.optional(Schema.String)
})
/** @since 0.1.0 */
export type SessionInfo = typeof SessionInfo.Type

/**
 * The resource limits that hold a session's processes (all of them together, by its cgroup): at most
 * `pidsMax` processes and threads, at most `memoryMaxBytes` of memory (the kernel's OOM killer acts inside
 * the session beyond it). A limit absent here does not apply — the host delegates no such cgroup controller,
 * or the setting turned it off.
 *
 * @since 0.2.0
 */
export const ResourceLimits = Schema.Struct({
  pidsMax: Schema.optional(Schema.Number),
  memoryMaxBytes: Schema.optional(Schema.Number)
})
/** @since 0.2.0 */
export type ResourceLimits = typeof ResourceLimits.Type

/**
 * The result of an open: the session, what the terminal showed when it became ready, and the resource
 * limits that apply to it.
 *
 * @since 0.1.0
 */
export const OpenResult = Schema.Struct({
  ...SessionInfo.fields,
  motd: Schema.String,
  limits: ResourceLimits,
  /** The session is recorded (asciicast v2): asked with `record: true`, or the server records every session. */
  recording: Schema.optional(Schema.Boolean)
})
/** @since 0.1.0 */
export type OpenResult = typeof OpenResult.Type

/**
 * One input of a batch (`steps`): the input fields of a send with its own wait.
 *
 * @since 0.3.0
 */
export const Step = Schema.Struct({
  text: Schema.optional(Schema.String),
  keys: Schema.optional(KeyNames),
  paste: Schema.optional(Schema.String),
  submit: Schema.optional(Schema.Boolean),
  waitFor: Schema.optional(WaitFor),
  timeoutMs: Schema.optional(Millis),
  idleMs: Schema.optional(Millis)
})
/** @since 0.3.0 */
export type Step = typeof Step.Type

/**
 * The most steps in one batch.
 *
 * @since 0.3.0
 */
export const maxSteps = 64

/**
 * The signals a session may be sent (to its terminal's foreground process group).
 *
 * @since 0.1.0
 */
export const SignalName = Schema.Literal("SIGINT", "SIGTERM", "SIGKILL", "SIGTSTP", "SIGCONT", "SIGHUP", "SIGQUIT")
/** @since 0.1.0 */
export type SignalName = typeof SignalName.Type

/**
 * Input for a session: `text` (typed as exact UTF-8, then Enter unless `submit` is false), named `keys`,
 * or `paste` (bracketed when the program enabled it); or, instead of input, a `signal` to the terminal's
 * foreground process group, and the same wait for readiness after it (the interrupted program's prompt).
 *
 * @since 0.1.0
 */
export const SendRequest = Schema.Struct({
  text: Schema.optional(Schema.String),
  keys: Schema.optional(KeyNames),
  paste: Schema.optional(Schema.String),
  submit: Schema.optional(Schema.Boolean),
  timeoutMs: Schema.optional(Millis),
  idleMs: Schema.optional(Millis),
  /** Return at once with a `taskId`; the send runs on until the prompt is back (or the session ends). */
  background: Schema.optional(Schema.Boolean),
  /** Settle as `matched` as soon as the output shows this (a background send: its first return). */
  waitFor: Schema.optional(WaitFor),
  /**
   * Instead of input: deliver this signal to the terminal's foreground process group (resolved now, as
   * `PtyService.signal` does), then wait for readiness as a send does (`signalled` in the result).
   */
  signal: Schema.optional(SignalName),
  /** Several inputs in order, each waiting for its own readiness, instead of `text`/`keys`/`paste`. */
  steps: Schema.optional(
    Schema.Array(Step).pipe(
      Schema.filter((steps) => steps.length >= 1 && steps.length <= maxSteps, {
        message: () => `must be an array of 1 to ${maxSteps} steps`,
        jsonSchema: { minItems: 1, maxItems: maxSteps }
      })
    )
  )
})
/** @since 0.1.0 */
export type SendRequest = typeof SendRequest.Type

/**
 * The rendered screen of a full-screen program (alternate screen).
 *
 * @since 0.1.0
 */
export const ScreenSnapshot = Schema.Struct({
  rows: Schema.Array(Schema.String),
  cursor: Schema.Struct({ row: Schema.Number, col: Schema.Number })
})
/** @since 0.1.0 */
export type ScreenSnapshot = typeof ScreenSnapshot.Type

/**
 * What one step of a batch saw: its output (within its share of `maxResultBytes`) and how its wait ended.
 *
 * @since 0.3.0
 */
export const StepResult = Schema.Struct({
  output: Schema.String,
  waitReason: WaitReason,
  exitCode: Schema.optional(Schema.Number),
  match: Schema.optional(Match),
  truncated: Schema.Boolean,
  continuation: Schema.optional(Schema.Boolean),
  elapsedMs: Schema.Number
})
/** @since 0.3.0 */
export type StepResult = typeof StepResult.Type

/**
 * What a send saw.
 *
 * @since 0.1.0
 */
export const SendResult = Schema.Struct({
  output: Schema.String,
  waitReason: WaitReason,
  exitCode: Schema.optional(Schema.Number),
  sessionStatus: SessionStatus,
  screen: Schema.optional(ScreenSnapshot),
  truncated: Schema.Boolean,
  /** The shell is at a continuation prompt: the command line is unfinished (unclosed quote, heredoc…). */
  continuation: Schema.optional(Schema.Boolean),
  /** The background task running this send (`background: true`). */
  taskId: Schema.optional(Schema.String),
  /** What `waitFor` found (`waitReason: "matched"`). */
  match: Schema.optional(Match),
  /**
   * A batch (`steps`): each step that ran, in order. The other fields are those of the last one.
   */
  steps: Schema.optional(Schema.Array(StepResult)),
  /** A batch stopped early: the index (from 0) of the step whose end (timeout, inferred_idle, session_exit) stopped the rest. */
  stoppedAt: Schema.optional(Schema.Number),
  elapsedMs: Schema.Number,
  /** A person held the control since the previous send (the output starts with the note and what they saw). */
  human: Schema.optional(HumanNote),
  /** A `timeout` or `inferred_idle` end: what the foreground program is doing, as `/proc` shows it. */
  foreground: Schema.optional(ProcessActivity),
  /** A send of a `signal`: the signal, the process group it went to, whether it was delivered. */
  signalled: Schema.optional(
    Schema.Struct({ signal: SignalName, targetPgid: Schema.Number, delivered: Schema.Boolean })
  )
})
/** @since 0.1.0 */
export type SendResult = typeof SendResult.Type

/**
 * A page of the transcript: `offset` lines back from the newest, `count` lines.
 *
 * @since 0.1.0
 */
export const ReadRequest = Schema.Struct({
  offset: Schema.optional(LineCount),
  count: Schema.optional(LineCount)
})
/** @since 0.1.0 */
export type ReadRequest = typeof ReadRequest.Type

/**
 * @since 0.1.0
 */
export const ReadResult = Schema.Struct({
  text: Schema.String,
  /** The lines kept (the oldest ones beyond the retention bound are dropped). */
  totalLines: Schema.Number,
  /** The page: lines `[lineBegin, lineEnd)`, numbered from the first line ever written (0). */
  lineBegin: Schema.Number,
  lineEnd: Schema.Number,
  truncated: Schema.Boolean,
  /** The number of the oldest line kept: lines `[0, firstLine)` were dropped by the retention bound. */
  firstLine: Schema.optional(Schema.Number)
})
/** @since 0.1.0 */
export type ReadResult = typeof ReadResult.Type

/**
 * @since 0.1.0
 */
export const SignalResult = Schema.Struct({
  delivered: Schema.Boolean,
  targetPgid: Schema.Number
})
/** @since 0.1.0 */
export type SignalResult = typeof SignalResult.Type

/**
 * @since 0.1.0
 */
export const CloseResult = Schema.Struct({
  sessionId: Schema.String,
  outcome: Schema.Literal("closed", "already-closing"),
  survivors: Schema.Array(Schema.Number)
})
/** @since 0.1.0 */
export type CloseResult = typeof CloseResult.Type

/**
 * A new terminal size.
 *
 * @since 0.2.0
 */
export const ResizeRequest = Schema.Struct({ cols: Columns, rows: Rows })
/** @since 0.2.0 */
export type ResizeRequest = typeof ResizeRequest.Type

/**
 * @since 0.2.0
 */
export const ResizeResult = Schema.Struct({ cols: Schema.Number, rows: Schema.Number })
/** @since 0.2.0 */
export type ResizeResult = typeof ResizeResult.Type
