/**
 * The terminals of a daemon, as local services: `RemoteTerminal.layer({ socket, owner })` provides
 * `PtyService`, `TaskRuntime.Tasks` and `Exec` over the protocol, so everything built on those Tags — `ToolClient`,
 * `Portable`, the MCP server, the console — runs unchanged against terminals that live in the daemon.
 *
 * The connection is bound to one owner by its handshake (`Connected.owner`): a call acts as that owner, and
 * a call that names another owner dies with `OwnerMismatch` naming both (nothing runs as one owner on
 * another's behalf). A connection that breaks is made again at the next call, with the same credential
 * (a named owner finds its terminals again; an anonymous one starts over). When no daemon answers, a call
 * dies with `DaemonUnavailable`. It provides `Tasks`, not the `TaskRuntime`: starting a task is local to the
 * services that run it, the daemon's own (a background send, a one-shot run).
 *
 * @since 0.2.0
 */
import { Exec, Ids, Operation, PtyService, TaskRuntime, type Watch } from "@agent-terminal/core"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as RpcClient from "@effect/rpc/RpcClient"
import type { RpcClientError } from "@effect/rpc/RpcClientError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as net from "node:net"
import * as Framing from "./Framing.js"
import * as Paths from "./Paths.js"
import type { HandshakeRequired, HelloResult, OwnerCredential } from "./Protocol.js"
import {
  DaemonRpcs,
  DaemonUnavailable,
  OwnerMismatch,
  OwnerRejected,
  PROTOCOL_VERSION,
  ProtocolMismatch
} from "./Protocol.js"

/**
 * Options of the remote layer.
 *
 * @since 0.2.0
 */
export interface Options {
  /** The daemon's socket (default `Paths.socketPath()`). */
  readonly socket?: string | undefined
  /** Act as this named owner (its terminals survive a reconnect); default: anonymous. */
  readonly owner?: OwnerCredential | undefined
  /** Called with the secret the daemon issued for a new named owner that came without one: keep it. */
  readonly onIssuedSecret?: ((secret: string) => Effect.Effect<void>) | undefined
  /** The client's name, for the daemon's logs. */
  readonly client?: string | undefined
  /** The protocol version announced (tests of the handshake only). */
  readonly protocolVersion?: number | undefined
}

/**
 * Why the remote layer could not start.
 *
 * @since 0.2.0
 */
export type ConnectError = DaemonUnavailable | ProtocolMismatch | OwnerRejected

type Client = RpcClient.FromGroup<typeof DaemonRpcs, RpcClientError>

interface Connection {
  readonly client: Client
  readonly scope: Scope.CloseableScope
  readonly hello: HelloResult
  broken: boolean
}

/** Why nothing answers at `socket`: the connect error's code, or `undefined` when something does. */
const probe = (socket: string): Effect.Effect<string | undefined> =>
  Effect.async<string | undefined>((resume) => {
    const connection = net.createConnection({ path: socket })
    connection.once("connect", () => {
      connection.destroy()
      resume(Effect.succeed(undefined))
    })
    connection.once("error", (error: NodeJS.ErrnoException) => {
      resume(Effect.succeed(
        error.code === "ENOENT"
          ? "no socket there (the daemon is not running)"
          : error.code === "ECONNREFUSED"
          ? "nothing listens on the socket (a dead daemon's socket)"
          : error.code === "EACCES"
          ? "permission denied"
          : error.message
      ))
    })
    return Effect.sync(() => connection.destroy())
  })

/**
 * Connect and say Hello: the connection lives in its own scope, closed when it breaks or the layer ends.
 *
 * @since 0.2.0
 */
export const connect = (
  options: Options = {}
): Effect.Effect<
  { readonly client: Client; readonly hello: HelloResult; readonly scope: Scope.CloseableScope },
  ConnectError
