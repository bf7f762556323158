/**
 * The model-facing contract (DESIGN.md §12): each tool's name, description, parameters, result and
 * errors, built with `@effect/ai` so JSON Schemas, validation and MCP registration come from one place.
 *
 * @since 0.1.0
 */
import { Errors, Exec, Session, TaskRuntime } from "@agent-terminal/core"
import { Tool, Toolkit } from "@effect/ai"
import * as Schema from "effect/Schema"

const sessionId = Session.IdString.annotations({ description: "The session's id, as returned by terminal_open." })

const describe = (lines: ReadonlyArray<string>) => lines.join(" ")

const waitFor = Schema.optional(Session.WaitFor.annotations({
  description: "Also return as soon as the output since this call began shows this (waitReason \"matched\", " +
    "with match: the text and a regex's groups): {\"text\": \"...\"}, {\"regex\": \"port (\\\\d+)\", " +
    "\"flags\": \"i\"} (JavaScript syntax, run by RE2: no backreferences or lookaround), or {\"screenStableMs\": 500} (the screen has not " +
    "changed for that long: a full-screen program has drawn). The prompt, stdin_read, an exit and the timeout " +
    "still end the wait first if they come first; silence does not (unless idleMs is given)."
}))

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
      "Open a persistent interactive terminal session (a bash shell by default) whose state — working directory,",
      "exported variables, a running REPL or debugger — survives between calls. Use a terminal only when you need",
      "that state or interactive input; close sessions you no longer need (terminal_close). Returns the sessionId,",
      "the shell, and the initial screen (motd)."
    ]),
    parameters: {
      type: Schema.optional(Session.SessionType.annotations({
        description: "\"shell\" (default): an integrated shell; \"command\": run argv directly on the terminal."
      })),
      shell: Schema.optional(Schema.String.annotations({
        description: "For type \"shell\": bash (the default unless the server is configured otherwise), zsh, fish " +
          "or pwsh, or a path to one (/usr/bin/zsh). Each reports its prompt, exit codes and continuation " +
          "prompts exactly. Any other shell is refused; run it as type \"command\" with argv instead."
      })),
      name: Schema.optional(Session.Name.annotations({
        description: "A name unique among your open sessions (1-128 characters)."
      })),
      cwd: Schema.optional(Session.Path.annotations({ description: "Working directory (must exist)." })),
      argv: Schema.optional(
        Session.Argv.annotations({ description: "For type \"command\": the program and its arguments." })
      ),
      cols: Schema.optional(Session.Columns.annotations({ description: "Terminal width (20-1000; default 160)." })),
      rows: Schema.optional(Session.Rows.annotations({ description: "Terminal height (5-500; default 40)." })),
      record: Schema.optional(Schema.Boolean.annotations({
        description: "Record the session (asciicast v2: output, resizes, a marker at each send), for people " +
          "to replay in the live view."
      }))
    },
    success: Session.OpenResult,
    failure: Errors.TerminalError
  }),
  { title: "Open a terminal", readOnly: false, destructive: false, idempotent: false }
)

/**
 * `terminal_send`: type into a session and wait until the program is ready for more input.
 *
 * @since 0.1.0
 */
