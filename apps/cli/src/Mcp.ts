/**
 * `agent-terminal mcp`: the terminal tools over MCP, on stdio (one connection, one owner; when the client
 * goes away — stdin ends — every session it opened is closed; only the protocol is written to stdout) or
 * over Streamable HTTP with `--http <port>` (one owner per MCP session; see `McpHttp`).
 *
 * Settings come from the command line, each with an `AGENT_TERMINAL_*` environment fallback, and are
 * validated once at startup: an invalid one is printed on stderr, naming the field, and the exit code is 2.
 */
import {
  type Exec,
  Ids,
  type PtyService,
  Sandbox,
  ShellDialects,
  type TaskRuntime,
  TerminalConfig
} from "@agent-terminal/core"
import { Paths } from "@agent-terminal/daemon"
import {
  Bubblewrap,
  Doctor as NodeDoctor,
  FileRecordings,
  NodeTerminal,
  Reaper,
  StateFiles
} from "@agent-terminal/node"
import { Deployment, Handlers, McpStdio } from "@agent-terminal/tools"
import { Options } from "@effect/cli"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { integer, type Parsed, text } from "./CliOptions.js"
import * as Daemon from "./Daemon.js"
import * as Doctor from "./Doctor.js"
import * as HttpTransport from "./HttpTransport.js"
import * as Switches from "./Switches.js"

/** The server's name and version as announced in `initialize`. */
export const serverInfo = { name: "agent-terminal", version: "0.1.0" }

const stdioOwner = Ids.OwnerId.make("mcp-stdio")

/**
 * The terminal settings (DESIGN.md §13) a person or an MCP client configuration may change; every one is
 * optional, the defaults are the service's. Shared by `mcp` (both transports) and `console`.
 */
