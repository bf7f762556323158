/**
 * A NATS connection as a scoped service: the user it acts as (whose inbox space its replies use), its nkey,
 * TLS, and a reconnect that tries the cluster's other servers at once. Its events (dropped, back) are what the
 * RPC protocol ends in-flight calls on.
 *
 * @since 0.3.0
 */
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
  type Status
} from "@nats-io/transport-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { NatsUnavailable } from "./FleetErrors.js"
import * as tlsProbe from "./internal/tlsProbe.js"
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
  /**
   * The user's credentials of an operator (JWT) deployment: a `.creds` file's text, the user's JWT and its
   * nkey seed (`readCredentials`). Not with `seed`/`seedFile`.
   */
  readonly creds?: Credentials | undefined
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
const MAX_CREDS_FILE = 64 * 1024

/** A regular file's text, refused past `max` bytes (read before it is held). */
const readBounded = (file: string, max: number): string => {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error("not a regular file")
    const buffer = Buffer.alloc(max + 1)
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0)
    if (read > max) throw new Error(`larger than ${max} bytes`)
    return buffer.subarray(0, read).toString("utf8")
  } finally {
    fs.closeSync(fd)
  }
}

const readSeedFile = (file: string, servers: string): Effect.Effect<string, NatsUnavailable> =>
  Effect.try({
    try: () => readBounded(file, MAX_SEED_FILE).trim(),
    catch: (error) =>
      new NatsUnavailable({ servers, reason: `the seed file ${file} cannot be read: ${(error as Error).message}` })
  })

/**
 * A user's credentials of an operator (JWT) deployment, as a `.creds` file holds them.
 *
 * @since 0.3.0
 */
export interface Credentials {
  /** The file's text (the user's JWT and nkey seed, each between its `-----BEGIN …-----` lines). */
  readonly text: string
  /** The user's name in its JWT (`name`), when it has one. */
  readonly name: string | undefined
}

const credsBlock = /-{3,}BEGIN NATS USER JWT-{3,}\s*\r?\n\s*([A-Za-z0-9_.=-]+)\s*\r?\n\s*-{3,}END NATS USER JWT-{3,}/
const seedBlock = /-{3,}BEGIN USER NKEY SEED-{3,}\s*\r?\n\s*(SU[A-Z2-7]+)\s*\r?\n\s*-{3,}END USER NKEY SEED-{3,}/

/**
 * Read a `.creds` file (at most 64 KiB): a user JWT and its nkey seed, or `NatsUnavailable` saying what is
 * missing. The JWT's `name` is the fleet user a client acts as when it names none.
 *
 * @since 0.3.0
 */
export const readCredentials = (file: string, servers = ""): Effect.Effect<Credentials, NatsUnavailable> =>
  Effect.try({
    try: () => {
      const text = readBounded(file, MAX_CREDS_FILE)
      const jwt = credsBlock.exec(text)?.[1]
      if (jwt === undefined) throw new Error("no NATS USER JWT block")
      if (!seedBlock.test(text)) throw new Error("no USER NKEY SEED block")
      const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8")) as unknown
      const name = typeof claims === "object" && claims !== null && "name" in claims &&
          typeof claims.name === "string"
        ? claims.name
        : undefined
      return { text, name }
    },
    catch: (error) =>
      new NatsUnavailable({
        servers,
        reason: `the credentials file ${file} cannot be read: ${(error as Error).message}`
      })
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
 * Why a first connection failed, said plainly: a server certificate this CA did not sign says so; a timeout
 * over TLS is probed for the TLS layer's own word (a client certificate the servers refused arrives after the
 * handshake, and the client says only "timeout").
 */
const explained = (options: Options, reason: string): Effect.Effect<NatsUnavailable> => {
  const servers = options.servers.join(",")
  const tls = options.tls
  if (tls !== undefined && /unable to verify|self[- ]signed|unknown ca/i.test(reason)) {
    return Effect.succeed(
      new NatsUnavailable({ servers, reason: `${reason} (the servers' certificate is not signed by this CA)` })
    )
  }
  if (!/timeout/i.test(reason) || tls === undefined || options.servers.length === 0) {
    return Effect.succeed(new NatsUnavailable({ servers, reason }))
  }
  return Effect.map(
    Effect.promise(() => tlsProbe.probe(options.servers[0]!, tls, options.connectTimeoutMs ?? 2_000)),
    (said) => {
      if (said === undefined) return new NatsUnavailable({ servers, reason })
      const alert = /alert ([a-z0-9 ]+)/i.exec(said)?.[1]?.trim()
      return new NatsUnavailable({
        servers,
        reason: alert === undefined
          ? `${reason}: TLS says ${JSON.stringify(said.slice(0, 200))}`
          : `the server refused the TLS connection (alert "${alert}"): it does not accept this process's ` +
            "certificate"
      })
    }
  )
}

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
    if (options.creds !== undefined && (options.seed !== undefined || options.seedFile !== undefined)) {
      return yield* new NatsUnavailable({ servers, reason: "give either credentials (a .creds file) or an nkey seed" })
    }
    const seed = options.seed ?? (options.seedFile === undefined
      ? undefined
      : yield* readSeedFile(options.seedFile, servers))
    const authenticator = options.creds !== undefined
      ? credsAuthenticator(new TextEncoder().encode(options.creds.text))
      : seed === undefined
      ? undefined
      : nkeyAuthenticator(new TextEncoder().encode(seed))
    const connection = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          connect({
            servers: [...options.servers],
            name: options.name ?? user,
            inboxPrefix: Subjects.inbox(user),
            ...(authenticator === undefined ? {} : { authenticator }),
            ...(options.tls === undefined ? {} : { tls: tlsOptions(options.tls) }),
            reconnectTimeWait: options.reconnectWaitMs ?? 250,
            reconnectJitter: 50,
            reconnectJitterTLS: 50,
            maxReconnectAttempts: -1,
            timeout: options.connectTimeoutMs ?? 2_000,
            pingInterval: options.pingIntervalMs ?? 2_000,
            maxPingOut: 2
          }),
        catch: (error) => (error as Error).message ?? String(error)
      }).pipe(
        Effect.catchAll((reason) => Effect.flatMap(explained(options, reason), (said) => Effect.fail(said)))
      ),
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
