/**
 * The domain shapes of a terminal session: what you ask of one and what it answers. Schemas, so the tool
 * adapter derives its JSON Schemas and validation from the same definitions the service uses.
 *
 * @since 0.1.0
 */
import { Matcher } from "@agent-terminal/terminal"
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
 * The bounds of a request's fields, the same for the tools and the service (docs/tools.md): a value outside
 * them is `InvalidInput` naming the field, before anything runs.
 *
 * @since 0.2.0
 */
export const bounds = {
  /** Terminal width in columns. */
  cols: { min: 20, max: 1000 },
  /** Terminal height in rows. */
  rows: { min: 5, max: 500 },
  /** Every duration in milliseconds (`timeoutMs`, `idleMs`, `yieldMs`, the exec timeouts): 0 to 24 hours. */
  maxMillis: 86_400_000,
  /** A session's name, in characters. */
  nameLength: 128,
  /** An id given back to the service (`sessionId`, `taskId`), in characters. */
  idLength: 64,
  /** A path (`cwd`), in characters. */
  pathLength: 4096,
  /** Named keys in one send, and the length of one key's name. */
  keys: 1024,
  keyLength: 32,
  /** Arguments of a command, and the bytes of one (the kernel's own bound of an argument). */
  args: 4096,
  argBytes: 128 * 1024,
  /** Lines of a transcript page (`offset`, `count`). */
  lines: 100_000_000
} as const

const controlCharacter = /[\p{Cc}]/u

const utf8Bytes = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/**
 * An integer in `[min, max]`; the failure says the range, never the value given.
 *
 * @since 0.2.0
 */
export const integerBetween = (min: number, max: number, unit = "") =>
  Schema.Number.pipe(
    Schema.int(),
    Schema.between(min, max),
    Schema.annotations({ message: () => `must be an integer${unit} from ${min} to ${max}` })
  )

/**
 * Milliseconds: an integer from 0 to `bounds.maxMillis`.
 *
 * @since 0.2.0
 */
export const Millis = integerBetween(0, bounds.maxMillis, " number of milliseconds")

/**
 * A terminal width in columns.
 *
 * @since 0.2.0
 */
export const Columns = integerBetween(bounds.cols.min, bounds.cols.max)

/**
 * A terminal height in rows.
 *
 * @since 0.2.0
 */
export const Rows = integerBetween(bounds.rows.min, bounds.rows.max)

/**
 * A session's name: 1 to 128 characters, none of them a control character.
 *
 * @since 0.2.0
 */
export const Name = Schema.String.pipe(
  Schema.filter((name) => name.length >= 1 && name.length <= bounds.nameLength && !controlCharacter.test(name), {
    message: () => `must be a string of 1 to ${bounds.nameLength} characters without control characters`,
    jsonSchema: { minLength: 1, maxLength: bounds.nameLength }
  })
)

/**
 * An id handed back to the service: at most `bounds.idLength` characters.
 *
 * @since 0.2.0
 */
export const IdString = Schema.String.pipe(
  Schema.maxLength(bounds.idLength),
  Schema.annotations({ message: () => `must be an id (a string of at most ${bounds.idLength} characters)` })
)

/**
 * A path: at most `bounds.pathLength` characters, without a NUL.
 *
 * @since 0.2.0
 */
export const Path = Schema.String.pipe(
  Schema.filter((path) => path.length <= bounds.pathLength && !path.includes("\u0000"), {
    message: () => `must be a path (a string of at most ${bounds.pathLength} characters without NUL)`,
    jsonSchema: { maxLength: bounds.pathLength }
  })
)

/**
 * A command's arguments: at most `bounds.args` of them, each at most `bounds.argBytes` bytes without a NUL.
 *
 * @since 0.2.0
 */
export const Argv = Schema.Array(
  Schema.String.pipe(
    Schema.filter((arg) => !arg.includes("\u0000") && utf8Bytes(arg) <= bounds.argBytes, {
      message: () => `must be a string of at most ${bounds.argBytes} bytes without NUL`
    })
  )
).pipe(
  Schema.maxItems(bounds.args),
  Schema.annotations({ message: () => `must be an array of at most ${bounds.args} arguments` })
)