export const settingsOptions = {
  timeoutMs: integer("timeout-ms", "AGENT_TERMINAL_TIMEOUT_MS", "Default deadline of a send (ms; default 30000)."),
  idleSilenceMs: integer(
    "idle-silence-ms",
    "AGENT_TERMINAL_IDLE_SILENCE_MS",
    "Silence after which a send returns as inferred_idle (ms; default 3000)."
  ),
  openTimeoutMs: integer(
    "open-timeout-ms",
    "AGENT_TERMINAL_OPEN_TIMEOUT_MS",
    "How long an open waits for the first prompt (ms; default 10000)."
  ),
  disposeGraceMs: integer(
    "dispose-grace-ms",
    "AGENT_TERMINAL_DISPOSE_GRACE_MS",
    "Grace between TERM and KILL at close (ms; default 3000)."
  ),
  maxResultBytes: integer(
    "max-result-bytes",
    "AGENT_TERMINAL_MAX_RESULT_BYTES",
    "Bound of every tool result's text (bytes, at least 64; default 32768)."
  ),
  maxInputBytes: integer(
    "max-input-bytes",
    "AGENT_TERMINAL_MAX_INPUT_BYTES",
    "Bound of one input: a send's text or paste, a task's input, an exec command (bytes; default 1048576)."
  ),
  maxReadBytes: integer(
    "max-read-bytes",
    "AGENT_TERMINAL_MAX_READ_BYTES",
    "Bound of a terminal_read page (bytes; default 262144)."
  ),
  scrollbackLines: integer(
    "scrollback-lines",
    "AGENT_TERMINAL_SCROLLBACK_LINES",
    "Transcript lines kept per session (default 10000)."
  ),
  scrollbackMaxBytes: integer(
    "scrollback-max-bytes",
    "AGENT_TERMINAL_SCROLLBACK_MAX_BYTES",
    "Transcript bytes kept per session (default 4194304)."
  ),
  cols: integer("cols", "AGENT_TERMINAL_COLS", "Default terminal width (default 160)."),
  rows: integer("rows", "AGENT_TERMINAL_ROWS", "Default terminal height (default 40)."),
  shell: text(
    "shell",
    "AGENT_TERMINAL_SHELL",
    "The shell of shell sessions that name none: bash (default), zsh, fish or pwsh, or a path to one."
  ),
  cwd: text("cwd", "AGENT_TERMINAL_CWD", "Working directory of new sessions (default: the current one)."),
  record: Options.boolean("record").pipe(
    Options.withDescription(
      "Record every session as asciicast v2 under $AGENT_TERMINAL_STATE_DIR/recordings (a session opened with " +
        "record: true is recorded anyway). Environment: AGENT_TERMINAL_RECORD."
    ),
    Options.withFallbackConfig(Config.boolean("AGENT_TERMINAL_RECORD"))
  ),
  recordInput: Options.boolean("record-input").pipe(
    Options.withDescription(
      "Recordings include input events; what a person types with echo off is recorded only as its length. " +
        "Environment: AGENT_TERMINAL_RECORD_INPUT."
    ),
    Options.withFallbackConfig(Config.boolean("AGENT_TERMINAL_RECORD_INPUT"))
  ),
  recordingMaxBytes: integer(
    "recording-max-bytes",
    "AGENT_TERMINAL_RECORDING_MAX_BYTES",
    "A recording stops (and says so) at this size (bytes; default 67108864)."
  ),
  controlIdleMs: integer(
    "control-idle-ms",
    "AGENT_TERMINAL_CONTROL_IDLE_MS",
    "A person's control of a terminal in the live view goes back to the agent after this long without input " +
      "(ms; default 300000)."
  ),
  recordingsMaxBytes: integer(
    "recordings-max-bytes",
    "AGENT_TERMINAL_RECORDINGS_MAX_BYTES",
    "All recordings together take at most this much disk (bytes; default 1073741824): the oldest finished " +
      "ones are removed first, checked at start, before each recording and every 10 minutes."
  ),
  recordingsMaxAgeMs: integer(
    "recordings-max-age-ms",
    "AGENT_TERMINAL_RECORDINGS_MAX_AGE_MS",
    "A finished recording is removed once it is this old (ms; default 2592000000, 30 days)."
  ),
  maxTerminalsPerOwner: integer(
    "max-terminals-per-owner",
    "AGENT_TERMINAL_MAX_TERMINALS_PER_OWNER",
    "Open terminals one owner may hold (default 32); one more is refused with LimitReached."
  ),
  maxTasksPerOwner: integer(
    "max-tasks-per-owner",
    "AGENT_TERMINAL_MAX_TASKS_PER_OWNER",
    "Live background tasks one owner may hold (default 64); one more is refused with LimitReached."
  ),
  maxTerminals: integer(
    "max-terminals",
    "AGENT_TERMINAL_MAX_TERMINALS",
    "Open terminals of every owner together (default 256; its last sixteenth kept for owners who hold none); " +
      "one more is refused with LimitReached naming this cap."
  ),
  maxTasks: integer(
    "max-tasks",
    "AGENT_TERMINAL_MAX_TASKS",
    "Live background tasks of every owner together (default 1024); one more is refused with LimitReached."
  )
}

/** The settings options, as parsed. */
export type SettingsOptions = { readonly [K in keyof typeof settingsOptions]: Parsed<(typeof settingsOptions)[K]> }

/**
 * The sandbox of every session (docs/security.md): `--sandbox <read-only|workspace-write|danger-full-access>`
 * (default danger-full-access), `--workspace <dir>` (default: `--cwd`, else the current directory),
 * `--network <off|isolated|host>` (default off in the confined modes), `--network-tool`, `--deny-read`
 * (repeatable), and the resource limits of each session's cgroup (`--pids-max`, `--memory-max-bytes`).
 * Shared by `mcp`, `demo` and `console`.
 */
