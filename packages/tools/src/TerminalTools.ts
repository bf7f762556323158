/**
 * The model-facing contract (DESIGN.md §12): each tool's name, description, parameters, result and
 * errors, built with `@effect/ai` so JSON Schemas, validation and MCP registration come from one place.
 *
 * @since 0.1.0
 */
import { Errors, Session } from "@agent-terminal/core"
import { Tool, Toolkit } from "@effect/ai"
import * as Schema from "effect/Schema"

const sessionId = Schema.String.annotations({ description: "The session's id, as returned by terminal_open." })

const describe = (lines: ReadonlyArray<string>) => lines.join(" ")

const annotate = <T extends { readonly annotate: (tag: any, value: any) => T }>(
  tool: T,
  hints: { readonly readOnly: boolean; readonly destructive: boolean; readonly idempotent: boolean; title: string }
): T =>
  tool
    .annotate(Tool.Title, hints.title)
    .annotate(Tool.Readonly, hints.readOnly)
    .annotate(Tool.Destructive, hints.destructive)
    .annotate(Tool.Idempotent, hints.idempotent)
    .annotate(Tool.OpenWorld, true)

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
      "that state or interactive input; close sessions you no longer need (terminal_close). Returns the sessionId",
      "and the initial screen (motd)."
    ]),
    parameters: {
      type: Schema.optional(Session.SessionType.annotations({
        description: "\"shell\" (default): an integrated bash; \"command\": run argv directly on the terminal."
      })),
      name: Schema.optional(Schema.String.annotations({ description: "A name unique among your open sessions." })),
      cwd: Schema.optional(Schema.String.annotations({ description: "Working directory (must exist)." })),
      argv: Schema.optional(
        Schema.Array(Schema.String).annotations({
          description: "For type \"command\": the program and its arguments."
        })
      ),
      cols: Schema.optional(Schema.Number.annotations({ description: "Terminal width (default 160)." })),
      rows: Schema.optional(Schema.Number.annotations({ description: "Terminal height (default 40)." }))
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
      "\"Up\", \"Enter\", \"Escape\", \"F1\", or single characters), paste (pasted as one unit). When the result",
      "has a screen, a full-screen program (an editor, a pager) holds the terminal: look at the screen and leave",
      "it with its own keys (\"q\" for a pager, Escape then :q! Enter for vim)."
    ]),
    parameters: {
      sessionId,
      text: Schema.optional(Schema.String.annotations({ description: "Text to type (exact UTF-8)." })),
      keys: Schema.optional(
        Schema.Array(Schema.String).annotations({
          description: "Named keys, in order: Enter, Tab, Escape, Backspace, Up/Down/Left/Right, Home, End, PageUp, " +
            "PageDown, F1-F12, with modifiers C-, M-, S- (e.g. C-c, C-d, M-x, S-Tab), or single characters."
        })
      ),
      paste: Schema.optional(Schema.String.annotations({
        description: "Text pasted as one unit (bracketed paste when the program supports it)."
      })),
      submit: Schema.optional(Schema.Boolean.annotations({
        description: "Press Enter after the text (default true for text, false for keys and paste)."
      })),
      timeoutMs: Schema.optional(Schema.Number.annotations({
        description: "Stop waiting after this many ms (default 30000); nothing is killed."
      })),
      idleMs: Schema.optional(Schema.Number.annotations({
        description: "Also return after this many ms without output, even while a command runs."
      }))
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
      offset: Schema.optional(Schema.Number.annotations({ description: "Lines back from the newest (default 0)." })),
      count: Schema.optional(Schema.Number.annotations({ description: "How many lines (default: what fits)." }))
    },
    success: Session.ReadResult,
    failure: Errors.TerminalError
  }),
  { title: "Read a terminal's transcript", readOnly: true, destructive: false, idempotent: true }
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
    parameters: { sessionId, signal: Session.SignalName },
    success: Session.SignalResult,
    failure: Errors.TerminalError
  }),
  { title: "Signal a terminal's foreground program", readOnly: false, destructive: true, idempotent: false }
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
  { title: "Close a terminal", readOnly: false, destructive: true, idempotent: true }
)

/**
 * `terminal_list`: your open sessions.
 *
 * @since 0.1.0
 */
export const TerminalList = annotate(
  Tool.make("terminal_list", {
    description: "List your open terminal sessions: id, name, type, pid, status, working directory.",
    success: Schema.Struct({ sessions: Schema.Array(Session.SessionInfo) }),
    failure: Errors.TerminalError
  }),
  { title: "List terminals", readOnly: true, destructive: false, idempotent: true }
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
  TerminalList
)
