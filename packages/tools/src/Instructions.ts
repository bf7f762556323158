/**
 * The guide an MCP server hands a model once, in its `initialize` result (`instructions`): when a terminal
 * beats `exec`, what each `waitReason` means and what to do next, how to leave a full-screen program, how
 * to start a server and wait until it listens, and that one terminal needs no `terminal_open`. `Portable` exposes the
 * same text.
 *
 * @since 0.3.0
 */
import * as Deployment from "./Deployment.js"

/**
 * The guide for a deployment (it names only the tools the deployment exposes).
 *
 * @since 0.3.0
 */
export const text = (deployment: Deployment.Deployment = Deployment.all): string => {
  const has = (group: Deployment.Group) => deployment.tools.includes(group)
  const background = deployment.background && (has("tasks") || has("exec"))
  const lines: Array<string> = ["agent-terminal: persistent interactive terminals for agents."]
  if (has("exec") && has("terminal")) {
    lines.push(
      "- One-shot commands (a build, tests, git, grep) go to exec. A terminal is for state between calls: a cd, " +
        "exported variables, a virtualenv, a REPL or debugger, a program that asks."
    )
  }
  if (has("terminal")) {
    lines.push(
      "- terminal_send without a sessionId uses your default terminal (opened on first use): one terminal needs " +
        "no terminal_open. It returns when the program is ready, and waitReason says how you know:",
      "  prompt: the command ended (exitCode is its status). stdin_read: the program waits for your input (a REPL, " +
        "a question, a password) — answer it. matched: the output showed your waitFor; the program still runs.",
      "  inferred_idle (silence) and timeout do NOT mean it ended ([foreground: …] says what the program is " +
        "doing): read later (terminal_read), send more, or terminal_signal SIGINT, which waits for the prompt " +
        "and returns it. session_exit: the shell is gone.",
      "- Several inputs in one call: steps (each waits for its own readiness; the first that times out stops " +
        "the rest).",
      "- A result with a screen is a full-screen program (an editor, a pager, htop): read the screen and leave " +
        "with its own keys — q for a pager or htop, Escape then :q! Enter for vim — or keys [\"C-c\"].",
      "- A long output keeps its head and tail; the omission line names the terminal_read call that shows the " +
        "middle."
    )
    if (background) {
      lines.push(
        "- A server: terminal_send with run_in_background: true and waitFor {\"listening\": true} (or a port) " +
          "returns as soon as it listens (matched: match.listening names the process and port) and it keeps " +
          "running; if it fails first you get prompt and its exitCode. waitFor {\"regex\": …} waits for a banner." +
          (has("tasks")
            ? " Follow it with task_output (wait or waitFor instead of polling) and stop it with task_kill."
            : " Follow and stop it with the process tool.")
      )
    }
    lines.push(
      "- A person may take over a terminal (the live view): your sends then fail with HumanInControl until " +
        "they hand it back, and your next result starts with [human: …] and what they did. For what only a " +
        "person can do (a password, a login, a decision): terminal_request_human with your reason" +
        (has("tasks") ? ", then task_output (wait: true) until the hand-back." : ", with wait: true."),
      "- Your terminals end with your connection; close one you no longer need (terminal_close) to end its " +
        "processes sooner."
    )
  } else if (has("exec")) {
    lines.push("- exec runs one-shot commands; follow long ones with the process tool (poll with wait: true).")
  }
  return lines.join("\n")
}
