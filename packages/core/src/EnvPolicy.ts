/**
 * The one environment policy every spawn goes through: start from the host's environment, drop what
 * looks like a credential or lets code be injected, apply the non-interactive defaults, then the
 * embedding application's explicit trusted mapping (which wins over both). Nothing a model sends can
 * change it: no tool takes an environment, so `PATH` and the dropped names are out of its reach.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * Names containing one of these words (any case, anywhere in the name) are dropped: they look like
 * credentials (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`, `KEYCHAIN_PATH`…). Dropping too much
 * is the safe side; the trusted mapping puts back what a session really needs.
 *
 * @since 0.1.0
 */
export const secretWords: ReadonlyArray<string> = [
  "KEY",
  "SECRET",
  "TOKEN",
  "PASSWORD",
  "PASSWD",
  "PASSPHRASE",
  "CREDENTIAL"
]

/**
 * Whole `_`-separated parts of a name that mark a credential (`SSH_AUTH_SOCK`, `NPM_CONFIG__AUTH`), kept
 * apart from `secretWords` so `GIT_AUTHOR_NAME` survives.
 *
 * @since 0.1.0
 */
export const secretParts: ReadonlyArray<string> = ["AUTH", "COOKIE", "PAT", "JWT", "DSN"]

/**
 * Name fragments that mark a credential wherever they appear: a webhook URL is its own secret
 * (`SLACK_WEBHOOK_URL`), and so is a session token (`BW_SESSION`, `OP_SESSION_<account>`) — except the
 * names in `nonSecretSessionNames` and the `XDG_SESSION_*` facts of the desktop.
 *
 * @since 0.2.0
 */
export const secretFragments: ReadonlyArray<string> = ["WEBHOOK", "SESSION"]

/**
 * `…SESSION…` names that are not secrets (besides `XDG_SESSION_*`).
 *
 * @since 0.2.0
 */
export const nonSecretSessionNames: ReadonlyArray<string> = ["DESKTOP_SESSION"]

/**
 * Names that point to where credentials are, or to a privileged socket: the session must not inherit them
 * (a kube config, the Docker daemon, the user's D-Bus, the X server's cookie, a Kerberos ticket cache).
 *
 * @since 0.2.0
 */
export const credentialPointerNames: ReadonlyArray<string> = [
  "KUBECONFIG",
  "DOCKER_HOST",
  "DOCKER_CONFIG",
  "DBUS_SESSION_BUS_ADDRESS",
  "XAUTHORITY",
  "KRB5CCNAME"
]

/**
 * Loader and injection variables, dropped: they run code in every process the session starts (a shell's
 * startup file, an interpreter's preload, a helper git or ssh executes), or change how the shell parses.
 *
 * @since 0.1.0
 */
export const injectionNames: ReadonlyArray<string> = [
  "BASH_ENV",
  "ENV",
  "ZDOTDIR",
  "BASH_XTRACEFD",
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_REPL_EXTERNAL_MODULE",
  "PYTHONSTARTUP",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONINSPECT",
  "PYTHONBREAKPOINT",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "PERL5DB",
  "RUBYOPT",
  "RUBYLIB",
  "PROMPT_COMMAND",
  "PS0",
  "PS1",
  "PS2",
  "PS4",
  "SHELLOPTS",
  "BASHOPTS",
  "CDPATH",
  "GLOBIGNORE",
  "IFS",
  "HISTFILE",
  "INPUTRC",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_EXEC_PATH",
  "GIT_ASKPASS",
  "GIT_PROXY_COMMAND",
  "GIT_EXTERNAL_DIFF",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "LESSOPEN",
  "LESSCLOSE",
  "GCONV_PATH",
  "GLIBC_TUNABLES",
  "MALLOC_CHECK_",
  "MALLOC_PERTURB_",
  "GIT_TEMPLATE_DIR",
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_SEQUENCE_EDITOR",
  "EDITOR",
  "VISUAL",
  "MANPAGER",
  "PYTHONWARNINGS",
  "PYTHONUSERBASE",
  "MAVEN_OPTS",
  "GRADLE_OPTS",
  "CLASSPATH",
  "DOTNET_STARTUP_HOOKS",
  "ELECTRON_RUN_AS_NODE",
  "OPENSSL_CONF",
  "VIMINIT",
  "EXINIT",
  "PHP_INI_SCAN_DIR",
  "RUSTC_WRAPPER",
  "HOSTALIASES",
  "RES_OPTIONS",
  "BASH_LOADABLES_PATH"
]

