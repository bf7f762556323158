/**
 * The model-facing contract (docs/tools.md): each tool's name, description, parameters, result and
 * errors, built with `@effect/ai` so JSON Schemas, validation and MCP registration come from one place.
 *
 * @since 0.1.0
 */
import { Errors, Exec, PtyService, Session, TaskRuntime } from "@agent-terminal/core"
import { Tool, Toolkit } from "@effect/ai"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"

/** A struct's fields, each optional (one that is already stays as it is). */
const optionalFields = <F extends Schema.Struct.Fields>(
  fields: F
): { readonly [K in keyof F]: Schema.optional<Schema.Schema.Any> } =>
  Object.fromEntries(
    Object.entries(fields).map((
      [key, field]
    ) => [key, Schema.isPropertySignature(field) ? field : Schema.optional(field as Schema.Schema.Any)])
  ) as any

const sessionId = Session.IdString.annotations({ description: "From terminal_open." })

const describe = (lines: ReadonlyArray<string>) => lines.join(" ")

/** `waitFor`'s shape, the same wherever it is taken (a send, a step, a task, exec). */
const waitForSchema = Session.WaitFor

const annotate = <T extends { readonly annotate: (tag: any, value: any) => T }>(
  tool: T,
  hints: {
    readonly readOnly: boolean
    readonly destructive: boolean
    readonly idempotent: boolean
    readonly title: string
    /** false: the tool only touches this server's own sessions and tasks (default true: it runs programs). */
    readonly openWorld?: boolean
  }
): T =>
  tool
    .annotate(Tool.Title, hints.title)
    .annotate(Tool.Readonly, hints.readOnly)
    .annotate(Tool.Destructive, hints.destructive)
    .annotate(Tool.Idempotent, hints.idempotent)
    .annotate(Tool.OpenWorld, hints.openWorld ?? true)

/**
 * `terminal_open`: start a persistent shell (or a command) on its own terminal.
 *
 * @since 0.1.0
 */
export const TerminalOpen = annotate(
  Tool.make("terminal_open", {
    description: describe([
      "Open a persistent terminal (bash by default): cwd, variables, a running REPL or debugger survive between",
      "calls. Optional: terminal_send without a sessionId opens your default terminal. Returns the sessionId and",
      "the first screen (motd)."
    ]),
    parameters: {
      type: Schema.optional(Session.SessionType.annotations({
        description: "\"command\": run argv instead of a shell."
      })),
      shell: Schema.optional(Schema.String.annotations({
        description: "bash (default), zsh, fish, pwsh, or a path to one."
      })),
      name: Schema.optional(Session.Name.annotations({ description: "Unique among your terminals." })),
      cwd: Schema.optional(Session.Path),
      argv: Schema.optional(Session.Argv),
      cols: Schema.optional(Session.Columns),
      rows: Schema.optional(Session.Rows),
      record: Schema.optional(Schema.Boolean.annotations({ description: "Record it for replay in the live view." }))
    },
    success: Session.OpenResult,
    failure: Errors.TerminalError
  }),
  { title: "Open a terminal", readOnly: false, destructive: false, idempotent: false }
)

/**
 * What `terminal_send` returns: the send's result, and — when it went to the owner's default terminal (no
 * `sessionId` given) — that terminal's id, with its first screen when it was opened for this send.
 *
 * @since 0.4.0
 */
export const SendToolResult = Schema.Struct({
  ...Session.SendResult.fields,
  sessionId: Schema.optional(Schema.String),
  motd: Schema.optional(Schema.String)
})

/**
 * `terminal_send`: type into a session and wait until the program is ready for more input.
 *
 * @since 0.1.0
 */
