/**
 * `agent-terminal mcp`: the terminal tools over MCP, on stdio (one connection, one owner; when the client
 * goes away — stdin ends — every session it opened is closed; only the protocol is written to stdout) or
 * over Streamable HTTP with `--http <port>` (one owner per MCP session; see `McpHttp`). With `--nats`, the
 * terminals live on the fleet's machines; `--nats --http` serves MCP to many owners and the live view of every
 * machine's terminals (`FleetHttp`).
 *
 * Settings come from the command line, each with an `AGENT_TERMINAL_*` environment fallback, and are
 * validated once at startup (`Settings`): an invalid one is printed on stderr, naming the field, and the exit
 * code is 2.
 */
import { type Exec, Ids, type PtyService, Sandbox, type TaskRuntime, type TerminalConfig } from "@agent-terminal/core"
import { Paths } from "@agent-terminal/daemon"
import type { FleetErrors } from "@agent-terminal/fleet"
import { SandboxOptions as SandboxPolicy } from "@agent-terminal/node"
import { McpStdio } from "@agent-terminal/server"
import { Deployment, Handlers } from "@agent-terminal/tools"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type { ClientOptions } from "./DaemonOptions.js"
import * as HostCheck from "./HostCheck.js"
import type { HttpOptions } from "./HttpOptions.js"
import type * as HttpTransportModule from "./HttpTransport.js"
import type { McpOptions } from "./McpOptions.js"
import { serverInfo } from "./McpOptions.js"
import * as NatsOptions from "./NatsOptions.js"
import { daemonRefused, refuse, stderrLogger, terminalLayer, withSandbox, withSettings } from "./Settings.js"
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

/** The client of the daemon (`--daemon`). */
const daemon = Effect.promise(() => import("./Daemon.js"))

/** MCP over Streamable HTTP (`--http`), with the live view and the audit's SQLite file. */
const httpTransport = Effect.promise(() => import("./HttpTransport.js"))

/** How long after the start the host check runs. */
const HOST_CHECK_DELAY = "2 seconds"

const stdioOwner = Ids.OwnerId.make("mcp-stdio")

/**
 * `--http PORT`: the HTTP settings and the token they name, checked (an invalid one refused, exit 2), then
 * `serve` with them.
 */
const withHttp = <E, R>(
  port: number,
  options: HttpOptions,
  serve: (
    HttpTransport: typeof HttpTransportModule,
    http: HttpTransportModule.HttpSettings,
    token: Effect.Effect.Success<ReturnType<typeof HttpTransportModule.loadToken>>
  ) => Effect.Effect<void, E, R>
) =>
  Effect.flatMap(httpTransport, (HttpTransport) => {
    const http = HttpTransport.settingsFrom(port, options)
    if (Either.isLeft(http)) return refuse(http.left.field, http.left.message)
    return HttpTransport.loadToken(options).pipe(
      Effect.matchEffect({
        onFailure: (invalid) => refuse(invalid.field, `agent-terminal cannot start: ${invalid.message}`),
        onSuccess: (token) => serve(HttpTransport, http.right, token)
      })
    )
  })

/** The fleet cannot be joined (no NATS server answers, or NATS refuses this user a subject): said, exit 1. */
const natsRefused = <A, E, R>(
  effect: Effect.Effect<A, E | FleetErrors.NatsUnavailable | FleetErrors.NotPermitted, R>
) =>
  Effect.catchIf(
    effect,
    (error): error is FleetErrors.NatsUnavailable | FleetErrors.NotPermitted =>
      Predicate.isTagged(error, "NatsUnavailable") || Predicate.isTagged(error, "NotPermitted"),
    (error) => daemonRefused(error.message)
  )

/** Completes when the client closes our stdin: the connection is over. */
const stdinClosed = Effect.gen(function*() {
  const closed = yield* Deferred.make<void>()
  const done = () => Deferred.unsafeDone(closed, Effect.void)
  process.stdin.once("end", done)
  process.stdin.once("close", done)
  yield* Deferred.await(closed)
})