export const TerminalSend = annotate(
  Tool.make("terminal_send", {
    description: describe([
      "Send input to a session and wait until the program is ready for more: the shell prompt is back",
      "(waitReason \"prompt\", with exitCode), or the program waits reading the terminal (\"stdin_read\": a REPL,",
      "a y/n question, a password prompt). \"inferred_idle\" (silence) and \"timeout\" do NOT mean the command",
      "ended: it may still run — read later, send more, or interrupt it with terminal_signal SIGINT.",
      "Give exactly one of: text (typed, then Enter unless submit is false), keys (named keys such as \"C-c\",",
      "\"Up\", \"Enter\", \"Escape\", \"F1\", or single characters), paste (pasted as one unit). Several lines",
      "of text at the shell prompt run as one command. continuation: true means the shell waits for the rest of",
      "an unfinished command (unclosed quote, heredoc, open block): send the rest, or keys [\"C-c\"] to drop it;",
      "an unfinished multi-line text is dropped for you (nothing ran). When the result has a screen, a",
      "full-screen program (an editor, a pager) holds the terminal: look at the screen and leave it with its own",
      "keys (\"q\" for a pager, Escape then :q! Enter for vim). waitFor returns as soon as the output shows a",
      "text or regex (\"matched\", with match: a dev server's banner, a test summary) or the screen settles;",
      "steps sends several inputs in one call, each waiting for its own readiness."
    ]),
    parameters: {
      sessionId,
      text: Schema.optional(Schema.String.annotations({
        description: "Text to type, sent as its exact UTF-8 bytes. Several lines at a shell prompt go as one unit."
      })),
      keys: Schema.optional(
        Session.KeyNames.annotations({
          description: "Named keys, in order: Enter, Tab, Escape, Backspace, Delete, Insert, Space, Up/Down/Left/" +
            "Right, Home, End, PageUp, PageDown, F1-F12, with modifiers C-, M-, S- (e.g. C-c, C-d, C-w, M-b, M-x, " +
            "S-Tab, C-Up), or single characters (q, :). Arrows follow the mode the program set."
        })
      ),
      paste: Schema.optional(Schema.String.annotations({
        description: "Text pasted as one unit: bracketed paste when the program enabled it (shells, editors take " +
          "it as text, not as typed commands). Not submitted unless submit is true."
      })),
      submit: Schema.optional(Schema.Boolean.annotations({
        description: "Press Enter after the text (default true for text, false for keys and paste)."
      })),
      timeoutMs: Schema.optional(Session.Millis.annotations({
        description: "Stop waiting after this many ms (default 30000; at most 86400000); nothing is killed."
      })),
      idleMs: Schema.optional(Session.Millis.annotations({
        description: "Also return after this many ms without output, even while a command runs."
      })),
      run_in_background: Schema.optional(Schema.Boolean.annotations({
        description: "Return at once with a taskId and let the command run (builds, test suites, servers). " +
          "Follow it with task_output (wait: true blocks until it ends — no need to poll) or task_kill. With " +
          "waitFor, the first return waits for that (a server's banner) and the task runs on."
      })),
      waitFor,
      steps: Schema.optional(
        Schema.Array(Session.Step.annotations({
          description: "One input (exactly one of text, keys, paste; submit as for a send) with its own waitFor, " +
            "timeoutMs and idleMs."
        })).pipe(Schema.filter((steps) => steps.length >= 1 && steps.length <= Session.maxSteps, {
          message: () => `must be an array of 1 to ${Session.maxSteps} steps`,
          jsonSchema: { minItems: 1, maxItems: Session.maxSteps }
        })).annotations({
          description: "Instead of text/keys/paste: several inputs sent in order in one call, each waiting for " +
            "its own readiness (a REPL's lines, a login). The first step that ends by timeout, inferred_idle or " +
            "session_exit stops the rest (stoppedAt says which); the result lists each step's outcome (steps)."
        })
      )
    },
    success: Session.SendResult,
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
    description: describe([
      "Read a session's transcript (what the terminal showed, escape sequences interpreted) without sending",
      "anything: offset = lines back from the newest (0 = the latest page), count = lines. Use it to catch up",
      "on output that arrived after a send returned."
    ]),
    parameters: {
      sessionId,
      offset: Schema.optional(
        Session.LineCount.annotations({ description: "Lines back from the newest (default 0)." })
      ),
      count: Schema.optional(Session.LineCount.annotations({ description: "How many lines (default: what fits)." }))
    },
    success: Session.ReadResult,
    failure: Errors.TerminalError
  }),
  { title: "Read a terminal's transcript", readOnly: true, destructive: false, idempotent: true, openWorld: false }
)

/**
 * `terminal_signal`: signal the terminal's foreground program.
 *
 * @since 0.1.0
 */
export const TerminalSignal = annotate(
  Tool.make("terminal_signal", {
    description: describe([
      "Send a signal to the program in the foreground of a session's terminal (resolved now): SIGINT to",
      "interrupt a running command (like Ctrl-C, but a real signal, so raw-mode programs stop too), SIGTSTP",
      "to suspend, SIGCONT to resume, SIGTERM/SIGHUP/SIGQUIT/SIGKILL to end it. SIGKILL is refused when",
      "the shell itself is in the foreground: close the session instead."
    ]),
    parameters: {
      sessionId,
      signal: Session.SignalName.annotations({
        description: "SIGINT interrupts (like Ctrl-C); SIGTSTP suspends, SIGCONT resumes; the others end the program."
      })
    },
    success: Session.SignalResult,
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
    description: describe([
      "Close a session: its shell and every process it started (background jobs, daemons) are ended.",
      "Closing an already closed session is not an error."
    ]),
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
    description: "List your open terminal sessions: id, name, type, pid, status, working directory. Each one " +
      "holds a shell and its processes: close the ones you no longer need (terminal_close).",
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
    description: describe([
      "Resize a session's terminal (columns x rows): the program gets SIGWINCH and redraws. Refused with",
      "HumanInControl while a person holds the terminal's control in the live view."
    ]),
    parameters: {
      sessionId,
      cols: Session.Columns.annotations({ description: "Terminal width (20-1000)." }),
      rows: Session.Rows.annotations({ description: "Terminal height (5-500)." })
    },
    success: Session.ResizeResult,
    failure: Errors.TerminalError
  }),
  { title: "Resize a terminal", readOnly: false, destructive: false, idempotent: true, openWorld: false }
)