export const TerminalSend = annotate(
  Tool.make("terminal_send", {
    description: describe([
      "Type into a terminal and wait until the program is ready for more. waitReason: prompt (the command",
      "ended: exitCode), stdin_read (it waits for input: a REPL, a question, a password), matched (waitFor),",
      "inferred_idle or timeout (NOT ended: it may still run; read later, send more, or terminal_signal),",
      "session_exit. Give one of text (Enter added unless submit is false), keys, paste or steps. Without a",
      "sessionId: your default terminal, opened on first use. continuation: the shell waits for the rest of a",
      "command. A screen in the result: a full-screen program (vim, less) holds the terminal; answer with its keys."
    ]),
    parameters: {
      sessionId: Schema.optional(Session.IdString.annotations({
        description: "From terminal_open; omitted: your default terminal."
      })),
      text: Schema.optional(Schema.String.annotations({
        description: "Typed as exact UTF-8; several lines at a shell prompt run as one command."
      })),
      keys: Schema.optional(Session.KeyNames.annotations({
        description: "Named keys: Enter, Tab, Escape, Up, PageDown, F1, C-c, C-d, M-x, S-Tab, or single characters."
      })),
      paste: Schema.optional(Schema.String.annotations({
        description: "Pasted as one unit (bracketed when the program enabled it), not submitted."
      })),
      submit: Schema.optional(Schema.Boolean.annotations({ description: "Enter after it (default: text only)." })),
      timeoutMs: Schema.optional(Session.Millis.annotations({
        description: "Stop waiting after this (default 30000); nothing is killed."
      })),
      idleMs: Schema.optional(Session.Millis.annotations({ description: "Also return after this long silent." })),
      run_in_background: Schema.optional(Schema.Boolean.annotations({
        description: "Return a taskId at once; follow with task_output (wait: true blocks) or task_kill."
      })),
      waitFor: Schema.optional(waitForSchema.annotations({
        description: "Also return (matched) when the output shows {text} or {regex, flags} (RE2: no lookaround or " +
          "backreferences), the screen is still " +
          "for {screenStableMs}, or a process listens: {listening: port} or {listening: true}."
      })),
      steps: Schema.optional(
        Schema.Array(Session.Step).pipe(
          Schema.filter((steps) => steps.length >= 1 && steps.length <= Session.maxSteps, {
            message: () => `must be an array of 1 to ${Session.maxSteps} steps`,
            jsonSchema: { minItems: 1, maxItems: Session.maxSteps }
          })
        ).annotations({
          description: "Several inputs in one call, each waiting for its own readiness; the first to end by " +
            "timeout, inferred_idle or session_exit stops the rest."
        })
      )
    },
    success: SendToolResult,
    failure: Errors.TerminalError
  }),
  { title: "Send input to a terminal", readOnly: false, destructive: true, idempotent: false }
)

/**
 * `terminal_read`: page through a session's transcript.
 *
 * @since 0.1.0
 */
export const TerminalRead = annotate(
  Tool.make("terminal_read", {
    description: "Page a terminal's transcript without sending anything: offset = lines back from the newest (0: " +
      "the latest), count = lines.",
    parameters: {
      sessionId,
      offset: Schema.optional(Session.LineCount),
      count: Schema.optional(Session.LineCount)
    },
    success: Session.ReadResult,
    failure: Errors.TerminalError
  }),
  { title: "Read a terminal's transcript", readOnly: true, destructive: false, idempotent: true, openWorld: false }
)

/**
 * What `terminal_signal` returns: where the signal went and, when it waited (the default), how the wait after
 * it ended — the fields of a send's result (`waitReason`, `exitCode`, …).
 *
 * @since 0.4.0
 */
export const SignalToolResult = Schema.Struct({
  ...Session.SignalResult.fields,
  ...optionalFields(Struct.omit(Session.SendResult.fields, "signalled", "steps", "stoppedAt", "taskId"))
})

/**
 * `terminal_signal`: signal the terminal's foreground program, then wait for readiness.
 *
 * @since 0.1.0
 */
export const TerminalSignal = annotate(
  Tool.make("terminal_signal", {
    description: describe([
      "Signal a terminal's foreground program (SIGINT: like Ctrl-C but a real signal; SIGTSTP, SIGCONT: suspend,",
      "resume; SIGTERM, SIGHUP, SIGQUIT, SIGKILL: end it), then wait for readiness as terminal_send does (the",
      "prompt and exit code 130 after SIGINT). SIGKILL at the shell itself is refused: close the terminal instead."
    ]),
    parameters: {
      sessionId,
      signal: Session.SignalName,
      wait: Schema.optional(Schema.Boolean.annotations({ description: "Wait for readiness (default true)." })),
      timeoutMs: Schema.optional(
        Session.Millis.annotations({ description: "Stop waiting after this (default 30000)." })
      )
    },
    success: SignalToolResult,
    failure: Errors.TerminalError
  }),
  {
    title: "Signal a terminal's foreground program",
    readOnly: false,
    destructive: true,
    idempotent: false,
    openWorld: false
  }
)