/**
 * Prefixes of loader and injection variables, dropped (`LD_PRELOAD`, `DYLD_INSERT_LIBRARIES`, exported
 * bash functions `BASH_FUNC_name%%`, `GIT_CONFIG_VALUE_0`, `LUA_INIT_5_4`, `CORECLR_PROFILER`…).
 *
 * @since 0.1.0
 */
export const injectionPrefixes: ReadonlyArray<string> = [
  "LD_",
  "DYLD_",
  "BASH_FUNC_",
  "GIT_CONFIG_",
  "LUA_INIT",
  "CORECLR_"
]

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
 * Why a host variable is not passed on.
 *
 * - `injection`: a loader or startup variable that runs code in the session's processes.
 * - `credential`: the name looks like a secret, or points to one (`KUBECONFIG`, `DOCKER_HOST`).
 * - `credential-url`: the value is a URL carrying user information — a password (`postgres://user:pw@host/db`)
 *   or a token as the user (`https://ghp_x@github.com`).
 *
 * @since 0.1.0
 */
export type DropReason = "injection" | "credential" | "credential-url"

const credentialUrl = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+@/i

/** `PWD` and `OLDPWD` are directories; any other name ending in `PWD` is a password (`MYSQL_PWD`). */
const passwordName = (upper: string): boolean => upper.endsWith("PWD") && upper !== "PWD" && upper !== "OLDPWD"

const secretByFragment = (upper: string): boolean =>
  secretFragments.some((fragment) => upper.includes(fragment)) &&
  !upper.startsWith("XDG_SESSION_") && !nonSecretSessionNames.includes(upper)

/**
 * Why a host variable is not passed on, or `undefined` when it is. The value is only looked at for user
 * information embedded in a URL.
 *
 * @since 0.1.0
 */
export const dropReason = (name: string, value?: string): DropReason | undefined => {
  const upper = name.toUpperCase()
  if (injectionNames.includes(upper) || injectionPrefixes.some((prefix) => upper.startsWith(prefix))) {
    return "injection"
  }
  if (secretWords.some((word) => upper.includes(word))) return "credential"
  if (upper.split("_").some((part) => secretParts.includes(part))) return "credential"
  if (passwordName(upper) || credentialPointerNames.includes(upper)) return "credential"
  if (secretByFragment(upper)) return "credential"
  if (value !== undefined && credentialUrl.test(value)) return "credential-url"
  return undefined
}

/**
 * The host variables the policy drops, by name (never the values), for logs and audits.
 *
 * @since 0.1.0
 */
export const dropped = (
  host: Readonly<Record<string, string | undefined>>
): ReadonlyArray<{ readonly name: string; readonly reason: DropReason }> =>
  Object.entries(host).flatMap(([name, value]) => {
    const reason = value === undefined ? undefined : dropReason(name, value)
    return reason === undefined ? [] : [{ name, reason }]
  })

/**
 * The complete environment of a child, in this order (a later step wins):
 *
 * 1. the host's variables, minus every name `dropReason` rejects;
 * 2. `nonInteractiveDefaults`;
 * 3. the trusted mapping of the embedding application (it may set `PATH`, or put back a dropped name);
 * 4. the shell integration's own variables (the readiness markers depend on them, so nothing overrides them).
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
    if (value !== undefined && dropReason(name, value) === undefined) env[name] = value
  }
  Object.assign(env, nonInteractiveDefaults, options.trusted ?? {}, options.integration ?? {})
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
    /** The working directory of sessions opened without one (outside a sandbox's workspace). */
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
