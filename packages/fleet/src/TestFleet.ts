/**
 * A real NATS cluster for tests and benchmarks: N `nats-server` processes clustered with routes (authenticated)
 * and JetStream, on loopback with free ports, in a temporary directory, each from a per-server file that
 * includes the fleet's own configuration (`nats/fleet.conf`, the file a deployment uses). Every user of that
 * file gets a fresh nkey; with `tls`, a CA made by `openssl` signs the servers' certificates (and the clients',
 * when the servers verify them). Servers can be killed and started again; everything ends with the scope.
 *
 * @since 0.3.0
 */
import { jetstreamManager, StorageType } from "@nats-io/jetstream"
import { createUser } from "@nats-io/nkeys"
import { connect, nkeyAuthenticator } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as certificates from "./internal/certificates.js"
import * as natsServer from "./internal/natsServer.js"
import * as netns from "./internal/netns.js"
import type * as Nats from "./Nats.js"

/**
 * The users of `nats/fleet.conf`: the operator, four machines, three clients, one server of people (`p1`).
 *
 * @since 0.3.0
 */
export const users = ["admin", "m1", "m2", "m3", "m4", "c1", "c2", "c3", "p1"] as const

/**
 * @since 0.3.0
 */
export type User = typeof users[number]

/**
 * The environment variable that carries a user's public nkey into `fleet.conf`.
 *
 * @since 0.3.0
 */
export const nkeyVariable = (user: User): string => user === "admin" ? "FLEET_ADMIN_NKEY" : `${user.toUpperCase()}_NKEY`

/**
 * The committed configuration file every server includes.
 *
 * @since 0.3.0
 */
export const configFile: string = fileURLToPath(new URL("../nats/fleet.conf", import.meta.url))

/**
 * A user's nkey: the public key (in the servers' configuration) and the seed (with the user), also in a file.
 *
 * @since 0.3.0
 */
export interface UserKey {
  readonly publicKey: string
  readonly seed: string
  readonly seedFile: string
}

/**
 * One server of the cluster.
 *
 * @since 0.3.0
 */
export interface Server {
  readonly name: string
  readonly host: string
  readonly port: number
  readonly url: string
  readonly running: () => boolean
  readonly pid: () => number | undefined
  /** Send `signal` (default SIGKILL) and wait for the exit. */
  readonly kill: (signal?: NodeJS.Signals) => Effect.Effect<void>
  /** Start it again (same configuration, same JetStream store) and wait until it is ready. */
  readonly start: Effect.Effect<void, Error>
}

/**
 * Options of the test fleet.
 *
 * @since 0.3.0
 */
export interface Options {
  /** How many servers (default 3). */
  readonly servers?: number | undefined
  /** The address each server listens on for clients (default 127.0.0.1), e.g. a network namespace's peer. */
  readonly hosts?: ReadonlyArray<string | undefined> | undefined
  /** TLS on every client connection; `verifyClients`: the servers also ask for a client certificate. */
  readonly tls?: boolean | { readonly verifyClients: boolean } | undefined
}

/**
 * The TLS files of a fleet: the CA clients trust, a client certificate it signed, and a second CA that signed
 * nothing of the fleet (with a certificate of its own): what an impostor has.
 *
 * @since 0.3.0
 */
export interface Tls {
  readonly caFile: string
  readonly client: certificates.Certificate
  readonly untrustedCaFile: string
  readonly untrustedClient: certificates.Certificate
  readonly verifyClients: boolean
}

/**
 * A running fleet.
 *
 * @since 0.3.0
 */
export interface Fleet {
  readonly dir: string
  readonly servers: ReadonlyArray<Server>
  readonly urls: ReadonlyArray<string>
  readonly keys: { readonly [user in User]: UserKey }
  readonly tls: Tls | undefined
  /** How `user` connects (every server's URL, its seed, the fleet's TLS files). */
  readonly connectOptions: (user: User, extra?: Partial<Nats.Options>) => Nats.Options
  /** The server that leads JetStream stream `stream` now (asked as the operator). */
  readonly leaderOf: (stream: string) => Effect.Effect<Server | undefined, Error>
}