export const sandboxOptions = {
  sandbox: Options.choice("sandbox", Sandbox.modes).pipe(
    Options.withDescription(
      "Confine every session with bubblewrap: read-only, workspace-write, or danger-full-access (no sandbox, " +
        "the default). Environment: AGENT_TERMINAL_SANDBOX."
    ),
    Options.withFallbackConfig(Config.literal(...Sandbox.modes)("AGENT_TERMINAL_SANDBOX")),
    Options.optional
  ),
  workspace: text(
    "workspace",
    "AGENT_TERMINAL_WORKSPACE",
    "The sandbox's workspace root: writable in workspace-write, the default and the bound of a session's cwd " +
      "(default: --cwd, else the current directory)."
  ),
  network: Options.choice("network", Sandbox.networkModes).pipe(
    Options.withDescription(
      "The network of sandboxed sessions: off (the default), isolated (own namespace, outbound through pasta " +
        "or slirp4netns, the host's loopback unreachable), or host (the host's network, loopback services " +
        "included). Environment: AGENT_TERMINAL_NETWORK."
    ),
    Options.withFallbackConfig(Config.literal(...Sandbox.networkModes)("AGENT_TERMINAL_NETWORK")),
    Options.optional
  ),
  networkTool: text(
    "network-tool",
    "AGENT_TERMINAL_NETWORK_TOOL",
    "The user-mode network of --network isolated: pasta, slirp4netns, or a path (default: pasta, else slirp4netns)."
  ),
  denyRead: Options.text("deny-read").pipe(
    Options.repeated,
    Options.withDescription(
      "Mask one more path in the confined modes (repeatable; absolute, or ~/… for every home), on top of " +
        "~/.ssh, ~/.aws, ~/.config/gh, ~/.kube, ~/.npmrc and the rest of the default list. Environment: " +
        "AGENT_TERMINAL_DENY_READ (paths separated by ':')."
    )
  ),
  pidsMax: integer(
    "pids-max",
    "AGENT_TERMINAL_PIDS_MAX",
    "At most this many processes and threads per session, where the host delegates cgroup v2's pids " +
      "controller (default 4096; 0: no limit)."
  ),
  memoryMaxBytes: integer(
    "memory-max-bytes",
    "AGENT_TERMINAL_MEMORY_MAX_BYTES",
    "At most this much memory per session, where the host delegates cgroup v2's memory controller " +
      "(default: half the host's memory; 0: no limit)."
  )
}

/** The sandbox options, as parsed. */
export type SandboxOptions = { readonly [K in keyof typeof sandboxOptions]: Parsed<(typeof sandboxOptions)[K]> }

/** Every option of `agent-terminal mcp`. */
export const mcpOptions = {
  ...settingsOptions,
  ...sandboxOptions,
  ...HttpTransport.httpOptions,
  ...Switches.deploymentOptions
}

/** The options of `agent-terminal mcp`, as parsed. */
export type McpOptions = SettingsOptions & SandboxOptions & HttpTransport.HttpOptions & Switches.DeploymentOptions

