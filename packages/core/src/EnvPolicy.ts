/**
 * The one environment policy every spawn goes through: start from the host's environment, drop what
 * looks like a credential or lets code be injected, apply the non-interactive defaults, then the
 * embedding application's explicit trusted mapping (which wins). Nothing a model sends can change it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * Names containing one of these words (any case) are dropped: they look like credentials.
 *
 * @since 0.1.0
 */
export const secretWords: ReadonlyArray<string> = ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSPHRASE", "CREDENTIAL"]

/**
 * Loader and injection variables, dropped: they run code in every process the session starts.
 *
 * @since 0.1.0
 */
export const injectionNames: ReadonlyArray<string> = [
  "BASH_ENV",
  "ENV",
  "NODE_OPTIONS",
  "PYTHONSTARTUP",
  "PYTHONPATH",
  "PYTHONHOME",
  "PERL5OPT",
  "PERL5LIB",
  "RUBYOPT",
  "PROMPT_COMMAND",
  "PS0",
  "PS1",
  "PS2",
  "PS4",
  "SHELLOPTS",
  "BASHOPTS",
  "CDPATH",
  "GLOBIGNORE",
  "HISTFILE",
  "INPUTRC",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "GIT_SSH_COMMAND",
  "GIT_EXEC_PATH",
  "GIT_ASKPASS",
  "SSH_ASKPASS"
]

/**
 * Prefixes of loader and injection variables, dropped.
 *
 * @since 0.1.0
 */
export const injectionPrefixes: ReadonlyArray<string> = ["LD_", "DYLD_", "BASH_FUNC_"]

/**
 * Set in every session: programs must not wait for a pager, an editor, or a credential prompt.
 *
 * @since 0.1.0
 */
export const nonInteractiveDefaults: Readonly<Record<string, string>> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  GIT_EDITOR: ":",
  GIT_TERMINAL_PROMPT: "0",
  DEBIAN_FRONTEND: "noninteractive",
  TERM: "xterm-256color",
  COLORTERM: "truecolor"
}

/**
 * Why a host variable is not passed on, or `undefined` when it is.
 *
 * @since 0.1.0
 */
export const dropReason = (name: string): "credential" | "injection" | undefined => {
  const upper = name.toUpperCase()
  if (injectionNames.includes(upper) || injectionPrefixes.some((prefix) => upper.startsWith(prefix))) {
    return "injection"
  }
  if (secretWords.some((word) => upper.includes(word))) return "credential"
  return undefined
}

/**
 * The complete environment of a child: cleaned host variables, then the defaults, then the variables
 * the shell integration needs, then the trusted mapping.
 *
 * @since 0.1.0
 */
export const build = (options: {
  readonly host: Readonly<Record<string, string | undefined>>
  readonly trusted?: Readonly<Record<string, string>> | undefined
  readonly integration?: Readonly<Record<string, string>> | undefined
}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(options.host)) {
    if (value !== undefined && dropReason(name) === undefined) env[name] = value
  }
  Object.assign(env, nonInteractiveDefaults, options.integration ?? {}, options.trusted ?? {})
  return env
}

/**
 * The host's environment and the embedding application's trusted mapping.
 *
 * @since 0.1.0
 */
export class HostEnvironment extends Context.Tag("@agent-terminal/core/HostEnvironment")<
  HostEnvironment,
  {
    readonly host: Readonly<Record<string, string | undefined>>
    readonly trusted: Readonly<Record<string, string>>
    /** The working directory of sessions opened without one. */
    readonly cwd: string
  }
>() {}

/**
 * A fixed environment (tests, or an embedding application that supplies its own).
 *
 * @since 0.1.0
 */
export const layer = (options: {
  readonly host: Readonly<Record<string, string | undefined>>
  readonly trusted?: Readonly<Record<string, string>>
  readonly cwd: string
}): Layer.Layer<HostEnvironment> =>
  Layer.succeed(HostEnvironment, { host: options.host, trusted: options.trusted ?? {}, cwd: options.cwd })
