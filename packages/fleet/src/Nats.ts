/**
 * A NATS connection as a scoped service: the user it acts as (whose inbox space its replies use), its nkey,
 * TLS, and a reconnect that tries the cluster's other servers at once. Its events (dropped, back) are what the
 * RPC protocol ends in-flight calls on.
 *
 * @since 0.3.0
 */
import { connect, type NatsConnection, nkeyAuthenticator, type Status } from "@nats-io/transport-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { NatsUnavailable } from "./FleetErrors.js"
import * as Subjects from "./Subjects.js"

/**
 * How to reach NATS and as whom.
 *
 * @since 0.3.0
 */
export interface Options {
  /** The servers of the cluster (`nats://host:port`, or `tls://host:port`). */
  readonly servers: ReadonlyArray<string>
  /** The fleet user this connection acts as: its replies arrive under `agent-terminal.inbox.<user>`. */
  readonly user: string
  /** The user's nkey seed (`SU...`). */
  readonly seed?: string | undefined
  /** A file holding the user's nkey seed (read at most 4 KiB). */
  readonly seedFile?: string | undefined
  /** TLS: the CA that signed the servers' certificates, and this client's own certificate when servers ask. */
  readonly tls?: {
    readonly caFile?: string | undefined
    readonly certFile?: string | undefined
    readonly keyFile?: string | undefined
  } | undefined
  /** The connection's name in the servers' monitoring. */
  readonly name?: string | undefined
  /** Wait between two attempts at the same server (default 250 ms; the next server is tried at once). */
  readonly reconnectWaitMs?: number | undefined
  /** How long the first connection may take (default 2 s). */
  readonly connectTimeoutMs?: number | undefined
  /** Ping the server this often to find a silent one (default 2 s; two unanswered end the connection). */
  readonly pingIntervalMs?: number | undefined
}

/**
 * What happened to the connection.
 *
 * @since 0.3.0
 */
export type ConnectionEvent =
  | { readonly _tag: "Disconnected"; readonly server: string }
  | { readonly _tag: "Reconnected"; readonly server: string }
  | { readonly _tag: "Closed" }

/**
 * Which connection of which server this is: the pair the system's disconnect event names.
 *
 * @since 0.3.0
 */
export interface Binding {
  readonly server: string
  readonly cid: number
}

/**
 * @since 0.3.0
 */
export interface Service {
  readonly connection: NatsConnection
  readonly user: string
  readonly servers: string
  /** The connection's events; subscribe with `Stream.fromPubSub`. */
  readonly events: PubSub.PubSub<ConnectionEvent>
  /** The server and connection id of the connection now, or `undefined` while disconnected. */
  readonly binding: () => Binding | undefined
}

/**
 * The NATS connection.
 *
 * @since 0.3.0
 */
export class Nats extends Context.Tag("@agent-terminal/fleet/Nats")<Nats, Service>() {}

const MAX_SEED_FILE = 4096

const readSeedFile = (file: string, servers: string): Effect.Effect<string, NatsUnavailable> =>
  Effect.try({
    try: () => {
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      try {
        if (!fs.fstatSync(fd).isFile()) throw new Error("not a regular file")
        const buffer = Buffer.alloc(MAX_SEED_FILE + 1)
        const read = fs.readSync(fd, buffer, 0, buffer.length, 0)
        if (read > MAX_SEED_FILE) throw new Error(`larger than ${MAX_SEED_FILE} bytes`)
        return buffer.subarray(0, read).toString("utf8").trim()
      } finally {
        fs.closeSync(fd)
      }
    },
    catch: (error) =>
      new NatsUnavailable({ servers, reason: `the seed file ${file} cannot be read: ${(error as Error).message}` })
  })

const tlsOptions = (tls: NonNullable<Options["tls"]>) => {
  const out: { caFile?: string; certFile?: string; keyFile?: string } = {}
  if (tls.caFile !== undefined) out.caFile = tls.caFile
  if (tls.certFile !== undefined) out.certFile = tls.certFile
  if (tls.keyFile !== undefined) out.keyFile = tls.keyFile
  return out
}

const toEvent = (status: Status): ConnectionEvent | undefined =>
  status.type === "disconnect"
    ? { _tag: "Disconnected", server: status.server }
    : status.type === "reconnect"
    ? { _tag: "Reconnected", server: status.server }
    : status.type === "close"
    ? { _tag: "Closed" }
    : undefined

/**
 * Connect as `options.user`; the connection closes with the scope.
 *
 * @since 0.3.0
 */
export const make = (options: Options): Effect.Effect<Service, NatsUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const servers = options.servers.join(",")
    const user = yield* Subjects.validName("user", options.user).pipe(
      Effect.mapError((error) => new NatsUnavailable({ servers, reason: error.message }))
    )
    const seed = options.seed ?? (options.seedFile === undefined
      ? undefined
      : yield* readSeedFile(options.seedFile, servers))
    const connection = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          connect({
            servers: [...options.servers],
            name: options.name ?? user,
            inboxPrefix: Subjects.inbox(user),
            ...(seed === undefined ? {} : { authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)) }),
            ...(options.tls === undefined ? {} : { tls: tlsOptions(options.tls) }),
            reconnectTimeWait: options.reconnectWaitMs ?? 250,
            reconnectJitter: 50,
            reconnectJitterTLS: 50,
            maxReconnectAttempts: -1,
            timeout: options.connectTimeoutMs ?? 2_000,
            pingInterval: options.pingIntervalMs ?? 2_000,
            maxPingOut: 2
          }),
        catch: (error) => new NatsUnavailable({ servers, reason: (error as Error).message ?? String(error) })
      }),
      (connection) => Effect.promise(() => connection.close().catch(() => undefined))
    )
    const events = yield* Effect.acquireRelease(PubSub.unbounded<ConnectionEvent>(), PubSub.shutdown)
    // A plain loop, not a Stream: the status iterator ends only with the connection, after the scope's end.
    void (async () => {
      for await (const status of connection.status()) {
        const event = toEvent(status)
        if (event !== undefined) events.unsafeOffer(event)
      }
    })().catch(() => undefined)
    const binding = (): Binding | undefined => {
      const info = connection.info
      return info === undefined || connection.isClosed() ? undefined : { server: info.server_id, cid: info.client_id }
    }
    return { connection, user, servers, events, binding }
  })

/**
 * The connection as a layer.
 *
 * @since 0.3.0
 */
export const layer = (options: Options): Layer.Layer<Nats, NatsUnavailable> => Layer.scoped(Nats, make(options))
