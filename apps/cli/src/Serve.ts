/**
 * `agent-terminal serve`: the daemon. It owns the terminals, tasks and one-shot runs (the same services as
 * `mcp` in-process, with a reaper behind them), serves the protocol on its Unix socket, and with `--http`
 * also MCP over Streamable HTTP from the same terminals. It logs to stderr, or to `--log-file`, never to a
 * terminal it owns. SIGTERM (or SIGINT) closes every terminal gracefully, then it exits. At every start it
 * first ends what dead owners left behind, and says what it reaped.
 */
import type { Oversight, PtyService, TaskRuntime, TerminalConfig } from "@agent-terminal/core"
import { DaemonServer, Paths, TerminalRegistry } from "@agent-terminal/daemon"
import type { SocketUnavailable } from "@agent-terminal/daemon/DaemonServer"
import type { RegistryError } from "@agent-terminal/daemon/TerminalRegistry"
import { type Bubblewrap, NodeTerminal, Reaper, StateFiles } from "@agent-terminal/node"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import * as HttpTransport from "./HttpTransport.js"
import * as McpOptions from "./McpOptions.js"
import * as NatsOptions from "./NatsOptions.js"
import type { ServeOptions } from "./ServeOptions.js"
import * as Settings from "./Settings.js"

export { options, type ServeOptions } from "./ServeOptions.js"

/** Log lines appended to `file` (logfmt), and nothing to stdout or stderr; why the file cannot be kept, if not. */
const fileLogger = (file: string): Either.Either<Layer.Layer<never>, string> => {
  let fd: number
  try {
    StateFiles.makeDirectory(path.dirname(file))
    fd = StateFiles.openPrivate(file, fs.constants.O_CREAT | fs.constants.O_APPEND)
  } catch (error) {
    return Either.left(`cannot keep the log file ${file}: ${(error as Error).message}`)
  }
  return Either.right(Layer.mergeAll(
    Logger.remove(Logger.defaultLogger),
    Logger.remove(Logger.prettyLoggerDefault),
    Logger.add(Logger.map(Logger.logfmtLogger, (line) => fs.writeSync(fd, `${line}\n`)))
  ))
}

/** The token of `--http` cannot be loaded (a loose token file, two sources…). */
class InvalidToken extends Data.TaggedError("InvalidToken")<{ readonly message: string }> {}

/** The HTTP settings the options ask for (`None` without `--http`). */
const httpOf = (parsed: ServeOptions) => {
  const port = Option.getOrUndefined(parsed.http)
  return port === undefined
    ? Either.right(Option.none<HttpTransport.HttpSettings>())
    : Either.map(HttpTransport.settingsFrom(port, parsed), Option.some)
}

/** What every daemon start needs besides the daemon's own layer and the terminal settings. */
interface Start {
  readonly parsed: ServeOptions
  readonly sandbox: Bubblewrap.Options | undefined
  readonly http: Option.Option<HttpTransport.HttpSettings>
}

/** A daemon's cause of failing to start, said on stderr (and in the log file). */
type StartError = SocketUnavailable | RegistryError | InvalidToken | {
  readonly _tag: string
  readonly message: string
}