> =>
  Effect.gen(function*() {
    const socket = options.socket ?? Paths.socketPath()
    const refused = yield* probe(socket)
    if (refused !== undefined) return yield* new DaemonUnavailable({ socket, reason: refused })
    const scope = yield* Scope.make()
    const unavailable = (error: RpcClientError) => new DaemonUnavailable({ socket, reason: error.message })
    const established = Effect.gen(function*() {
      // Built into the connection's scope (an `Effect.provide` of the layer would close it with `make`).
      const protocol = yield* Layer.build(
        RpcClient.layerProtocolSocket({ retryTransientErrors: false, retrySchedule: Schedule.recurs(0) }).pipe(
          Layer.provide(NodeSocket.layerNet({ path: socket })),
          Layer.provide(Framing.layerClient)
        )
      )
      const client = yield* RpcClient.make(DaemonRpcs, { disableTracing: true }).pipe(Effect.provide(protocol))
      const hello = yield* client.Hello({
        protocolVersion: options.protocolVersion ?? PROTOCOL_VERSION,
        ...(options.owner === undefined ? {} : { owner: options.owner }),
        ...(options.client === undefined ? {} : { client: options.client })
      }).pipe(Effect.catchTag("RpcClientError", (error) => Effect.fail(unavailable(error))))
      if (hello.issuedSecret !== undefined && options.onIssuedSecret !== undefined) {
        yield* options.onIssuedSecret(hello.issuedSecret)
      }
      return { client, hello, scope }
    }).pipe(Scope.extend(scope))
    return yield* established.pipe(
      Effect.catchTag("SocketError", (error) => Effect.fail(new DaemonUnavailable({ socket, reason: error.message }))),
      Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
    )
  })

/**
 * The three services over one (re-made when broken) connection to the daemon.
 *
 * @since 0.2.0
 */
