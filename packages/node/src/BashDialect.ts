/**
 * The bash integration: `bash --noprofile --norc -i` with a prompt hook that reports every prompt
 * through our markers, carrying the session's nonce and the exit status, and re-asserts the controlled
 * prompt each time (a user's `PS1=...` cannot break readiness).
 *
 * @since 0.1.0
 */
import { ShellDialect } from "@agent-terminal/core"
import { ShellMarkers } from "@agent-terminal/terminal"
import * as Layer from "effect/Layer"

/**
 * The prompt a session shows; readiness requires exactly this text between the prompt markers.
 *
 * @since 0.1.0
 */
export const promptText = "$ "

const osc = (kind: ShellMarkers.MarkerKind, nonce: string, extra?: string) =>
  `\\033]${ShellMarkers.payload(kind, nonce, extra)}\\007`

/**
 * The init script, run once by the first `PROMPT_COMMAND` (bash reads no rc file): it defines the hook,
 * installs it, hides the integration variables from child processes, and turns off history expansion so
 * `!` in a command is sent verbatim.
 *
 * @since 0.1.0
 */
export const initScript = (nonce: string): string => {
  // The prompt-start marker is in the prompt itself, with `$?` (the hook hands the status back as it
  // returns): readline writes the prompt in one piece, so the prompt costs one write and one read less than a
  // marker printed by the hook, and a prompt readline redraws (a resize, C-l) comes with both markers, as
  // zsh's and fish's do.
  const ps1 = `\\[${osc("D", nonce, "$?")}\\]${promptText}\\[${osc("B", nonce)}\\]`
  const ps2 = `\\[${osc("P", nonce)}\\]> `
  const ps0 = osc("C", nonce)
  return [
    `__agent_terminal_prompt() {`,
    `  local __agent_terminal_status=$?`,
    `  PS1='${ps1}'`,
    `  PS2='${ps2}'`,
    `  PS0='${ps0}'`,
    `  return $__agent_terminal_status`,
    `}`,
    `unset AGENT_TERMINAL_INIT`,
    `export -n PROMPT_COMMAND`,
    `PROMPT_COMMAND=__agent_terminal_prompt`,
    `set +H`,
    `unset HISTFILE`,
    `shopt -s checkwinsize`,
    `__agent_terminal_prompt`
  ].join("\n")
}

/**
 * The bash dialect.
 *
 * @since 0.2.0
 */
export const dialect: ShellDialect.Dialect = {
  name: "bash",
  promptText,
  launch: ({ nonce, shell }) => ({
    file: shell,
    args: ["--noprofile", "--norc", "-i"],
    env: {
      AGENT_TERMINAL_INIT: initScript(nonce),
      PROMPT_COMMAND: "eval \"$AGENT_TERMINAL_INIT\""
    }
  })
}

/**
 * The bash dialect as the one `ShellDialect` of a program.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<ShellDialect.ShellDialect> = Layer.succeed(ShellDialect.ShellDialect, dialect)
