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
}

/**
 * @since 0.1.0
 */
export class ShellDialect extends Context.Tag("@agent-terminal/core/ShellDialect")<
  ShellDialect,
  {
    readonly name: string
    /** The exact prompt text the integration shows between the prompt-start and prompt-end markers. */
    readonly promptText: string
    readonly launch: (options: { readonly shell: string; readonly nonce: string }) => ShellLaunch
  }
>() {}