const flags: Record<string, string> = {
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
  ...HttpTransport.flags
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
        return Either.match(ShellDialects.resolve(NodeTerminal.dialects, settings.shell), {
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
  return Bubblewrap.policyOf(sandbox).pipe(
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
 * The terminal service for these settings on this host (shared by `mcp` and `console`), sandboxed if asked;
 * with a reaper, so the trees end even if this process is killed, and after what dead owners left is reaped.
 */
export const terminalLayer = (input: TerminalConfig.TerminalConfigInput, sandbox?: Bubblewrap.Options) =>
  NodeTerminal.layer(input, { ...(sandbox === undefined ? {} : { sandbox }), reaper: true }).pipe(
    Layer.provide(Layer.effectDiscard(Reaper.reapLeftovers)),
    Layer.provide(recordingsLayer(input))
  )

/**
 * Recordings go to `<state dir>/recordings` (the sandbox masks the state directory), under the budget the
 * settings give (`recordingsMaxBytes`, `recordingsMaxAgeMs`).
 */
export const recordingsLayer = (input: TerminalConfig.TerminalConfigInput) =>
  Layer.unwrapEffect(
    Effect.map(TerminalConfig.make(input), (settings) =>
      FileRecordings.layer({
        directory: Paths.recordingsPath(),
        maxTotalBytes: settings.recordingsMaxBytes,
        maxAgeMs: settings.recordingsMaxAgeMs
      })).pipe(Effect.orDie)
  )

/** Completes when the client closes our stdin: the connection is over. */
const stdinClosed = Effect.gen(function*() {
  const closed = yield* Deferred.make<void>()
  const done = () => Deferred.unsafeDone(closed, Effect.void)
  process.stdin.once("end", done)
  process.stdin.once("close", done)
  yield* Deferred.await(closed)
})

const serveStdioWith = <E>(
  settings: TerminalConfig.TerminalConfig,
  terminals: Layer.Layer<PtyService.PtyService | TaskRuntime.TaskRuntime | Exec.Exec, E>,
  deployment: Deployment.Deployment = Deployment.all
) => {
  const server = McpStdio.layer({
    ...serverInfo,
    maxResultBytes: settings.maxResultBytes,
    deployment,
    owner: stdioOwner,
    input: process.stdin,
    output: process.stdout
  }).pipe(
    Layer.provide(Handlers.layer),
    Layer.provide(terminals)
  )
  return Effect.raceFirst(Layer.launch(server), stdinClosed)
}

/** Serve the terminal tools on stdio until the client disconnects. */
export const serveStdio = (config: TerminalConfig.TerminalConfigInput) =>
  TerminalConfig.make(config).pipe(
    Effect.flatMap((settings) => serveStdioWith(settings, terminalLayer(config))),
    Effect.provide(stderrLogger)
  )

/** `agent-terminal mcp [--http <port>] [--daemon [auto]] [settings…]`. */
export const run = (options: McpOptions & Daemon.ClientOptions) =>
  withSettings(options, (settings, input) =>
    withSandbox(options, (sandbox) => {
      const deployment = Switches.deploymentFrom(options)
      if (Either.isLeft(deployment)) return refuse(deployment.left.field, deployment.left.message)
      if (options.daemon) {
        if (Option.isSome(options.http)) {
          return refuse(
            "http",
            "--http with --daemon: serve MCP over HTTP from the daemon (agent-terminal serve --http)"
          )
        }
        return serveStdioWith(settings, Daemon.remoteLayer(options, input, sandbox, "mcp"), deployment.right).pipe(
          Effect.catchTags({
            DaemonUnavailable: (error) => daemonRefused(error.message),
            ProtocolMismatch: (error) => daemonRefused(error.message),
            OwnerRejected: (error) => daemonRefused(error.message),
            SandboxInUse: (error) => daemonRefused(error.message),
            InvalidConfig: (error) => daemonRefused(error.message)
          })
        )
      }
      const unconfined = sandbox === undefined || !Sandbox.isConfined(sandbox.mode)
      const notice = unconfined
        ? Effect.logInfo("sessions are not sandboxed (danger-full-access); see --sandbox")
        : Effect.logInfo(
          `sessions run in the ${sandbox.mode} sandbox, workspace ${sandbox.workspace}, network ` +
            Bubblewrap.networkOf(sandbox.network)
        )
      // what this host gives, checked as `agent-terminal doctor` does, logged once the checks are done (stderr)
      const summary = Effect.fork(
        Doctor.findings({
          sandbox: sandbox === undefined ? Option.none() : Option.some(sandbox.mode),
          network: sandbox === undefined ? Option.none() : Option.some(Bubblewrap.networkOf(sandbox.network)),
          networkTool: Option.fromNullable(sandbox?.networkTool),
          http: given(options.http) !== undefined,
          tokenFile: options.tokenFile
        }).pipe(Effect.flatMap((checks) => {
          const missing = NodeDoctor.missing(checks)
          const text = `host check (agent-terminal doctor):\n${NodeDoctor.render(checks)}`
          return missing.length === 0 ? Effect.logInfo(text) : Effect.logWarning(text)
        }))
      )
      const port = given(options.http)
      if (port === undefined) {
        return notice.pipe(
          Effect.zipRight(summary),
          Effect.zipRight(serveStdioWith(settings, terminalLayer(input, sandbox), deployment.right))
        )
      }
      const http = HttpTransport.settingsFrom(port, options)
      if (Either.isLeft(http)) return refuse(http.left.field, http.left.message)
      return HttpTransport.loadToken(options).pipe(
        Effect.matchEffect({
          onFailure: (invalid) => refuse(invalid.field, `agent-terminal cannot start: ${invalid.message}`),
          onSuccess: (token) =>
            Effect.zipRight(
              Effect.zipRight(notice, summary),
              HttpTransport.serve(
                settings,
                http.right,
                token,
                terminalLayer(input, HttpTransport.hidingToken(sandbox, token)).pipe(
                  Layer.provide(HttpTransport.auditLayer(Paths.auditDatabasePath()))
                ),
                serverInfo,
                deployment.right
              )
            )
        })
      )
    })).pipe(Effect.provide(stderrLogger))
