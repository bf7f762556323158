/**
 * The zsh integration: `zsh -d -i` (no global rc files) with `ZDOTDIR` pointing at the package's own
 * `shell/zsh/.zshrc`, which evaluates the integration from the environment, so no rc file of the user's
 * is read. A `precmd` hook re-asserts the prompt before every prompt (a user's `PS1=...` cannot break
 * readiness): `PS1` carries the prompt-start marker with `%?` (the last command's status, which zsh keeps
 * through its hooks) and the prompt-end marker, so a prompt zle redraws (a resize) comes with both; `PS2`
 * the continuation marker; a `preexec` hook prints the command-start marker once a command line is
 * accepted.
 *
 * @since 0.2.0
 */
import type { ShellDialect } from "@agent-terminal/core"
import { ShellMarkers } from "@agent-terminal/terminal"
import { fileURLToPath } from "node:url"

/**
 * The prompt a session shows (zsh's own `%`); readiness requires exactly this text between the prompt
 * markers.
 *
 * @since 0.2.0
 */
export const promptText = "% "

/**
 * The directory zsh takes as `ZDOTDIR`: its `.zshrc` runs the integration. It ships with the package and
 * is only read, so a read-only sandbox sees it too (it lies outside the sandbox's private `/tmp`).
 *
 * @since 0.2.0
 */
export const zdotdir = fileURLToPath(new URL("../shell/zsh", import.meta.url))

/** A marker inside a zsh prompt: `%{…%}` tells zle it takes no room on the screen. */
const promptMarker = (kind: ShellMarkers.MarkerKind, nonce: string, extra?: string) =>
  `%{\\e]${ShellMarkers.payload(kind, nonce, extra)}\\a%}`

/**
 * The init script, evaluated once by `.zshrc`: it defines and installs the hooks, hides the integration's
 * variables from child processes (a `zsh` started inside reads the user's files as usual), and sets what
 * makes a command line mean what it means in bash: no history expansion (`!` is sent verbatim), comments
 * allowed, the emacs line editor whatever `$EDITOR` says, and no mark on a last line without a newline.
 *
 * @since 0.2.0
 */
export const initScript = (nonce: string): string => {
  // zle turns bracketed paste on only after it has drawn the prompt: the prompt does it first, so a send that
  // follows the prompt-end marker at once already finds the mode on (and goes as one paste, not line by line)
  const ps1 = `%{\\e[?2004h%}${promptMarker("D", nonce, "%?")}%% ${promptMarker("B", nonce)}`
  const ps2 = `${promptMarker("P", nonce)}> `
  return [
    `unset AGENT_TERMINAL_INIT ZDOTDIR`,
    `__agent_terminal_precmd() {`,
    `  PS1=$'${ps1}'`,
    `  PS2=$'${ps2}'`,
    `  RPS1= RPS2= PROMPT_EOL_MARK=`,
    `  setopt prompt_percent prompt_cr prompt_sp`,
    `}`,
    `__agent_terminal_preexec() {`,
    `  print -rn -- $'\\e]${ShellMarkers.payload("C", nonce)}\\a'`,
    `}`,
    `typeset -ga precmd_functions preexec_functions`,
    `precmd_functions+=(__agent_terminal_precmd)`,
    `preexec_functions+=(__agent_terminal_preexec)`,
    `unsetopt bang_hist`,
    `setopt interactive_comments`,
    `unset HISTFILE`,
    `bindkey -e`
  ].join("\n")
}

/**
 * The zsh dialect.
 *
 * @since 0.2.0
 */
export const dialect: ShellDialect.Dialect = {
  name: "zsh",
  promptText,
  promptPadding: / +$/,
  launch: ({ nonce, shell }) => ({
    file: shell,
    args: ["-d", "-i"],
    env: {
      ZDOTDIR: zdotdir,
      AGENT_TERMINAL_INIT: initScript(nonce)
    }
  })
}
