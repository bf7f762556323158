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
import { type Bubblewrap, NodeDialects, SandboxOptions as SandboxPolicy, StateFiles } from "@agent-terminal/node"
import { Deployment, Handlers, McpStdio } from "@agent-terminal/tools"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type { ClientOptions } from "./DaemonOptions.js"
import * as HttpOptions from "./HttpOptions.js"
import type { McpOptions, SandboxOptions, SettingsOptions } from "./McpOptions.js"
import { serverInfo } from "./McpOptions.js"
import * as NatsOptions from "./NatsOptions.js"
import * as Switches from "./Switches.js"

export {
  type McpOptions,
  mcpOptions,
  type SandboxOptions,
  sandboxOptions,
  serverInfo,
  type SettingsOptions,
  settingsOptions
} from "./McpOptions.js"

/** The host's terminals (node-pty, the inspector, the sandbox, the reaper): a client of the daemon never loads them. */
const host = Effect.promise(() => import("./Host.js"))

/** The client of the daemon (`--daemon`). */
const daemon = Effect.promise(() => import("./Daemon.js"))

/** MCP over Streamable HTTP (`--http`), with the live view and the audit's SQLite file. */
const httpTransport = Effect.promise(() => import("./HttpTransport.js"))

/** How long after the start the host check runs. */
const HOST_CHECK_DELAY = "2 seconds"

/** The host check, logged once at start (`agent-terminal doctor`'s findings). */
const hostCheck = Effect.promise(() => import("./Doctor.js"))

const stdioOwner = Ids.OwnerId.make("mcp-stdio")

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
 * The terminal service for these settings on this host (shared by `mcp` and `console`), sandboxed if asked;
 * with a reaper, so the trees end even if this process is killed, and after what dead owners left is reaped.
 */
export const terminalLayer = (input: TerminalConfig.TerminalConfigInput, sandbox?: Bubblewrap.Options) =>
  Layer.unwrapEffect(
    Effect.map(
      host,
      ({ NodeTerminal, Reaper }) =>
        NodeTerminal.layer(input, { ...(sandbox === undefined ? {} : { sandbox }), reaper: true }).pipe(
          Layer.provide(Layer.effectDiscard(Reaper.reapLeftovers)),
          Layer.provide(recordingsLayer(input))
        )
    )
  )

/**
 * Recordings go to `<state dir>/recordings` (the sandbox masks the state directory), under the budget the
 * settings give (`recordingsMaxBytes`, `recordingsMaxAgeMs`).
 */
export const recordingsLayer = (input: TerminalConfig.TerminalConfigInput) =>
  Layer.unwrapEffect(
    Effect.zipWith(host, Effect.orDie(TerminalConfig.make(input)), ({ FileRecordings }, settings) =>
      FileRecordings.layer({
        directory: Paths.recordingsPath(),
        maxTotalBytes: settings.recordingsMaxBytes,
        maxAgeMs: settings.recordingsMaxAgeMs
      }))
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
export const run = (options: McpOptions & ClientOptions & Partial<NatsOptions.ConnectionOptions>) =>
  withSettings(options, (settings, input) =>
    withSandbox(options, (sandbox) => {
      const deployment = Switches.deploymentFrom(options)
      if (Either.isLeft(deployment)) return refuse(deployment.left.field, deployment.left.message)
      const servers = options.nats === undefined
        ? undefined
        : NatsOptions.serversOf(options as NatsOptions.ConnectionOptions)
      if (servers !== undefined) {
        if (options.daemon || Option.isSome(options.http)) {
          return refuse("nats", "--nats with --daemon or --http: the terminals live on the fleet's machines; give one")
        }
        const fleet = Layer.unwrapEffect(Effect.map(
          Effect.promise(() => import("./FleetClient.js")),
          (FleetClient) =>
            FleetClient.fleetLayer(options as NatsOptions.ConnectionOptions, servers, options.owner, "mcp")
        ))
        return serveStdioWith(settings, fleet, { ...deployment.right, machines: true }).pipe(
          Effect.catchTags({
            NatsUnavailable: (error) => daemonRefused(error.message),
            NotPermitted: (error) => daemonRefused(error.message)
          })
        )
      }
      if (options.daemon) {
        if (Option.isSome(options.http)) {
          return refuse(
            "http",
            "--http with --daemon: serve MCP over HTTP from the daemon (agent-terminal serve --http)"
          )
        }
        const remote = Layer.unwrapEffect(
          Effect.map(daemon, (Daemon) => Daemon.remoteLayer(options, input, sandbox, "mcp"))
        )
        return serveStdioWith(settings, remote, deployment.right).pipe(
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
            SandboxPolicy.networkOf(sandbox.network)
        )
      // what this host gives, checked as `agent-terminal doctor` does, logged once the checks are done (stderr);
      // started a moment after the server, out of the way of the client's first requests (it opens a shell and
      // starts sandboxes of its own)
      const summary = Effect.fork(
        Effect.zip(hostCheck, host).pipe(
          Effect.delay(HOST_CHECK_DELAY),
          Effect.flatMap(([Doctor, { NodeDoctor }]) =>
            Doctor.findings({
              sandbox: sandbox === undefined ? Option.none() : Option.some(sandbox.mode),
              network: sandbox === undefined ? Option.none() : Option.some(SandboxPolicy.networkOf(sandbox.network)),
              networkTool: Option.fromNullable(sandbox?.networkTool),
              http: given(options.http) !== undefined,
              tokenFile: options.tokenFile
            }).pipe(Effect.flatMap((checks) => {
              const missing = NodeDoctor.missing(checks)
              const text = `host check (agent-terminal doctor):\n${NodeDoctor.render(checks)}`
              return missing.length === 0 ? Effect.logInfo(text) : Effect.logWarning(text)
            }))
          )
        )
      )
      const port = given(options.http)
      if (port === undefined) {
        return notice.pipe(
          Effect.zipRight(summary),
          Effect.zipRight(serveStdioWith(settings, terminalLayer(input, sandbox), deployment.right))
        )
      }
      return httpTransport.pipe(Effect.flatMap((HttpTransport) => {
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
      }))
    })).pipe(Effect.provide(stderrLogger))
