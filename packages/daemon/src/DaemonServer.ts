/**
 * The daemon: one long-lived process that owns the terminals, tasks and one-shot runs, serving the protocol
 * on a Unix socket (its directory 0700, the socket 0600) in length-prefixed frames (`Framing`), each
 * connection bounded: a frame's size (64 KiB until its `Hello`), and a `Hello` within `helloTimeoutMs`. A second daemon on the same socket is refused; the
 * stale socket of a dead daemon is detected and replaced. Each connection is bound to one owner by its
 * handshake: an anonymous owner's terminals close with its connection, a named owner's are kept for
 * `detachedTtlMs` after its last connection went, then closed with their whole tree. The registry records
 * every terminal and task and the daemon's runs, so a restarted daemon answers an id it held before with
 * `SessionLost`.
 *
 * @since 0.2.0
 */
import { Exec, type PtyService, type TaskRuntime } from "@agent-terminal/core"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import * as SocketServer from "@effect/platform/SocketServer"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Framing from "./Framing.js"
import * as handlers from "./internal/handlers.js"
import * as owners from "./internal/owners.js"
import * as socketFile from "./internal/socketFile.js"
import * as socketProtocol from "./internal/socketProtocol.js"
import * as Paths from "./Paths.js"
import { DaemonRpcs } from "./Protocol.js"
import type { RegistryError } from "./TerminalRegistry.js"
import { TerminalRegistry } from "./TerminalRegistry.js"

/**
 * The daemon cannot serve: its socket is taken by another daemon, or cannot be prepared.
 *
 * @since 0.2.0
 */
export type SocketUnavailable = socketFile.SocketUnavailable

/**
 * The default detached TTL: 30 minutes.
 *
 * @since 0.2.0
 */
export const defaultDetachedTtlMs = 30 * 60 * 1000

/**
 * Options of the daemon.
 *
 * @since 0.2.0
 */
export interface Options {
  /** The socket (default `Paths.socketPath()`). */
  readonly socket?: string | undefined
  /** How long a named owner's terminals are kept after its last connection went (default 30 minutes). */
  readonly detachedTtlMs?: number | undefined
  /** How often the daemon records that it is alive (what a later run reports as the time of a death). */
  readonly heartbeatMs?: number | undefined
  /** The bound of one frame a client sends after its `Hello` (default `Framing.defaultMaxFrameBytes`, 16 MiB). */
  readonly maxFrameBytes?: number | undefined
  /** How long a connection has to say `Hello` before it is closed (default 5000 ms). */
  readonly helloTimeoutMs?: number | undefined
  /** Another transport served besides the socket, by the same server and the same owners (a fleet's NATS). */
  readonly transport?: Transport | undefined
}

/**
 * Another transport of the daemon: `protocol` takes the socket's protocol and gives the one the server runs
 * (both merged, their client ids kept apart, so the owners' bookkeeping never confuses two clients);
 * `stopping` runs first when the daemon stops, before its server does (to tell the transport's clients).
 *
 * @since 0.3.0
 */
export interface Transport {
  readonly protocol: (
    socket: RpcServer.Protocol["Type"]
  ) => Effect.Effect<RpcServer.Protocol["Type"], never, Scope.Scope>
  readonly stopping?: Effect.Effect<void> | undefined
}

/**
 * The default time a connection has to say `Hello`: 5 seconds.
 *
 * @since 0.3.0
 */
export const defaultHelloTimeoutMs = 5_000