/** The daemon `daemon` over this host's terminals with `settings`, until a signal stops it. */
const start = <E extends StartError>(
  { http, parsed, sandbox }: Start,
  daemon: Layer.Layer<
    never,
    E,
    PtyService.PtyService | TaskRuntime.Tasks | TerminalRegistry.TerminalRegistry | Oversight.Oversight
  >,
  settings: TerminalConfig.TerminalConfig
) => {
  const registry = TerminalRegistry.layerSqlite({ filename: Paths.databasePath() })
  const unconfined: Bubblewrap.Options = sandbox ?? { mode: "danger-full-access", network: "host" }
  // The live view's audit goes into the registry (control_audit); recordings under the state directory.
  const terminalsWith = (confined: Bubblewrap.Options) =>
    NodeTerminal.layerFromSettings({ sandbox: confined, reaper: true, killOnSignals: false }).pipe(
      Layer.provide(Layer.mergeAll(
        TerminalRegistry.auditLayer,
        Settings.recordingsLayer(settings),
        Settings.settingsLayer(settings)
      )),
      Layer.provideMerge(registry)
    )
  const app = Option.match(http, {
    onNone: () => Effect.succeed(Layer.launch(daemon.pipe(Layer.provide(terminalsWith(unconfined))))),
    onSome: (http) =>
      HttpTransport.loadToken(parsed).pipe(
        Effect.mapError((invalid) => new InvalidToken({ message: invalid.message })),
        Effect.map((token) =>
          Layer.launch(
            Layer.merge(daemon, HttpTransport.layer(settings, http, token, McpOptions.serverInfo)).pipe(
              Layer.provide(terminalsWith(HttpTransport.hidingToken(unconfined, token) ?? unconfined))
            )
          )
        )
      )
  })
  const stop = (message: string) =>
    Console.error(`agent-terminal serve: ${message}`).pipe(
      Effect.zipRight(Option.isSome(parsed.logFile) ? Effect.logError(message) : Effect.void),
      Effect.zipRight(Effect.sync(() => {
        process.exitCode = 1
      }))
    )
  return Reaper.reapLeftovers.pipe(
    Effect.zipRight(Effect.flatten(app)),
    Effect.catchAll((error: StartError) =>
      error._tag === "InvalidToken"
        ? Settings.refuse("token", `agent-terminal cannot start: ${error.message}`)
        : stop(error.message)
    )
  )
}

/**
 * `agent-terminal serve [--socket P] [--http PORT] [--detached-ttl MS] [--log-file F]
 * [--nats URL --machine NAME [--label L]…] [settings…]`.
 */
export const run = (parsed: ServeOptions) => {
  const logger = Option.match(parsed.logFile, { onNone: () => Either.right(Settings.stderrLogger), onSome: fileLogger })
  if (Either.isLeft(logger)) return Settings.refuse("logFile", logger.left)
  return Settings.withSettings(
    parsed,
    (settings) =>
      Settings.withSandbox(parsed, (sandbox) =>
        Either.match(httpOf(parsed), {
          onLeft: (invalid) => Settings.refuse(invalid.field, invalid.message),
          onRight: (http) => {
            const detachedTtlMs = Option.getOrUndefined(parsed.detachedTtl)
            if (detachedTtlMs !== undefined && !(detachedTtlMs > 0)) {
              return Settings.refuse(
                "detachedTtl",
                `invalid configuration detachedTtl: must be positive, got ${detachedTtlMs}`
              )
            }
            const socket = Option.getOrElse(parsed.socket, () => Paths.socketPath())
            // SIGTERM is the daemon's to handle (every terminal closed gracefully); the reaper covers its death.
            // Always bubblewrap (no confinement by default): an owner's client may ask for its sessions to be
            // confined (`mcp --daemon --sandbox …` sets the owner's policy), as an embedding application would.
            const starting: Start = { parsed, sandbox, http }
            const servers = NatsOptions.serversOf(parsed)
            if (servers === undefined) return start(starting, DaemonServer.layer({ socket, detachedTtlMs }), settings)
            // With --nats the daemon is also a machine of the fleet (its module loaded only then).
            return Effect.flatMap(Effect.promise(() => import("./ServeMachine.js")), (ServeMachine) =>
              Either.match(ServeMachine.plan(parsed, servers, settings, { socket, detachedTtlMs }), {
                onLeft: (refusal) => Settings.refuse(refusal.field, `agent-terminal serve: ${refusal.message}`),
                onRight: (machine) => start(starting, machine.layer, machine.settings)
              }))
          }
        }))
  ).pipe(Effect.provide(logger.right))
}