export const make = (
  options: Options = {}
): Effect.Effect<
  {
    readonly pty: PtyService.PtyService["Type"]
    readonly tasks: TaskRuntime.Tasks["Type"]
    readonly exec: Exec.Exec["Type"]
    readonly hello: HelloResult
  },
  ConnectError,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const socket = options.socket ?? Paths.socketPath()
    const completions = yield* PubSub.unbounded<TaskRuntime.TaskEvent>()
    const semaphore = yield* Effect.makeSemaphore(1)
    let current: Connection | undefined

    // A secret the daemon issued at the first Hello is the one every reconnect must present.
    let owner = options.owner
    const open = Effect.gen(function*() {
      const made = yield* connect({ ...options, owner })
      if (owner !== undefined && made.hello.issuedSecret !== undefined) {
        owner = { ...owner, secret: made.hello.issuedSecret }
      }
      const connection: Connection = { ...made, broken: false }
      // Task endings of this owner, republished locally for runtimes that notify.
      yield* made.client.TaskCompletions().pipe(
        Stream.runForEach((event) => PubSub.publish(completions, event)),
        Effect.ignore,
        Effect.forkIn(made.scope)
      )
      current = connection
      return connection
    })

    const close = (connection: Connection | undefined) =>
      connection === undefined ? Effect.void : Scope.close(connection.scope, Exit.void)

    yield* Effect.addFinalizer(() => Effect.suspend(() => close(current)))

    const first = yield* open

    const reconnect = semaphore.withPermits(1)(Effect.suspend(() => {
      if (current !== undefined && !current.broken) return Effect.succeed(current)
      const stale = current
      current = undefined
      return close(stale).pipe(Effect.zipRight(open))
    }))
    // The live connection without a permit (the hot path); only a broken one goes through the semaphore.
    const connection = Effect.suspend(() =>
      current !== undefined && !current.broken ? Effect.succeed(current) : reconnect
    )

    /**
     * One call: a transport failure breaks the connection (re-made at the next call) and dies, as does a
     * `HandshakeRequired` (this layer always says Hello first, so it means the daemon lost the connection's
     * binding).
     */
    const call = <A, E>(
      use: (client: Client) => Effect.Effect<A, E | RpcClientError | HandshakeRequired>
    ): Effect.Effect<A, Exclude<E, RpcClientError | HandshakeRequired>> =>
      Effect.flatMap(
        Effect.orDie(connection),
        (connection) =>
          use(connection.client).pipe(
            Effect.catchIf(
              (error): error is RpcClientError | HandshakeRequired => {
                const tag = (error as { _tag?: string })._tag
                return tag === "RpcClientError" || tag === "HandshakeRequired"
              },
              (error) => {
                connection.broken = true
                return Effect.die(new DaemonUnavailable({ socket, reason: error.message }))
              }
            )
          ) as Effect.Effect<A, Exclude<E, RpcClientError | HandshakeRequired>>
      )

    const bound = Ids.OwnerId.make(first.hello.owner)
    /** A call for another owner than the connection's is refused: nothing runs as one owner for another. */
    const asBound = <A, E>(owner: Ids.OwnerId, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      owner === bound ? effect : Effect.die(new OwnerMismatch({ connection: bound, call: owner }))

    /** One remote call per declaration: the arguments as the payload's fields (absent ones left out). */
    const remote = <Ops extends Operation.Table>(table: Ops): Operation.ServiceOf<Ops> => {
      const service: Record<string, unknown> = {}
      for (const [method, operation] of Object.entries(table)) {
        service[method] = (owner: Ids.OwnerId, ...args: ReadonlyArray<unknown>) =>
          asBound(
            owner,
            call((client) =>
              (client as unknown as Record<string, (payload: unknown) => Effect.Effect<unknown, unknown>>)[
                operation.tag
              ]!(Operation.payloadOf(operation, args))
            )
          )
      }
      return service as Operation.ServiceOf<Ops>
    }

    const pty = PtyService.PtyService.of({
      ...remote(PtyService.operations),
      watch: (owner, sessionId, watchOptions) =>
        Effect.gen(function*() {
          if (owner !== bound) return yield* Effect.die(new OwnerMismatch({ connection: bound, call: owner }))
          const { client } = yield* Effect.orDie(connection)
          const mailbox = yield* client.Watch({
            sessionId,
            ...(watchOptions?.maxBufferedBytes === undefined
              ? {}
              : { options: { maxBufferedBytes: watchOptions.maxBufferedBytes } })
          }, { asMailbox: true })
          const first = yield* mailbox.take.pipe(
            Effect.catchAll((error) =>
              error._tag === "RpcClientError" || error._tag === "HandshakeRequired"
                ? Effect.die(new DaemonUnavailable({ socket, reason: error.message }))
                : error._tag === "NoSuchElementException"
                ? Effect.die(new DaemonUnavailable({ socket, reason: "the watch ended before its snapshot" }))
                : Effect.fail(error)
            )
          )
          if (first._tag !== "Snapshot") {
            return yield* Effect.die(
              new DaemonUnavailable({ socket, reason: "the watch did not start with a snapshot" })
            )
          }
          const events = Mailbox.toStream(mailbox).pipe(
            Stream.orDie,
            Stream.filter((item): item is Watch.WatchEvent => item._tag !== "Snapshot")
          )
          return { snapshot: first, events }
        })
    })

    const tasks = TaskRuntime.Tasks.of({
      ...remote(TaskRuntime.operations),
      completions
    })

    const exec = Exec.Exec.of({
      shell: first.hello.shell,
      ...remote(Exec.operations)
    })

    return { pty, tasks, exec, hello: first.hello }
  })

/**
 * The owner the daemon bound this layer's connection to, and the daemon it reached.
 *
 * @since 0.2.0
 */
export class Connected extends Context.Tag("@agent-terminal/daemon/RemoteTerminal/Connected")<
  Connected,
  { readonly owner: Ids.OwnerId; readonly daemonPid: number; readonly socket: string }
>() {}

/**
 * `PtyService`, `TaskRuntime.Tasks` and `Exec` of the daemon at `socket`, acting as `owner` (anonymous when
 * absent). Fails to build when no daemon answers, the protocol versions differ, or the owner is refused.
 *
 * @since 0.2.0
 */
export const layer = (
  options: Options = {}
): Layer.Layer<PtyService.PtyService | TaskRuntime.Tasks | Exec.Exec | Connected, ConnectError> =>
  Layer.scopedContext(
    Effect.map(make(options), ({ exec, hello, pty, tasks }) =>
      Context.make(PtyService.PtyService, pty).pipe(
        Context.add(TaskRuntime.Tasks, tasks),
        Context.add(Exec.Exec, exec),
        Context.add(Connected, {
          owner: Ids.OwnerId.make(hello.owner),
          daemonPid: hello.daemonPid,
          socket: options.socket ?? Paths.socketPath()
        })
      ))
  )
