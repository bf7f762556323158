/**
 * One-shot runs (the `exec` use case, docs/tools.md): a command started without a session, supervised
 * by an overall timeout and a no-output watchdog, whose whole process tree is ended when it finishes,
 * times out or is killed. A run waits in the foreground for a yield window and then goes on as a task of
 * the `TaskRuntime` (kind `"exec"`), or starts in the background at once; follow-ups (`poll`, `log`,
 * `write`, `kill`, `remove`, `list`) work on that task. The output collected before a timeout or a kill
 * is always returned.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import * as Errors from "./Errors.js"
import * as Operation from "./Operation.js"
import { Match, Millis, ReadResult, WaitFor } from "./Session.js"
import { TaskInput, TaskStatus } from "./TaskRuntime.js"

/**
 * Run `argv` directly with pipes (stdin, and stdout and stderr interleaved into one output): no shell, no
 * terminal. The program and its arguments are passed as they are — never joined into a string.
 *
 * @since 0.1.0
 */
export const ChildSpawn = Schema.TaggedStruct("child", {
  argv: Schema.NonEmptyArray(Schema.String)
})
/** @since 0.1.0 */
export type ChildSpawn = typeof ChildSpawn.Type

/**
 * Run a command string with the configured shell (`<shell> -c <command>`) on its own pseudo-terminal: for
 * programs that behave differently without a terminal (colours, progress bars, prompts, `isatty`).
 *
 * @since 0.1.0
 */
export const PtySpawn = Schema.TaggedStruct("pty", {
  command: Schema.String.pipe(Schema.minLength(1))
})
/** @since 0.1.0 */
export type PtySpawn = typeof PtySpawn.Type

/**
 * What to run: a discriminated union, `child` (argv, pipes) or `pty` (a shell command on a terminal).
 *
 * @since 0.1.0
 */
export const Spawn = Schema.Union(ChildSpawn, PtySpawn)
/** @since 0.1.0 */
export type Spawn = typeof Spawn.Type

/**
 * The two modes, by name.
 *
 * @since 0.1.0
 */
export const Mode = Schema.Literal("child", "pty")
/** @since 0.1.0 */
export type Mode = typeof Mode.Type

const millis = Millis

/**
 * A one-shot run. Times are in milliseconds; a missing one takes its default from the settings
 * (`execTimeoutMs`, `execNoOutputTimeoutMs`, `execYieldMs`); `0` turns a timeout off.
 *
 * - `timeoutMs`: the whole run's bound; when it passes, the process tree is killed (reason `timeout`).
 * - `noOutputTimeoutMs`: the watchdog; this long without output (or input) kills the tree (`no_output`).
 * - `yieldMs`: how long a foreground run waits before it returns with the output so far and a `taskId`.
 * - `background`: return a `taskId` at once.
 *
 * @since 0.1.0
 */
export const ExecRequest = Schema.Struct({
  spawn: Spawn,
  cwd: Schema.optional(Schema.String),
  timeoutMs: Schema.optional(millis),
  noOutputTimeoutMs: Schema.optional(millis),
  yieldMs: Schema.optional(millis),
  background: Schema.optional(Schema.Boolean),
  /** With `background`: the first return waits (at most `yieldMs`) until the output shows this. */
  waitFor: Schema.optional(WaitFor)
})
/** @since 0.1.0 */
export type ExecRequest = typeof ExecRequest.Type

/**
 * Why a run ended.
 *
 * - `exited`: the program exited by itself (`exitCode`, or `signal` when a signal ended it).
 * - `timeout`: the overall timeout passed; the tree was killed.
 * - `no_output`: the watchdog saw no output for `noOutputTimeoutMs`; the tree was killed.
 * - `killed`: it was killed on request (`kill`, `remove`, or the caller cancelled a foreground run).
 *
 * @since 0.1.0
 */
export const Reason = Schema.Literal("exited", "timeout", "no_output", "killed")
/** @since 0.1.0 */
export type Reason = typeof Reason.Type

/**
 * Where a run is: `running`, `waiting_input` (blocked reading its terminal; pty mode only), `exited` (it
 * ended by itself), `killed` (it was ended: timeout, watchdog or kill). Background sends, which the same
 * follow-ups reach, report the task statuses (`completed`, `failed`, `killed`…).
 *
 * @since 0.1.0
 */
export const Status = Schema.Literal("running", "waiting_input", "exited", "killed")
/** @since 0.1.0 */
export type Status = typeof Status.Type

/**
 * What a run (or a look at it) reports. `output` is bounded by `maxResultBytes` (head and tail kept, the
 * middle counted); in a foreground result that ended it is the whole output, in a `poll` what is new
 * since the previous look. `taskId` is there while the run goes on, and when its output was cut (page it
 * with `log`).
 *
 * @since 0.1.0
 */
export const ExecResult = Schema.Struct({
  taskId: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  mode: Schema.optional(Mode),
  status: Schema.Union(Status, TaskStatus),
  reason: Schema.optional(Reason),
  output: Schema.String,
  exitCode: Schema.optional(Schema.Number),
  signal: Schema.optional(Schema.String),
  truncated: Schema.Boolean,
  /** Pids that outlived the teardown (normally none). */
  survivors: Schema.optional(Schema.Array(Schema.Number)),
  /** What `waitFor` found (a background run's first return; the run goes on). */
  match: Schema.optional(Match),
  elapsedMs: Schema.Number
})
/** @since 0.1.0 */
export type ExecResult = typeof ExecResult.Type

