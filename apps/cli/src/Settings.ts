/**
 * The settings of every command that runs terminals (`mcp`, `serve`, `console`, `demo`): the options (declared
 * in `McpOptions`, each with an `AGENT_TERMINAL_*` fallback) checked once at startup into a validated
 * `TerminalConfig` and a sandbox, then provided as layers (`settingsLayer`, `terminalLayer`). An invalid value is
 * printed on stderr naming its flag and variable, and the exit code is 2; the command does nothing else.
 */
import { ShellDialects, TerminalConfig } from "@agent-terminal/core"
import { Paths } from "@agent-terminal/daemon"
import { type Bubblewrap, NodeDialects, SandboxOptions as SandboxPolicy, StateFiles } from "@agent-terminal/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as HttpOptions from "./HttpOptions.js"
import type { SandboxOptions, SettingsOptions } from "./McpOptions.js"

/** The host's terminals (node-pty, the inspector, the sandbox, the reaper): a client of the daemon never loads them. */
export const host = Effect.promise(() => import("./Host.js"))

const flags: Record<string, string> = {
  nats: "--nats / AGENT_TERMINAL_NATS",
  machine: "--machine / AGENT_TERMINAL_MACHINE",
  label: "--label",
  timeoutMs: "--timeout-ms / AGENT_TERMINAL_TIMEOUT_MS",
  idleSilenceMs: "--idle-silence-ms / AGENT_TERMINAL_IDLE_SILENCE_MS",
  openTimeoutMs: "--open-timeout-ms / AGENT_TERMINAL_OPEN_TIMEOUT_MS",
  disposeGraceMs: "--dispose-grace-ms / AGENT_TERMINAL_DISPOSE_GRACE_MS",
  maxResultBytes: "--max-result-bytes / AGENT_TERMINAL_MAX_RESULT_BYTES",
  maxReadBytes: "--max-read-bytes / AGENT_TERMINAL_MAX_READ_BYTES",
  scrollbackLines: "--scrollback-lines / AGENT_TERMINAL_SCROLLBACK_LINES",
  scrollbackMaxBytes: "--scrollback-max-bytes / AGENT_TERMINAL_SCROLLBACK_MAX_BYTES",
  cols: "--cols / AGENT_TERMINAL_COLS",
  rows: "--rows / AGENT_TERMINAL_ROWS",
  shell: "--shell / AGENT_TERMINAL_SHELL",
  defaultCwd: "--cwd / AGENT_TERMINAL_CWD",
  sandbox: "--sandbox / AGENT_TERMINAL_SANDBOX",
  workspace: "--workspace / AGENT_TERMINAL_WORKSPACE",
  network: "--network / AGENT_TERMINAL_NETWORK",
  maxInputBytes: "--max-input-bytes / AGENT_TERMINAL_MAX_INPUT_BYTES",
  networkTool: "--network-tool / AGENT_TERMINAL_NETWORK_TOOL",
  pidsMax: "--pids-max / AGENT_TERMINAL_PIDS_MAX",
  memoryMaxBytes: "--memory-max-bytes / AGENT_TERMINAL_MEMORY_MAX_BYTES",
  recordingMaxBytes: "--recording-max-bytes / AGENT_TERMINAL_RECORDING_MAX_BYTES",
  controlIdleMs: "--control-idle-ms / AGENT_TERMINAL_CONTROL_IDLE_MS",
  recordingsMaxBytes: "--recordings-max-bytes / AGENT_TERMINAL_RECORDINGS_MAX_BYTES",
  recordingsMaxAgeMs: "--recordings-max-age-ms / AGENT_TERMINAL_RECORDINGS_MAX_AGE_MS",
  maxTerminalsPerOwner: "--max-terminals-per-owner / AGENT_TERMINAL_MAX_TERMINALS_PER_OWNER",
  maxTasksPerOwner: "--max-tasks-per-owner / AGENT_TERMINAL_MAX_TASKS_PER_OWNER",
  maxTerminals: "--max-terminals / AGENT_TERMINAL_MAX_TERMINALS",
  maxTasks: "--max-tasks / AGENT_TERMINAL_MAX_TASKS",
  detachedTtl: "--detached-ttl / AGENT_TERMINAL_DETACHED_TTL_MS",
  tools: "--tools / AGENT_TERMINAL_TOOLS",
  stateDir: "AGENT_TERMINAL_STATE_DIR",
  progressIntervalMs: "--progress-interval-ms / AGENT_TERMINAL_PROGRESS_INTERVAL_MS",
  ...HttpOptions.flags
}