/**
 * `terminal_close`: end a session and everything it started.
 *
 * @since 0.1.0
 */
export const TerminalClose = annotate(
  Tool.make("terminal_close", {
    description: "End a terminal and every process it started (closing twice is fine). Optional: your terminals " +
      "end with your connection.",
    parameters: { sessionId },
    success: Session.CloseResult,
    failure: Errors.TerminalError
  }),
  { title: "Close a terminal", readOnly: false, destructive: true, idempotent: true, openWorld: false }
)

/**
 * `terminal_list`: your open sessions.
 *
 * @since 0.1.0
 */
export const TerminalList = annotate(
  Tool.make("terminal_list", {
    description: "Your terminals: id, name, pid, status, working directory, busy.",
    success: Schema.Struct({ sessions: Schema.Array(Session.SessionInfo) }),
    failure: Errors.TerminalError
  }),
  { title: "List terminals", readOnly: true, destructive: false, idempotent: true, openWorld: false }
)

/**
 * `terminal_resize`: change a session's terminal size.
 *
 * @since 0.2.0
 */
export const TerminalResize = annotate(
  Tool.make("terminal_resize", {
    description: "Resize a terminal; its program redraws.",
    parameters: { sessionId, cols: Session.Columns, rows: Session.Rows },
    success: Session.ResizeResult,
    failure: Errors.TerminalError
  }),
  { title: "Resize a terminal", readOnly: false, destructive: false, idempotent: true, openWorld: false }
)

/**
 * `terminal_snapshot`: a terminal's screen now, without sending anything or waiting.
 *
 * @since 0.4.0
 */
export const TerminalSnapshot = annotate(
  Tool.make("terminal_snapshot", {
    description: "A terminal's screen now, sending nothing; works while a send runs.",
    parameters: { sessionId },
    success: PtyService.SnapshotResult,
    failure: Errors.TerminalError
  }),
  { title: "Look at a terminal", readOnly: true, destructive: false, idempotent: true, openWorld: false }
)

/**
 * `terminal_request_human`: ask a person to take over a session (shown in the live view).
 *
 * @since 0.2.0
 */
export const TerminalRequestHuman = annotate(
  Tool.make("terminal_request_human", {
    description: describe([
      "Ask a person to take over a terminal in the live view (a secret you must not see, a login, a decision).",
      "Returns a taskId; task_output with wait: true blocks until they hand it back (or wait here). Meanwhile your",
      "input gets HumanInControl; your next send starts with what they did. Secrets they type never reach you."
    ]),
    parameters: {
      sessionId,
      reason: Schema.String.annotations({ description: "Shown to the person." }),
      wait: Schema.optional(Schema.Boolean.annotations({ description: "Block until the hand-back or timeoutMs." })),
      timeoutMs: Schema.optional(Session.Millis)
    },
    success: Session.HumanRequestResult,
    failure: Errors.TerminalError
  }),
  { title: "Ask a person to take over", readOnly: false, destructive: false, idempotent: false, openWorld: true }
)

const taskId = Session.IdString

/**
 * What `task_output` and `task_kill` return: the task's status and the output that is new since the
 * previous call; when it ended, the send's result (`TaskRuntime.TaskView`, the one shape of a look at a task).
 *
 * @since 0.1.0
 */
export const TaskView = TaskRuntime.TaskView

/**
 * `task_output`: what a background task printed since the last call, optionally waiting for it to end.
 *
 * @since 0.1.0
 */
export const TaskOutput = annotate(
  Tool.make("task_output", {
    description: describe([
      "A background task's output since your last look, and its status: running, waiting_input, completed (with",
      "the send's result), failed, killed. wait: true blocks until it ends; waitFor until the output shows",
      "something (as terminal_send). Never poll without one of them."
    ]),
    parameters: {
      taskId,
      wait: Schema.optional(Schema.Boolean),
      timeoutMs: Schema.optional(Session.Millis),
      waitFor: Schema.optional(waitForSchema)
    },
    success: TaskView,
    failure: Errors.TerminalError
  }),
  { title: "Read a background task", readOnly: true, destructive: false, idempotent: false, openWorld: false }
)

/**
 * `task_kill`: interrupt a background task.
 *
 * @since 0.1.0
 */