/**
 * Input for a running task: exactly one of `text` (exact UTF-8), `keys` (named keys; pty mode and
 * background sends only) or `paste`; `submit` adds Enter (`\r` on a terminal, `\n` on a pipe); `eof`
 * ends the input afterwards (closes stdin in child mode, sends Ctrl-D on a terminal).
 *
 * @since 0.1.0
 */
export const ExecInput = Schema.Struct({
  ...TaskInput.fields,
  eof: Schema.optional(Schema.Boolean)
})
/** @since 0.1.0 */
export type ExecInput = typeof ExecInput.Type

/**
 * A page of a run's full output (`offset` lines back from the newest, `count` lines), like `terminal_read`.
 *
 * @since 0.1.0
 */
export const LogResult = Schema.Struct({ taskId: Schema.String, ...ReadResult.fields })
/** @since 0.1.0 */
export type LogResult = typeof LogResult.Type

/**
 * One of the owner's tasks as listed (runs and background sends), without consuming its output.
 *
 * @since 0.1.0
 */
export const TaskSummary = Schema.Struct({
  taskId: Schema.String,
  kind: Schema.String,
  label: Schema.String,
  mode: Schema.optional(Mode),
  sessionId: Schema.optional(Schema.String),
  status: Schema.Union(Status, TaskStatus),
  reason: Schema.optional(Reason),
  exitCode: Schema.optional(Schema.Number),
  elapsedMs: Schema.Number
})
/** @since 0.1.0 */
export type TaskSummary = typeof TaskSummary.Type

/**
 * What `remove` did: `removed`, or `already-removed` when the task was removed before (removing is
 * idempotent for its owner).
 *
 * @since 0.1.0
 */
export const RemoveResult = Schema.Struct({
  taskId: Schema.String,
  outcome: Schema.Literal("removed", "already-removed")
})
/** @since 0.1.0 */
export type RemoveResult = typeof RemoveResult.Type

/**
 * What `write` did: how many bytes went to the program.
 *
 * @since 0.1.0
 */
export const WriteResult = Schema.Struct({
  taskId: Schema.String,
  bytes: Schema.Number,
  eof: Schema.Boolean
})
/** @since 0.1.0 */
export type WriteResult = typeof WriteResult.Type

/**
 * Options of a look at a task: with `wait`, block until it ends, waits for input, or `timeoutMs` (default
 * the settings' `execYieldMs`) passes — never an empty immediate answer while it runs.
 *
 * @since 0.1.0
 */
export const PollOptions = Schema.Struct({
  wait: Schema.optional(Schema.Boolean),
  timeoutMs: Schema.optional(Schema.Number)
})
/** @since 0.1.0 */
export type PollOptions = typeof PollOptions.Type

/**
 * Which page of a run's full output: `offset` lines back from the newest, `count` lines.
 *
 * @since 0.4.0
 */
export const LogRequest = Schema.Struct({
  offset: Schema.optional(Schema.Number),
  count: Schema.optional(Schema.Number)
})
/** @since 0.4.0 */
export type LogRequest = typeof LogRequest.Type

const taskId = Operation.arg("taskId", Schema.String)

/**
 * The operations of the one-shot supervisor, one declaration each.
 *
 * @since 0.4.0
 * @category operations
 */
export const operations = {
  /** Start a run; in the foreground, wait up to the yield window for it to end. */
  exec: Operation.make("ExecRun", {
    args: [Operation.arg("request", ExecRequest)],
    success: ExecResult,
    errors: [Errors.SpawnFailed, Errors.SandboxUnavailable, Errors.InvalidInput, Errors.LimitReached],
    detached: true
  }),
  /** The task's status and its output since the previous look (`wait`: block until there is news). */
  poll: Operation.make("ExecPoll", {
    args: [taskId, Operation.optionalArg("options", PollOptions)],
    success: ExecResult,
    errors: [Errors.TaskNotFound, Errors.InvalidInput]
  }),
  /** A page of a run's full output. */
  log: Operation.make("ExecLog", {
    args: [taskId, Operation.arg("request", LogRequest)],
    success: LogResult,
    errors: [Errors.TaskNotFound, Errors.InvalidInput]
  }),
  /** Input for a running task (a run, or a background send waiting for input). */
  write: Operation.make("ExecWrite", {
    args: [taskId, Operation.arg("input", ExecInput)],
    success: WriteResult,
    errors: [Errors.TerminalError]
  }),
  /** End a task (a run: its whole process tree) and report how it ended; killing an ended task is a no-op. */
  kill: Operation.make("ExecKill", { args: [taskId], success: ExecResult, errors: [Errors.TaskNotFound] }),
  /** Kill if needed and forget a task. */
  remove: Operation.make("ExecRemove", { args: [taskId], success: RemoveResult, errors: [Errors.TaskNotFound] }),
  /** The owner's tasks (runs and background sends). */
  list: Operation.make("ExecList", { args: [], success: Schema.Array(TaskSummary) })
}

/**
 * The one-shot supervisor.
 *
 * @since 0.1.0
 */
export class Exec extends Context.Tag("@agent-terminal/core/Exec")<
  Exec,
  Operation.ServiceOf<typeof operations> & {
    /** The shell a command string runs with (`<shell> -c <command>`), in pty mode and for `shellArgv`. */
    readonly shell: string
  }
>() {}

/**
 * The argv of a shell command (`<shell> -c <command>`): how a command string runs in child mode.
 *
 * @since 0.1.0
 */
export const shellArgv = (shell: string, command: string): readonly [string, ...Array<string>] => [
  shell,
  "-c",
  command
]