const serverConfig = (fields: {
  readonly name: string
  readonly host: string
  readonly port: number
  readonly clusterPort: number
  readonly routes: ReadonlyArray<number>
  readonly routePassword: string
  readonly store: string
  readonly tls:
    | { readonly cert: certificates.Certificate; readonly caFile: string; readonly verify: boolean }
    | undefined
}) =>
  [
    `server_name: ${fields.name}`,
    `listen: "${fields.host}:${fields.port}"`,
    `jetstream { store_dir: "${fields.store}", max_memory_store: 256MB, max_file_store: 2GB }`,
    ...(fields.routes.length === 0 ? [] : [
      "cluster {",
      "  name: agent-terminal-test",
      `  listen: "127.0.0.1:${fields.clusterPort}"`,
      `  authorization { user: route, password: "${fields.routePassword}" }`,
      `  routes: [${
        fields.routes.map((port) => `"nats-route://route:${fields.routePassword}@127.0.0.1:${port}"`).join(", ")
      }]`,
      "}"
    ]),
    ...(fields.tls === undefined ? [] : [
      "tls {",
      `  cert_file: "${fields.tls.cert.certFile}"`,
      `  key_file: "${fields.tls.cert.keyFile}"`,
      `  ca_file: "${fields.tls.caFile}"`,
      `  verify: ${fields.tls.verify}`,
      "  timeout: 2",
      "}"
    ]),
    `include "fleet.conf"`,
    ""
  ].join("\n")

const makeKeys = (dir: string) => {
  const credentials = path.join(dir, "credentials")
  fs.mkdirSync(credentials, { mode: 0o700 })
  return Object.fromEntries(users.map((user) => {
    const pair = createUser()
    const seed = new TextDecoder().decode(pair.getSeed())
    const seedFile = path.join(credentials, `${user}.nk`)
    fs.writeFileSync(seedFile, `${seed}\n`, { mode: 0o600 })
    return [user, { publicKey: pair.getPublicKey(), seed, seedFile }]
  })) as { readonly [user in User]: UserKey }
}

const makeTls = (dir: string, hosts: ReadonlyArray<string>, verifyClients: boolean) => {
  const tlsDir = path.join(dir, "tls")
  fs.mkdirSync(tlsDir, { mode: 0o700 })
  const ca = certificates.authority(tlsDir, "fleet-ca")
  const server = certificates.sign(tlsDir, ca, "server", { server: { ips: [...new Set(hosts)], dns: ["localhost"] } })
  const client = certificates.sign(tlsDir, ca, "client", "client")
  const untrusted = certificates.authority(tlsDir, "untrusted-ca")
  const untrustedClient = certificates.sign(tlsDir, untrusted, "untrusted-client", "client")
  return {
    server,
    files: { caFile: ca.certFile, client, untrustedCaFile: untrusted.certFile, untrustedClient, verifyClients }
  }
}

/**
 * Wait until JetStream answers for the fleet's account (its meta leader is elected) and can place a stream on
 * every server: an elected leader that does not know its peers yet refuses a replicated stream ("no suitable
 * peers for placement"), which a test's registry bucket (3 replicas) met under load.
 */