export const TaskKill = annotate(
  Tool.make("task_kill", {
    description: "Stop a background task with a real SIGINT.",
    parameters: { taskId },
    success: TaskView,
    failure: Errors.TerminalError
  }),
  { title: "Kill a background task", readOnly: false, destructive: true, idempotent: true, openWorld: false }
)

const millis = (description?: string) =>
  Schema.optional(description === undefined ? Session.Millis : Session.Millis.annotations({ description }))

/**
 * `exec`: run a one-shot command under a timeout and a no-output watchdog, as a task when it runs long.
 *
 * @since 0.1.0
 */
export const ExecTool = annotate(
  Tool.make("exec", {
    description: describe([
      "Run a one-shot command that needs no terminal state (a build, tests, git, grep): command (bash -c) or",
      "argv (no shell). mode: pty (default for command: on a terminal) or child (default for argv: pipes). Waits",
      "up to yieldMs (30000), then returns the output so far and a taskId for the process tool; background: true",
      "returns at once. timeoutMs (30 min) and noOutputTimeoutMs (10 min) kill the process tree; 0 turns one off.",
      "Long output keeps its head and tail (process log pages the rest)."
    ]),
    parameters: {
      command: Schema.optional(Schema.String),
      argv: Schema.optional(Session.Argv),
      mode: Schema.optional(Exec.Mode),
      cwd: Schema.optional(Session.Path),
      timeoutMs: millis(),
      noOutputTimeoutMs: millis(),
      yieldMs: millis(),
      background: Schema.optional(Schema.Boolean),
      waitFor: Schema.optional(waitForSchema.annotations({
        description: "With background: return once the output shows this or a process listens (as terminal_send)."
      }))
    },
    success: Exec.ExecResult,
    failure: Errors.TerminalError
  }),
  { title: "Run a command", readOnly: false, destructive: true, idempotent: false }
)

/**
 * Every action of the `process` tool.
 *
 * @since 0.1.0
 */
export const ProcessAction = Schema.Literal(
  "list",
  "poll",
  "log",
  "write",
  "keys",
  "paste",
  "submit",
  "kill",
  "remove"
)

/**
 * What the `process` tool returns, by action.
 *
 * @since 0.1.0
 */
export const ProcessResult = Schema.Union(
  Schema.Struct({ action: Schema.Literal("list"), tasks: Schema.Array(Exec.TaskSummary) }),
  Schema.Struct({ action: Schema.Literal("poll", "kill"), ...Exec.ExecResult.fields }),
  Schema.Struct({ action: Schema.Literal("log"), ...Exec.LogResult.fields }),
  Schema.Struct({ action: Schema.Literal("write", "keys", "paste", "submit"), ...Exec.WriteResult.fields }),
  Schema.Struct({ action: Schema.Literal("remove"), ...Exec.RemoveResult.fields })
)

/**
 * `process`: follow-ups on tasks (runs started by `exec`, and background sends).
 *
 * @since 0.1.0
 */
export const ProcessTool = annotate(
  Tool.make("process", {
    description: describe([
      "Follow up on your tasks (exec runs, background sends). action: list; poll (new output and status; wait:",
      "true blocks until there is news); log (pages the whole output: offset = lines back from the newest,",
      "count); write (text as is), submit (text, then Enter), paste, keys (pty only), then eof: true ends the",
      "input; kill (the whole process tree); remove (kill and forget)."
    ]),
    parameters: {
      action: ProcessAction,
      taskId: Schema.optional(Session.IdString),
      wait: Schema.optional(Schema.Boolean),
      timeoutMs: millis(),
      offset: Schema.optional(Session.LineCount),
      count: Schema.optional(Session.LineCount),
      text: Schema.optional(Schema.String),
      keys: Schema.optional(Session.KeyNames),
      eof: Schema.optional(Schema.Boolean)
    },
    success: ProcessResult,
    failure: Errors.TerminalError
  }),
  { title: "Follow up on a task", readOnly: false, destructive: true, idempotent: false }
)

/**
 * Every terminal tool.
 *
 * @since 0.1.0
 */
export const TerminalToolkit = Toolkit.make(
  TerminalOpen,
  TerminalSend,
  TerminalRead,
  TerminalSnapshot,
  TerminalSignal,
  TerminalClose,
  TerminalList,
  TerminalResize,
  TerminalRequestHuman,
  TaskOutput,
  TaskKill,
  ExecTool,
  ProcessTool
)