const given = <A>(value: Option.Option<A>): A | undefined => Option.getOrUndefined(value)

/** The terminal settings the options ask for (only the given ones; the rest take the defaults). */
export const configInput = (options: SettingsOptions): TerminalConfig.TerminalConfigInput => {
  const input: Record<string, unknown> = {
    timeoutMs: given(options.timeoutMs),
    idleSilenceMs: given(options.idleSilenceMs),
    openTimeoutMs: given(options.openTimeoutMs),
    disposeGraceMs: given(options.disposeGraceMs),
    maxResultBytes: given(options.maxResultBytes),
    maxInputBytes: given(options.maxInputBytes),
    maxReadBytes: given(options.maxReadBytes),
    scrollbackLines: given(options.scrollbackLines),
    scrollbackMaxBytes: given(options.scrollbackMaxBytes),
    cols: given(options.cols),
    rows: given(options.rows),
    shell: given(options.shell),
    defaultCwd: given(options.cwd),
    recordAll: options.record ? true : undefined,
    recordInput: options.recordInput ? true : undefined,
    recordingMaxBytes: given(options.recordingMaxBytes),
    controlIdleMs: given(options.controlIdleMs),
    recordingsMaxBytes: given(options.recordingsMaxBytes),
    recordingsMaxAgeMs: given(options.recordingsMaxAgeMs),
    maxTerminalsPerOwner: given(options.maxTerminalsPerOwner),
    maxTasksPerOwner: given(options.maxTasksPerOwner),
    maxTerminals: given(options.maxTerminals),
    maxTasks: given(options.maxTasks)
  }
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))
}

/**
 * Validate the settings (the shell must be one with a dialect); an invalid one is reported on stderr with
 * its flag and environment variable, the exit code set to 2, and the command does nothing else.
 */
export const withSettings = <A, E, R>(
  options: SettingsOptions & Partial<Pick<SandboxOptions, "pidsMax" | "memoryMaxBytes">>,
  use: (settings: TerminalConfig.TerminalConfig, input: TerminalConfig.TerminalConfigInput) => Effect.Effect<A, E, R>
): Effect.Effect<A | void, E, R> => {
  const input = { ...configInput(options), ...limitsInput(options) }
  return TerminalConfig.make(input).pipe(
    Effect.matchEffect({
      onFailure: (invalid) => refuse(invalid.field, invalid.message),
      onSuccess: (settings) => {
        const stateDir = StateFiles.problem(Paths.stateDir())
        if (stateDir !== undefined) return refuse("stateDir", `invalid state directory: ${stateDir}`)
        return Either.match(ShellDialects.resolve(NodeDialects.dialects, settings.shell), {
          onLeft: (invalid) => refuse("shell", invalid.message),
          onRight: () => use(settings, input)
        })
      }
    })
  )
}

/** `--deny-read` paths, else `AGENT_TERMINAL_DENY_READ` split on `:`. */
const deniedPaths = (given: ReadonlyArray<string>): ReadonlyArray<string> =>
  given.length > 0 ? given : (process.env.AGENT_TERMINAL_DENY_READ ?? "").split(":").filter((p) => p !== "")

/**
 * The sandbox the options ask for: `undefined` for danger-full-access without a workspace (no sandbox layer),
 * else the bubblewrap options, checked (an existing workspace directory; `/` is not a writable workspace).
 */
export const sandboxFrom = (
  options: SandboxOptions & { readonly cwd?: Option.Option<string> }
): Either.Either<Bubblewrap.Options | undefined, { readonly field: string; readonly message: string }> => {
  const mode = given(options.sandbox) ?? "danger-full-access"
  if (mode === "danger-full-access" && Option.isNone(options.network) && Option.isNone(options.workspace)) {
    return Either.right(undefined)
  }
  const denyRead = deniedPaths(options.denyRead)
  const networkTool = given(options.networkTool)
  const sandbox: Bubblewrap.Options = {
    mode,
    network: given(options.network) ?? "off",
    workspace: given(options.workspace) ?? (options.cwd === undefined ? undefined : given(options.cwd)) ??
      process.cwd(),
    ...(denyRead.length > 0 ? { denyRead } : {}),
    ...(networkTool !== undefined ? { networkTool } : {})
  }
  return SandboxPolicy.policyOf(sandbox).pipe(
    Either.map(() => sandbox),
    Either.mapLeft((invalid) => ({ field: invalid.field, message: invalid.message }))
  )
}

