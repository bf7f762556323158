/**
 * How a particular shell is started so that it reports its prompts, command starts and exit statuses
 * through our markers (ShellMarkers in `@agent-terminal/terminal`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"

/**
 * The command line and environment that start an integrated shell.
 *
 * @since 0.1.0
 */
export interface ShellLaunch {
  readonly file: string
  readonly args: ReadonlyArray<string>
  /** Variables the integration needs (merged over the cleaned environment). */
  readonly env: Readonly<Record<string, string>>
  /**
   * Text typed into the shell once it waits at its first prompt (ours, or its own), and the open then
   * waits for a controlled prompt drawn after it: for a shell that takes its integration neither from the
   * environment nor from its arguments (PowerShell's `prompt` function), or one asked to draw its prompt
   * again once it reads (fish, whose first read can print warnings after the first prompt).
   *
   * @since 0.2.0
   */
  readonly startupInput?: string
}

/**
 * A shell dialect: its name (and the other names its program goes by), the exact prompt text of its
 * integration, and how it is started.
 *
 * @since 0.2.0
 */
export interface Dialect {
  readonly name: string
  /** Other basenames of the same shell's program (`powershell` for `pwsh`). */
  readonly aliases?: ReadonlyArray<string>
  /** The exact prompt text the integration shows between the prompt-start and prompt-end markers. */
  readonly promptText: string
  /**
   * What the shell leaves at the end of a command's output that did not end its line, before the prompt
   * (zsh's and fish's PROMPT_SP: blanks to the right margin, after fish's `⏎`), matched at the end: the
   * service drops it from an output that ends at the prompt.
   */
  readonly promptPadding?: RegExp
  readonly launch: (options: { readonly shell: string; readonly nonce: string }) => ShellLaunch
}

/**
 * One shell dialect as a service: what a service with a single shell, or a program that only needs to
 * start one (the benchmarks), is given. `PtyService` takes the registry of them, `ShellDialects`.
 *
 * @since 0.1.0
 */
export class ShellDialect extends Context.Tag("@agent-terminal/core/ShellDialect")<ShellDialect, Dialect>() {}