/**
 * `terminal_request_human`: ask a person to take over a session (shown in the live view).
 *
 * @since 0.2.0
 */
export const TerminalRequestHuman = annotate(
  Tool.make("terminal_request_human", {
    description: describe([
      "Ask a person to take over a session's terminal in the live view (a password or passphrase you must not",
      "see, a login, a decision): the request shows in their page with your reason. Returns a taskId at once,",
      "or with wait: true blocks until the person hands the terminal back (or timeoutMs). Wait with",
      "task_output (wait: true) — no polling; task_kill withdraws the request. While the person holds the",
      "control your terminal_send/keys/signals get HumanInControl; terminal_read still works. Your next send",
      "after the hand-back starts with a note of what they did and what the terminal showed. What they type",
      "with echo off never reaches you."
    ]),
    parameters: {
      sessionId,
      reason: Schema.String.annotations({
        description: "What you need the person to do, shown to them (1-1024 characters)."
      }),
      wait: Schema.optional(Schema.Boolean.annotations({
        description: "Block until the hand-back or timeoutMs (default false: return the taskId at once)."
      })),
      timeoutMs: Schema.optional(Session.Millis.annotations({ description: "With wait: give up after this many ms." }))
    },
    success: Session.HumanRequestResult,
    failure: Errors.TerminalError
  }),
  { title: "Ask a person to take over", readOnly: false, destructive: false, idempotent: false, openWorld: true }
)

const taskId = Session.IdString.annotations({ description: "The task's id, as returned with run_in_background." })

/**
 * What `task_output` and `task_kill` return: the task's status and the output that is new since the
 * previous call; when it ended, the send's result.
 *
 * @since 0.1.0
 */
export const TaskView = Schema.Struct({
  taskId: Schema.String,
  kind: Schema.String,
  label: Schema.String,
  sessionId: Schema.optional(Schema.String),
  status: TaskRuntime.TaskStatus,
  output: Schema.String,
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Struct({ _tag: Schema.String, message: Schema.String })),
  /** What `waitFor` found in the output since the previous look. */
  match: Schema.optional(Session.Match),
  elapsedMs: Schema.Number
})

/**
 * `task_output`: what a background task printed since the last call, optionally waiting for it to end.
 *
 * @since 0.1.0
 */
