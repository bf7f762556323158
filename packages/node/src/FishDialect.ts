/**
 * The fish integration: `fish --no-config` (no config file, no `conf.d`, no universal variables of the
 * user's) with `--init-command` evaluating the integration from the environment. Before every prompt a
 * `fish_prompt` event handler re-asserts the prompt functions (a user's own `fish_prompt` cannot break
 * readiness); `fish_prompt` prints the prompt-start marker with `$status` and the prompt-end marker around
 * the prompt text; a `fish_preexec` handler prints the command-start marker. fish has no continuation
 * prompt: Enter on an incomplete command line (an unclosed quote or block) adds a line to it, and the
 * integration's Enter prints the continuation marker as it does so.
 *
 * @since 0.2.0
 */
import type { ShellDialect } from "@agent-terminal/core"
import { ShellMarkers } from "@agent-terminal/terminal"

/**
 * The prompt a session shows (the end of fish's own); readiness requires exactly this text between the
 * prompt markers.
 *
 * @since 0.2.0
 */
export const promptText = "> "

const osc = (kind: ShellMarkers.MarkerKind, nonce: string, extra?: string) =>
  `\\e]${ShellMarkers.payload(kind, nonce, extra)}\\a`

/**
 * A key no terminal sends, bound once to a repaint of the prompt: the session types it at the first prompt
 * (`startupInput`). fish's first read of its terminal can print warnings after that prompt (in a read-only
 * sandbox: no runtime directory for its universal variables), which would leave the prompt not the last
 * thing on the screen; the prompt it draws again comes after them.
 *
 * @since 0.2.0
 */
export const redrawKey = "\x1b[5999~"

const redrawKeyBinding = "\\e\\[5999~"

/**
 * The init script: the prompt and its re-assertion, the command-start marker, an Enter that reports a
 * continuation, the redraw key, bracketed paste (as fish's own interactive configuration turns it on, which
 * `--no-config` skips), no greeting, no autosuggestions, no history file, no window title (fish's default
 * `fish_title` runs twice per command line and was most of a `true` round trip: 2.0 → 0.5-1.1 ms), and the
 * integration's variable hidden from child processes.
 *
 * @since 0.2.0
 */
export const initScript = (nonce: string): string =>
  [
    `set -e AGENT_TERMINAL_INIT`,
    `set -g fish_greeting`,
    `set -g fish_history ''`,
    `set -g fish_autosuggestion_enabled 0`,
    `function fish_title; end`,
    `function __agent_terminal_prompt`,
    `  printf '${osc("D", nonce, "%s")}${promptText}${osc("B", nonce)}' $status`,
    `end`,
    `function __agent_terminal_reassert --on-event fish_prompt`,
    `  functions -e fish_prompt`,
    `  functions -c __agent_terminal_prompt fish_prompt`,
    `  function fish_right_prompt; end`,
    `  function fish_mode_prompt; end`,
    `  printf '\\e[?2004h'`,
    `end`,
    `function __agent_terminal_preexec --on-event fish_preexec`,
    `  printf '\\e[?2004l${osc("C", nonce)}'`,
    `end`,
    `function __agent_terminal_enter`,
    `  commandline --is-valid`,
    `  if test $status -eq 2`,
    `    commandline -i \\n`,
    `    printf '${osc("P", nonce)}'`,
    `  else`,
    `    commandline -f execute`,
    `  end`,
    `end`,
    `bind \\r __agent_terminal_enter`,
    `bind \\n __agent_terminal_enter`,
    `function __agent_terminal_redraw`,
    `  bind -e ${redrawKeyBinding}`,
    `  commandline -f repaint`,
    `end`,
    `bind ${redrawKeyBinding} __agent_terminal_redraw`
  ].join("\n")

/**
 * The fish dialect.
 *
 * @since 0.2.0
 */
export const dialect: ShellDialect.Dialect = {
  name: "fish",
  promptText,
  promptPadding: /\u23ce? *$/,
  launch: ({ nonce, shell }) => ({
    file: shell,
    args: ["--no-config", "--init-command", "eval $AGENT_TERMINAL_INIT"],
    env: { AGENT_TERMINAL_INIT: initScript(nonce) },
    startupInput: redrawKey
  })
}