const jetStreamReady = (urls: ReadonlyArray<string>, admin: UserKey, tls: Tls | undefined) =>
  Effect.tryPromise({
    try: async () => {
      const connection = await connect({
        servers: [...urls],
        authenticator: nkeyAuthenticator(new TextEncoder().encode(admin.seed)),
        ...(tls === undefined ? {} : {
          tls: { caFile: tls.caFile, certFile: tls.client.certFile, keyFile: tls.client.keyFile }
        })
      })
      try {
        // the wall clock: a Promise polling a real server, sleeping on setTimeout (no Effect clock runs here)
        const deadline = Date.now() + 30_000
        for (;;) {
          try {
            const manager = await jetstreamManager(connection, { timeout: 2_000 })
            await manager.getAccountInfo()
            const probe = `at_ready_${crypto.randomBytes(4).toString("hex")}`
            await manager.streams.add({
              name: probe,
              subjects: [`at-ready.${probe}`],
              num_replicas: urls.length,
              storage: StorageType.Memory
            })
            await manager.streams.delete(probe)
            return
          } catch (error) {
            if (Date.now() > deadline) throw error // the wall clock, as above
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
        }
      } finally {
        await connection.close()
      }
    },
    catch: (error) => new Error(`JetStream of the test fleet did not come up: ${String(error)}`)
  })

/**
 * Start a fleet; the scope's end kills every server and removes the directory.
 *
 * @since 0.3.0
 */
export const make = (options: Options = {}): Effect.Effect<Fleet, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const count = options.servers ?? 3
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "at-fleet-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    fs.copyFileSync(configFile, path.join(dir, "fleet.conf"))
    const keys = makeKeys(dir)
    const hosts = Array.from({ length: count }, (_, i) => options.hosts?.[i] ?? "127.0.0.1")
    const verifyClients = typeof options.tls === "object" && options.tls.verifyClients
    const tls = options.tls ? makeTls(dir, hosts, verifyClients) : undefined
    const ports = yield* Effect.forEach(hosts, (host) => natsServer.freePort(host))
    const clusterPorts = yield* Effect.forEach(hosts, () => natsServer.freePort("127.0.0.1"))
    const routePassword = crypto.randomBytes(16).toString("hex")
    const env = Object.fromEntries(users.map((user) => [nkeyVariable(user), keys[user].publicKey]))
    const scheme = tls === undefined ? "nats" : "tls"

    const servers = hosts.map((host, i): Server & { readonly release: () => Promise<void> } => {
      const name = `n${i + 1}`
      const config = path.join(dir, `${name}.conf`)
      fs.writeFileSync(
        config,
        serverConfig({
          name,
          host,
          port: ports[i]!,
          clusterPort: clusterPorts[i]!,
          routes: clusterPorts.filter((_, j) => j !== i),
          routePassword,
          store: path.join(dir, name),
          tls: tls === undefined ? undefined : { cert: tls.server, caFile: tls.files.caFile, verify: verifyClients }
        }),
        { mode: 0o600 }
      )
      let current: natsServer.Process | undefined
      const running = () =>
        current !== undefined && current.child.exitCode === null && current.child.signalCode === null
      return {
        name,
        host,
        port: ports[i]!,
        url: `${scheme}://${host}:${ports[i]}`,
        running,
        pid: () => (running() ? current?.child.pid : undefined),
        kill: (signal) =>
          Effect.promise(() => current === undefined ? Promise.resolve() : natsServer.stop(current, signal)),
        start: Effect.tryPromise({
          try: async () => {
            if (running()) return
            current = await natsServer.start(config, path.join(dir, `${name}.log`), env)
          },
          catch: (error) => error as Error
        }),
        release: () => current === undefined ? Promise.resolve() : natsServer.stop(current)
      }
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(servers.map((server) => server.release()))))
    yield* Effect.forEach(servers, (server) => server.start, { concurrency: "unbounded", discard: true })
    const urls = servers.map((server) => server.url)
    const tlsFiles = tls?.files
    yield* jetStreamReady(urls, keys.admin, tlsFiles)
    const connectOptions = (user: User, extra: Partial<Nats.Options> = {}): Nats.Options => ({
      servers: urls,
      user,
      seed: keys[user].seed,
      ...(tlsFiles === undefined ? {} : {
        tls: { caFile: tlsFiles.caFile, certFile: tlsFiles.client.certFile, keyFile: tlsFiles.client.keyFile }
      }),
      ...extra
    })
    const leaderOf = (stream: string) =>
      Effect.tryPromise({
        try: async () => {
          const options = connectOptions("admin")
          const connection = await connect({
            servers: [...urls],
            authenticator: nkeyAuthenticator(new TextEncoder().encode(keys.admin.seed)),
            ...(options.tls === undefined ? {} : { tls: { ...options.tls } as Record<string, string> })
          })
          try {
            const manager = await jetstreamManager(connection, { timeout: 2_000 })
            const info = await manager.streams.info(stream)
            return servers.find((server) => server.name === info.cluster?.leader)
          } finally {
            await connection.close()
          }
        },
        catch: (error) => new Error(`no leader of ${stream}: ${String(error)}`)
      })
    return { dir, servers, urls, keys, tls: tlsFiles, connectOptions, leaderOf }
  })

/**
 * A second machine on this host: a network namespace and a veth pair (root and `ip netns` needed), removed
 * with the scope. A server listening on `hostAddress` is the only one a process in the namespace can reach.
 * Another `kind` (its names and address range) keeps another test's namespaces apart from the fleet's.
 *
 * @since 0.3.0
 */
export const networkNamespaceOf = (kind: netns.Kind): Effect.Effect<netns.Namespace, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => netns.make(kind),
      catch: (error) => new Error(`cannot make a network namespace: ${error}`)
    }),
    (namespace) => Effect.sync(() => namespace.remove())
  )

/**
 * The fleet's second machine: {@link networkNamespaceOf} with names `at-fleet-*` and addresses 10.214.N.0/30.
 *
 * @since 0.3.0
 */
export const networkNamespace: Effect.Effect<netns.Namespace, Error, Scope.Scope> = networkNamespaceOf(
  netns.fleetKind
)

/**
 * Whether this host can make a network namespace (root, iproute2).
 *
 * @since 0.3.0
 */
export const canMakeNetworkNamespace: () => boolean = netns.available