const serverRpcs = (
  context: handlers.Context,
  socketServer: SocketServer.SocketServer["Type"],
  disconnected: (clientId: number) => Effect.Effect<void>,
  bounds: socketProtocol.Bounds,
  transport: Transport | undefined
) =>
  Effect.gen(function*() {
    const socket = yield* socketProtocol.make(socketServer, bounds)
    const inner = transport === undefined ? socket : yield* transport.protocol(socket)
    // The server takes disconnects from the protocol; the daemon hears of each one first (owner lifecycle).
    const disconnects = yield* Mailbox.make<number>()
    yield* inner.disconnects.take.pipe(
      // forked in the daemon's scope: closing an owner's terminals never holds the next disconnect up
      Effect.tap((clientId) => Effect.forkScoped(disconnected(clientId))),
      Effect.flatMap((clientId) => disconnects.offer(clientId)),
      Effect.forever,
      Effect.forkScoped
    )
    const protocol: RpcServer.Protocol["Type"] = { ...inner, disconnects }
    const handlerContext = yield* Layer.build(handlers.layer(context))
    yield* RpcServer.make(DaemonRpcs, { disableTracing: true, concurrency: "unbounded" }).pipe(
      Effect.provide(handlerContext),
      Effect.provideService(RpcServer.Protocol, protocol),
      Effect.forkScoped
    )
  })

/**
 * Serve the protocol on the socket over the services in context, until the layer is released: then every
 * connection ends, the run is recorded as stopped (its open terminals as `daemon-stopped`), and the
 * services' own finalizers close every terminal with its tree.
 *
 * @since 0.2.0
 */
export const layer = (
  options: Options = {}
): Layer.Layer<
  never,
  SocketUnavailable | RegistryError,
  PtyService.PtyService | TaskRuntime.Tasks | TerminalRegistry
> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const socket = options.socket ?? Paths.socketPath()
    yield* socketFile.prepareDirectory(socket)
    yield* socketFile.lock(socket)
    if ((yield* socketFile.clearStale(socket)) === "stale-removed") {
      yield* Effect.logInfo(`daemon: the stale socket of a dead daemon at ${socket} was replaced`)
    }
    const registry = yield* TerminalRegistry
    const clock = yield* Effect.clock
    const started = clock.unsafeCurrentTimeMillis()
    const { died, runId } = yield* registry.startRun(process.pid, started)
    for (const run of died) {
      yield* Effect.logInfo(
        `daemon: the previous daemon (pid ${run.pid}) died, last seen ${new Date(run.lastSeenAt).toISOString()}: ` +
          "its terminals are lost"
      )
    }
    yield* Effect.addFinalizer(() =>
      registry.stopRun(runId, clock.unsafeCurrentTimeMillis()).pipe(
        Effect.catchAll((error) => Effect.logWarning("daemon: the stop could not be recorded", error))
      )
    )
    yield* Effect.suspend(() => registry.heartbeat(runId, clock.unsafeCurrentTimeMillis())).pipe(
      Effect.ignore,
      Effect.repeat(Schedule.spaced(options.heartbeatMs ?? 5_000)),
      Effect.forkScoped
    )
    const shell = Option.match(yield* Effect.serviceOption(Exec.Exec), {
      onNone: () => "bash",
      onSome: (exec) => exec.shell
    })
    const lifecycle = yield* owners.make({ detachedTtlMs: options.detachedTtlMs ?? defaultDetachedTtlMs, shell })
    const socketServer = yield* socketFile.listenPrivately(
      socket,
      NodeSocketServer.make({ path: socket }).pipe(
        Effect.mapError((error) => new socketFile.SocketUnavailable({ socket, reason: String(error.cause) }))
      )
    )
    const inode = socketFile.inodeOf(socket)
    yield* Effect.addFinalizer(() => Effect.sync(() => socketFile.removeIfOurs(socket, inode)))
    yield* serverRpcs({ owners: lifecycle, runId }, socketServer, lifecycle.disconnected, {
      maxFrameBytes: options.maxFrameBytes ?? Framing.defaultMaxFrameBytes,
      helloTimeoutMs: options.helloTimeoutMs ?? defaultHelloTimeoutMs
    }, options.transport)
    // Released first: the connections that end while the daemon stops do not close their owners' terminals
    // one by one (the services close them all), so they are recorded as `daemon-stopped`.
    yield* Effect.addFinalizer(() => lifecycle.stop)
    const stopping = options.transport?.stopping
    if (stopping !== undefined) yield* Effect.addFinalizer(() => stopping)
    yield* Effect.logInfo(`daemon: serving on ${socket} (pid ${process.pid}, run ${runId})`)
  }))
