/**
 * The service's settings: a Schema with the defaults of the design and the cross-field
 * checks, so an invalid combination fails once, at startup, with the field named.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { InvalidConfig } from "./Errors.js"
import { bounds } from "./Session.js"
import { defaults } from "./TerminalDefaults.js"

/** An integer above 0. */
const Positive = Schema.Number.pipe(
  Schema.int(),
  Schema.filter((n) => n > 0 || `must be a positive integer, got ${n}`)
)

/** An integer of 0 or more, where 0 turns the bound off. */
const NonNegative = Schema.Number.pipe(
  Schema.int(),
  Schema.filter((n) => n >= 0 || `must be a non-negative integer (0: none), got ${n}`)
)

/** A positive integer setting, its default filled in on decode. */
const positive = (name: string, fallback: number) =>
  Schema.optionalWith(Positive.pipe(Schema.annotations({ title: name })), { default: () => fallback })

/** A non-negative integer setting (0: none), its default filled in on decode. */
const nonNegative = (name: string, fallback: number) =>
  Schema.optionalWith(NonNegative.pipe(Schema.annotations({ title: name })), { default: () => fallback })

/**
 * The encoded (input) form: every field optional, defaults filled in on decode.
 *
 * @since 0.1.0
 */
export const TerminalConfigSchema = Schema.Struct({
  pollIntervalMs: positive("pollIntervalMs", defaults.pollIntervalMs),
  exactProbeAfterMs: positive("exactProbeAfterMs", defaults.exactProbeAfterMs),
  idleSilenceMs: positive("idleSilenceMs", defaults.idleSilenceMs),
  handoffGraceMs: positive("handoffGraceMs", defaults.handoffGraceMs),
  timeoutMs: positive("timeoutMs", defaults.timeoutMs),
  openTimeoutMs: positive("openTimeoutMs", defaults.openTimeoutMs),
  disposeGraceMs: positive("disposeGraceMs", defaults.disposeGraceMs),
  scrollbackLines: positive("scrollbackLines", defaults.scrollbackLines),
  scrollbackMaxBytes: positive("scrollbackMaxBytes", defaults.scrollbackMaxBytes),
  maxReadBytes: positive("maxReadBytes", defaults.maxReadBytes),
  maxResultBytes: positive("maxResultBytes", defaults.maxResultBytes),
  /** The bound of one input: a send's `text` or `paste`, a task's input, an `exec` command (UTF-8 bytes). */
  maxInputBytes: positive("maxInputBytes", defaults.maxInputBytes),
  cols: positive("cols", defaults.cols),
  rows: positive("rows", defaults.rows),
  /** Let silence end a send even while the shell reports a command running. */
  idleWhileRunning: Schema.optionalWith(Schema.Boolean, { default: () => defaults.idleWhileRunning }),
  /**
   * The shell a `shell` session runs unless the open names one: a dialect's name (`bash`, `zsh`, `fish`,
   * `pwsh`) or a path whose basename names one.
   */
  shell: Schema.optionalWith(Schema.String, { default: (): string => defaults.shell }),
  /**
   * What every session id this service mints starts with (default `s-`). A machine of a fleet names itself
   * and its run here (`m2~k2x9q1~`), so an id says where it lives and which run opened it.
   */
  sessionIdPrefix: Schema.optionalWith(
    Schema.String.pipe(
      Schema.pattern(/^[A-Za-z0-9_~-]{1,40}$/),
      Schema.annotations({ title: "sessionIdPrefix", message: () => "at most 40 of A-Z a-z 0-9 _ ~ -" })
    ),
    { default: (): string => defaults.sessionIdPrefix }
  ),
  /** Working directory of new sessions when none is given. */
  defaultCwd: Schema.optional(Schema.String),
  /** A one-shot run's overall bound (`exec`): 30 min; the tree is killed when it passes. 0: none. */
  execTimeoutMs: nonNegative("execTimeoutMs", defaults.execTimeoutMs),
  /** A one-shot run's no-output watchdog: 10 min without output or input kills the tree. 0: none. */
  execNoOutputTimeoutMs: nonNegative("execNoOutputTimeoutMs", defaults.execNoOutputTimeoutMs),
  /** How long a foreground run (and a waiting `process poll`) holds the call before it returns a task id. */
  execYieldMs: nonNegative("execYieldMs", defaults.execYieldMs),
  /** Open (and opening) terminals one owner may hold; one more is refused with `LimitReached`. */
  maxTerminalsPerOwner: positive("maxTerminalsPerOwner", defaults.maxTerminalsPerOwner),
  /** Live background tasks (background sends, one-shot runs) one owner may hold; one more is `LimitReached`. */
  maxTasksPerOwner: positive("maxTasksPerOwner", defaults.maxTasksPerOwner),
  /**
   * Open (and opening) terminals of every owner together; one more is `LimitReached` (scope `server`). The
   * last sixteenth of them is kept for owners who hold none, so that many owners of one client cannot lock
   * out everyone else.
   */
  maxTerminals: positive("maxTerminals", defaults.maxTerminals),
  /** Live background tasks of every owner together; one more is `LimitReached` (scope `server`). */
  maxTasks: positive("maxTasks", defaults.maxTasks),
  /**
   * At most this many processes and threads in one session (or one-shot run), all of its tree together
   * (cgroup `pids.max`, where the host delegates the controller). 0: no limit.
   */
  pidsMax: nonNegative("pidsMax", defaults.pidsMax),
  /**
   * At most this much memory for one session's tree (cgroup `memory.max`, where the host delegates the
   * controller), in bytes. Default: half of the host's memory. 0: no limit.
   */
  memoryMaxBytes: Schema.optional(NonNegative.pipe(Schema.annotations({ title: "memoryMaxBytes" }))),
  /** A person's control lease (the live view) ends after this long without their input: 5 min. */
  controlIdleMs: positive("controlIdleMs", defaults.controlIdleMs),
  /** Record every session (asciicast v2), not only those opened with `record: true`. */
  recordAll: Schema.optionalWith(Schema.Boolean, { default: () => defaults.recordAll }),
  /** Recordings include input events (`i`), what a person typed with echo off redacted to its length. */
  recordInput: Schema.optionalWith(Schema.Boolean, { default: () => defaults.recordInput }),
  /** A recording stops (and says so) once its file would pass this many bytes: 64 MiB. */
  recordingMaxBytes: positive("recordingMaxBytes", defaults.recordingMaxBytes),
  /** All recordings together take at most this many bytes (older ones are removed first): 1 GiB. */
  recordingsMaxBytes: positive("recordingsMaxBytes", defaults.recordingsMaxBytes),
  /** A finished recording is removed once it is this old (ms): 30 days. */
  recordingsMaxAgeMs: positive("recordingsMaxAgeMs", defaults.recordingsMaxAgeMs)
})

