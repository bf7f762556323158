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
  "stdin_read",
  "inferred_idle",
  "timeout",
  "session_exit",
  "background"
)
/** @since 0.1.0 */
export type WaitReason = typeof WaitReason.Type

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

/**
 * Options of a new session.
 *
 * @since 0.1.0
 */
export const OpenRequest = Schema.Struct({
  type: Schema.optional(SessionType),
  name: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))),
  cwd: Schema.optional(Schema.String),
  argv: Schema.optional(Schema.Array(Schema.String)),
  cols: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(20, 1000))),
  rows: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(5, 500)))
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
  busy: Schema.Boolean
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
  limits: ResourceLimits
})
/** @since 0.1.0 */
export type OpenResult = typeof OpenResult.Type

/**
 * Input for a session: `text` (typed as exact UTF-8, then Enter unless `submit` is false), named `keys`,
 * or `paste` (bracketed when the program enabled it).
 *
 * @since 0.1.0
 */
export const SendRequest = Schema.Struct({
  text: Schema.optional(Schema.String),
  keys: Schema.optional(Schema.Array(Schema.String)),
  paste: Schema.optional(Schema.String),
  submit: Schema.optional(Schema.Boolean),
  timeoutMs: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive())),
  idleMs: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive())),
  /** Return at once with a `taskId`; the send runs on until the prompt is back (or the session ends). */
  background: Schema.optional(Schema.Boolean)
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
  elapsedMs: Schema.Number
})
/** @since 0.1.0 */
export type SendResult = typeof SendResult.Type

/**
 * A page of the transcript: `offset` lines back from the newest, `count` lines.
 *
 * @since 0.1.0
 */
export const ReadRequest = Schema.Struct({
  offset: Schema.optional(Schema.Number),
  count: Schema.optional(Schema.Number)
})
/** @since 0.1.0 */
export type ReadRequest = typeof ReadRequest.Type

/**
 * @since 0.1.0
 */
export const ReadResult = Schema.Struct({
  text: Schema.String,
  totalLines: Schema.Number,
  lineBegin: Schema.Number,
  lineEnd: Schema.Number,
  truncated: Schema.Boolean
})
/** @since 0.1.0 */
export type ReadResult = typeof ReadResult.Type

/**
 * The signals a session may be sent (to its terminal's foreground process group).
 *
 * @since 0.1.0
 */
export const SignalName = Schema.Literal("SIGINT", "SIGTERM", "SIGKILL", "SIGTSTP", "SIGCONT", "SIGHUP", "SIGQUIT")
/** @since 0.1.0 */
export type SignalName = typeof SignalName.Type

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