const serveStdioWith = <E, R>(
  settings: TerminalConfig.TerminalConfig,
  terminals: Layer.Layer<PtyService.PtyService | TaskRuntime.Tasks | Exec.Exec | R, E>,
  deployment: Deployment.Deployment,
  /** The connection's owner: this process's own, or the one the daemon bound the connection to. */
  ownerOf: Effect.Effect<Ids.OwnerId, never, R>
) => {
  const server = Layer.unwrapEffect(Effect.map(ownerOf, (owner) =>
    McpStdio.layer({
      ...serverInfo,
      maxResultBytes: settings.maxResultBytes,
      deployment,
      owner,
      input: process.stdin,
      output: process.stdout
    }))).pipe(
      Layer.provide(Handlers.layer),
      Layer.provide(terminals)
    )
  return Effect.raceFirst(Layer.launch(server), stdinClosed)
}

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
        if (options.daemon) {
          return refuse("nats", "--nats with --daemon: the terminals live on the fleet's machines; give one")
        }
        const fleetClient = Effect.promise(() => import("./FleetClient.js"))
        const port = Option.getOrUndefined(options.http)
        if (port !== undefined) {
          // the HTTP server over the fleet: the tools for many owners, the live view over every machine
          return withHttp(port, options, (HttpTransport, http, token) =>
            Effect.flatMap(
              Effect.promise(() => import("./FleetHttp.js")),
              (FleetHttp) =>
                HttpTransport.serve(
                  settings,
                  http,
                  token,
                  FleetHttp.layer(options as NatsOptions.ConnectionOptions, servers),
                  serverInfo,
                  { ...deployment.right, machines: true }
                )
            ).pipe(natsRefused))
        }
        const fleet = Layer.unwrapEffect(Effect.map(
          fleetClient,
          (FleetClient) =>
            FleetClient.fleetLayer(options as NatsOptions.ConnectionOptions, servers, options.owner, "mcp", stdioOwner)
        ))
        return serveStdioWith(settings, fleet, { ...deployment.right, machines: true }, Effect.succeed(stdioOwner))
          .pipe(natsRefused)
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
        const owner = Effect.flatMap(daemon, (Daemon) => Daemon.connectedOwner)
        return serveStdioWith(settings, remote, deployment.right, owner).pipe(
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
      // what this host gives, checked by `agent-terminal doctor` in a child process (HostCheck), logged once
      // the checks are done (stderr); started a moment after the server, out of the way of the client's first
      // requests (it opens a shell and starts sandboxes of its own)
      const summary = Effect.fork(
        HostCheck.log({
          sandbox: sandbox?.mode,
          network: sandbox === undefined ? undefined : SandboxPolicy.networkOf(sandbox.network),
          networkTool: sandbox?.networkTool,
          http: Option.isSome(options.http),
          tokenFile: Option.getOrUndefined(options.tokenFile)
        }).pipe(Effect.delay(HOST_CHECK_DELAY))
      )
      const port = Option.getOrUndefined(options.http)
      if (port === undefined) {
        return notice.pipe(
          Effect.zipRight(summary),
          Effect.zipRight(
            serveStdioWith(settings, terminalLayer(settings, sandbox), deployment.right, Effect.succeed(stdioOwner))
          )
        )
      }
      return withHttp(port, options, (HttpTransport, http, token) =>
        Effect.zipRight(
          Effect.zipRight(notice, summary),
          HttpTransport.serve(
            settings,
            http,
            token,
            terminalLayer(settings, HttpTransport.hidingToken(sandbox, token)).pipe(
              Layer.provide(HttpTransport.auditLayer(Paths.auditDatabasePath()))
            ),
            serverInfo,
            deployment.right
          )
        ))
    })).pipe(Effect.provide(stderrLogger))