/**
 * Validated settings.
 *
 * @since 0.1.0
 */
export type TerminalConfig = typeof TerminalConfigSchema.Type

/**
 * The input form of the settings.
 *
 * @since 0.1.0
 */
export type TerminalConfigInput = typeof TerminalConfigSchema.Encoded

const crossCheck = (config: TerminalConfig): InvalidConfig | undefined => {
  if (config.handoffGraceMs < config.pollIntervalMs) {
    return new InvalidConfig({
      field: "handoffGraceMs",
      reason: `must be at least pollIntervalMs (${config.pollIntervalMs}), got ${config.handoffGraceMs}`
    })
  }
  if (config.maxReadBytes > config.scrollbackMaxBytes) {
    return new InvalidConfig({
      field: "maxReadBytes",
      reason: `must not exceed scrollbackMaxBytes (${config.scrollbackMaxBytes}), got ${config.maxReadBytes}`
    })
  }
  if (config.maxResultBytes < 64) {
    return new InvalidConfig({ field: "maxResultBytes", reason: `must be at least 64, got ${config.maxResultBytes}` })
  }
  if (config.cols < bounds.cols.min || config.rows < bounds.rows.min) {
    return new InvalidConfig({
      field: config.cols < bounds.cols.min ? "cols" : "rows",
      reason: `a terminal needs at least ${bounds.cols.min} columns and ${bounds.rows.min} rows`
    })
  }
  if (config.cols > bounds.cols.max || config.rows > bounds.rows.max) {
    return new InvalidConfig({
      field: config.cols > bounds.cols.max ? "cols" : "rows",
      reason: `a terminal has at most ${bounds.cols.max} columns and ${bounds.rows.max} rows`
    })
  }
  return undefined
}

/**
 * Decode and check settings; an invalid value fails with `InvalidConfig` naming the field.
 *
 * @since 0.1.0
 */
export const make = (input: TerminalConfigInput = {}): Effect.Effect<TerminalConfig, InvalidConfig> =>
  Schema.decodeUnknown(TerminalConfigSchema)(input).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return new InvalidConfig({
        field: issue?.path.join(".") || "config",
        reason: issue?.message ?? "does not match the schema"
      })
    }),
    Effect.flatMap((config) => {
      const invalid = crossCheck(config)
      return invalid === undefined ? Effect.succeed(config) : Effect.fail(invalid)
    })
  )

/**
 * The settings a `PtyService` runs with.
 *
 * @since 0.1.0
 */
export class TerminalSettings extends Context.Tag("@agent-terminal/core/TerminalSettings")<
  TerminalSettings,
  TerminalConfig
>() {}

/**
 * Provide validated settings; fails the layer with `InvalidConfig` when they are not.
 *
 * @since 0.1.0
 */
export const layer = (input: TerminalConfigInput = {}): Layer.Layer<TerminalSettings, InvalidConfig> =>
  Layer.effect(TerminalSettings, make(input))