/**
 * Named keys: at most `bounds.keys` of them, each at most `bounds.keyLength` characters.
 *
 * @since 0.2.0
 */
export const KeyNames = Schema.Array(
  Schema.String.pipe(
    Schema.maxLength(bounds.keyLength),
    Schema.annotations({ message: () => `must be a key name (a string of at most ${bounds.keyLength} characters)` })
  )
).pipe(
  Schema.maxItems(bounds.keys),
  Schema.annotations({ message: () => `must be an array of at most ${bounds.keys} key names` })
)

/**
 * A count of transcript lines (`offset`, `count`): an integer from 0.
 *
 * @since 0.2.0
 */
export const LineCount = integerBetween(0, bounds.lines)

/**
 * The size of `text` in UTF-8 bytes, as the input bound (`maxInputBytes`) counts it.
 *
 * @since 0.2.0
 */
export const inputBytes = utf8Bytes

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
  rows: Schema.optional(Rows)
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
  limits: ResourceLimits
})
/** @since 0.1.0 */
export type OpenResult = typeof OpenResult.Type

/**
 * What a send (or a look at a task) waits for besides readiness: exactly one of `text` (a literal text in the
 * output), `regex` (a JavaScript regular expression, with optional `flags` among `i`, `m`, `s`, `u`; refused
 * when it does not compile or nests a repetition in a repetition) or `screenStableMs` (no change on the
 * screen for that long: a full-screen program has drawn). The output looked at is what appeared since the
 * send began (for a task: since the previous look), the echo of the typed line left out.
 *
 * @since 0.3.0
 */
export const WaitFor = Schema.Struct({
  text: Schema.optional(Schema.String.pipe(
    Schema.filter((text) => text.length >= 1 && text.length <= Matcher.MAX_PATTERN_CHARS, {
      message: () => `must be a string of 1 to ${Matcher.MAX_PATTERN_CHARS} characters`,
      jsonSchema: { minLength: 1, maxLength: Matcher.MAX_PATTERN_CHARS }
    })
  )),
  regex: Schema.optional(Schema.String.pipe(
    Schema.filter((source) => Matcher.regexProblem(source) === undefined, {
      message: (issue) => Matcher.regexProblem(String(issue.actual)) ?? "must be a regular expression",
      jsonSchema: { minLength: 1, maxLength: Matcher.MAX_PATTERN_CHARS }
    })
  )),
  flags: Schema.optional(Schema.String.pipe(
    Schema.filter((flags) => /^[imsu]{0,4}$/.test(flags) && new Set(flags).size === flags.length, {
      message: () => "must be some of the flags i, m, s, u (each at most once)",
      jsonSchema: { pattern: "^[imsu]{0,4}$" }
    })
  )),
  screenStableMs: Schema.optional(integerBetween(1, bounds.maxMillis, " number of milliseconds"))
}).pipe(
  Schema.filter((condition) => {
    const given = (condition.text !== undefined ? 1 : 0) + (condition.regex !== undefined ? 1 : 0) +
      (condition.screenStableMs !== undefined ? 1 : 0)
    if (given !== 1) return "give exactly one of text, regex or screenStableMs"
    if (condition.flags !== undefined && condition.regex === undefined) return "flags go with regex only"
    if (condition.regex !== undefined && condition.flags !== undefined) {
      return Matcher.regexProblem(condition.regex, condition.flags)
    }
    return undefined
  }, { jsonSchema: {} })
)
/** @since 0.3.0 */
export type WaitFor = typeof WaitFor.Type

/**
 * What `waitFor` found: the matched text (empty for `screenStableMs`) and a regex's groups (`null` for one
 * that took no part), numbered from 1 in `groups`, by name in `named`.
 *
 * @since 0.3.0
 */
export const Match = Schema.Struct({
  text: Schema.String,
  groups: Schema.optional(Schema.Array(Schema.NullOr(Schema.String))),
  named: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) }))
})
/** @since 0.3.0 */
export type Match = typeof Match.Type

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
 * Input for a session: `text` (typed as exact UTF-8, then Enter unless `submit` is false), named `keys`,
 * or `paste` (bracketed when the program enabled it).
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