export const TaskOutput = annotate(
  Tool.make("task_output", {
    description: describe([
      "Get a background task's new output (only what appeared since your last task_output call) and its status:",
      "running, waiting_input (it waits for input on its terminal: answer with terminal_send or the process",
      "tool), completed (with the send's result: waitReason, exitCode), failed, or killed. With wait: true it",
      "blocks until the task ends or timeoutMs passes — use that instead of polling."
    ]),
    parameters: {
      taskId,
      wait: Schema.optional(Schema.Boolean.annotations({ description: "Block until the task ends." })),
      timeoutMs: Schema.optional(Session.Millis.annotations({ description: "Give up waiting after this many ms." })),
      waitFor: Schema.optional(Session.WaitFor.annotations({
        description: "Block until the output new since your last look shows this (match in the result), the " +
          "task waits for input, or it ends: {\"text\": ...}, {\"regex\": ..., \"flags\"?: ...} or " +
          "{\"screenStableMs\": ...}, as for terminal_send."
      }))
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
    description: "Stop a background task: its command gets a real SIGINT (like Ctrl-C) and the task ends as killed.",
    parameters: { taskId },
    success: TaskView,
    failure: Errors.TerminalError
  }),
  { title: "Kill a background task", readOnly: false, destructive: true, idempotent: true, openWorld: false }
)

const millis = (description: string) => Schema.optional(Session.Millis.annotations({ description }))

/**
 * `exec`: run a one-shot command under a timeout and a no-output watchdog, as a task when it runs long.
 *
 * @since 0.1.0
 */
export const ExecTool = annotate(
  Tool.make("exec", {
    description: describe([
      "Run a one-shot command that needs no state between calls (a build, a test suite, a script, git, grep)",
      "without opening a session. For state (cd, exported variables, a virtualenv, a REPL, a debugger) use",
      "terminal_open and terminal_send instead. Give command (a shell command line) or argv (a program and its",
      "arguments, run as given, no shell). mode \"pty\" (default for command) runs it on its own terminal:",
      "output as a person would see it, prompts detected (status waiting_input); mode \"child\" (default for",
      "argv) runs it with pipes: plain stdout and stderr. The call waits up to yieldMs (default 30000): a",
      "command still running then returns its output so far and a taskId and keeps running — follow it with",
      "the process tool (action \"poll\" with wait: true blocks until it ends, no need to poll repeatedly;",
      "\"submit\" answers a prompt; \"kill\" stops it). background: true returns a taskId at once (servers,",
      "watchers, long builds). timeoutMs (default 30 min) and noOutputTimeoutMs (default 10 min without output)",
      "kill the whole process tree (reason timeout / no_output, with the output collected so far); 0 turns a",
      "limit off (a server). Whatever the command leaves running in the background is ended when it exits."
    ]),
    parameters: {
      command: Schema.optional(Schema.String.annotations({
        description: "A shell command line (run with bash -c). Give command or argv."
      })),
      argv: Schema.optional(
        Session.Argv.annotations({
          description: "The program and its arguments, passed as they are (no shell, no quoting needed)."
        })
      ),
      mode: Schema.optional(Exec.Mode.annotations({
        description: "\"pty\": on its own terminal; \"child\": with pipes. Default: pty for command, child for argv."
      })),
      cwd: Schema.optional(Session.Path.annotations({ description: "Working directory (must exist)." })),
      timeoutMs: millis("Kill the process tree after this many ms (default 1800000; 0: no limit)."),
      noOutputTimeoutMs: millis("Kill the process tree after this many ms without output (default 600000; 0: off)."),
      yieldMs: millis(
        "Return after this many ms with the output so far and a taskId if still running (default 30000)."
      ),
      background: Schema.optional(Schema.Boolean.annotations({
        description: "Return a taskId at once and let the command run (follow it with the process tool). With " +
          "waitFor, return once the output shows it (a server's banner: match), within yieldMs."
      })),
      waitFor: Schema.optional(Session.WaitFor.annotations({
        description: "With background: wait for this in the output before returning ({\"text\": ...}, " +
          "{\"regex\": ..., \"flags\"?: ...} or {\"screenStableMs\": ...}, as for terminal_send)."
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
      "Follow up on your tasks (commands started by exec; background sends too). action: \"list\" your tasks;",
      "\"poll\" a task's status and the output that is new since your last look — with wait: true it blocks",
      "until the task ends, waits for input, or timeoutMs (default 30000) passes, so never poll in a loop",
      "without it; \"log\" pages through the full output (offset = lines back from the newest, count = lines);",
      "\"write\" sends text as is, \"submit\" sends text then Enter (alone: just Enter), \"paste\" pastes text,",
      "\"keys\" sends named keys (C-c, Up, Enter…; pty mode only) — eof: true then ends the input (Ctrl-D,",
      "or closes stdin on pipes); \"kill\" ends the task (its whole process tree) and returns its last output;",
      "\"remove\" kills it if needed and forgets it. Tasks live in memory: they do not survive a restart."
    ]),
    parameters: {
      action: ProcessAction,
      taskId: Schema.optional(Session.IdString.annotations({ description: "The task's id (every action but list)." })),
      wait: Schema.optional(Schema.Boolean.annotations({ description: "poll: block until there is news." })),
      timeoutMs: millis("poll with wait: give up waiting after this many ms (default 30000)."),
      offset: Schema.optional(
        Session.LineCount.annotations({ description: "log: lines back from the newest (default 0)." })
      ),
      count: Schema.optional(
        Session.LineCount.annotations({ description: "log: how many lines (default: what fits)." })
      ),
      text: Schema.optional(
        Schema.String.annotations({ description: "write / submit / paste: the text (exact UTF-8)." })
      ),
      keys: Schema.optional(
        Session.KeyNames.annotations({ description: "keys: named keys in order (C-c, Up, Enter, Tab…)." })
      ),
      eof: Schema.optional(Schema.Boolean.annotations({
        description: "write / submit / paste / keys: end the input afterwards (end of file)."
      }))
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