/** The resource limits the options ask for, as settings (only the given ones). */
export const limitsInput = (
  options: Partial<Pick<SandboxOptions, "pidsMax" | "memoryMaxBytes">>
): TerminalConfig.TerminalConfigInput => {
  const pidsMax = options.pidsMax === undefined ? undefined : given(options.pidsMax)
  const memoryMaxBytes = options.memoryMaxBytes === undefined ? undefined : given(options.memoryMaxBytes)
  return {
    ...(pidsMax !== undefined ? { pidsMax } : {}),
    ...(memoryMaxBytes !== undefined ? { memoryMaxBytes } : {})
  }
}

/** Check the sandbox options, then run `use` with them; an invalid one is refused like an invalid setting. */
export const withSandbox = <A, E, R>(
  options: SandboxOptions & { readonly cwd?: Option.Option<string> },
  use: (sandbox: Bubblewrap.Options | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A | void, E, R> =>
  Either.match(sandboxFrom(options), {
    onLeft: (invalid) => refuse(invalid.field, invalid.message),
    onRight: use
  })

/** The daemon cannot be used as asked: said on stderr, exit code 1. */
export const daemonRefused = (message: string) =>
  Console.error(`agent-terminal: ${message}`).pipe(
    Effect.zipRight(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

/** Report an invalid setting on stderr (with its flag and environment variable) and set the exit code 2. */
export const refuse = (field: string, message: string) =>
  Console.error(`agent-terminal: ${message}${flags[field] === undefined ? "" : ` (${flags[field]})`}`).pipe(
    Effect.zipRight(Effect.sync(() => {
      process.exitCode = 2
    }))
  )

/**
 * Logs go to stderr only: stdout carries the stdio protocol. `NodeRuntime.runMain` installs
 * `prettyLoggerDefault` (stdout) in place of the default logger, so both are removed.
 */
export const stderrLogger = Layer.mergeAll(
  Logger.remove(Logger.defaultLogger),
  Logger.remove(Logger.prettyLoggerDefault),
  Logger.add(Logger.prettyLogger({ stderr: true, colors: false }))
)

/**
 * The settings, validated once (`withSettings`), as the layer every service of this process reads them from.
 */
export const settingsLayer = (settings: TerminalConfig.TerminalConfig): Layer.Layer<TerminalConfig.TerminalSettings> =>
  Layer.succeed(TerminalConfig.TerminalSettings, settings)

/**
 * Recordings go to `<state dir>/recordings` (the sandbox masks the state directory), under the budget the
 * settings give (`recordingsMaxBytes`, `recordingsMaxAgeMs`).
 */
export const recordingsLayer = (settings: TerminalConfig.TerminalConfig) =>
  Layer.unwrapEffect(
    Effect.map(host, ({ FileRecordings }) =>
      FileRecordings.layer({
        directory: Paths.recordingsPath(),
        maxTotalBytes: settings.recordingsMaxBytes,
        maxAgeMs: settings.recordingsMaxAgeMs
      }))
  )

/**
 * The terminal service for these settings on this host (shared by `mcp` and `console`), sandboxed if asked;
 * with a reaper, so the trees end even if this process is killed, and after what dead owners left is reaped.
 * The settings are the value `withSettings` validated, provided as they are (not decoded again).
 */
export const terminalLayer = (settings: TerminalConfig.TerminalConfig, sandbox?: Bubblewrap.Options) =>
  Layer.unwrapEffect(
    Effect.map(
      host,
      ({ NodeTerminal, Reaper }) =>
        NodeTerminal.layerFromSettings({ ...(sandbox === undefined ? {} : { sandbox }), reaper: true }).pipe(
          Layer.provide(Layer.effectDiscard(Reaper.reapLeftovers)),
          Layer.provide(recordingsLayer(settings)),
          Layer.provide(settingsLayer(settings))
        )
    )
  )
