/**
 * A NATS server in operator mode (decentralized JWT auth) for tests: an operator, the system account, and the
 * fleet's account (JetStream on, the system's disconnect events imported under the subject machines listen
 * on), with a `.creds` file per user whose permissions are those of `nats/fleet.conf`. The JWTs are made here
 * with nkeys and preloaded into the server (`resolver: MEMORY`); everything ends with the scope.
 *
 * @since 0.3.0
 */
import { createAccount, createOperator, createUser } from "@nats-io/nkeys"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as jwt from "./internal/jwt.js"
import * as natsServer from "./internal/natsServer.js"
import * as Subjects from "./Subjects.js"

/**
 * Options of the operator-mode server.
 *
 * @since 0.3.0
 */
export interface Options {
  /** The machines' users (default m1…m4) and the clients' (default c1…c3); `admin` is always made. */
  readonly machines?: ReadonlyArray<string> | undefined
  readonly clients?: ReadonlyArray<string> | undefined
}

/**
 * The running server.
 *
 * @since 0.3.0
 */
export interface Operator {
  readonly dir: string
  readonly url: string
  readonly pid: () => number | undefined
  /** The `.creds` file of each user (the machines, the clients, and `admin`: every permission). */
  readonly credsFiles: Readonly<Record<string, string>>
  /** The fleet account's public key (the system names it in `$SYS.ACCOUNT.<key>.…`). */
  readonly account: string
}

const registryApi = `KV_${Subjects.registryBucket}`

/**
 * What machine `machine` may do: as `nats/fleet.conf` grants it.
 *
 * @since 0.3.0
 */
export const machinePermissions = (machine: string): jwt.Permissions => ({
  publish: [
    Subjects.rpc(machine),
    Subjects.oversee(machine),
    Subjects.announce(machine),
    `$KV.${Subjects.registryBucket}.${machine}.>`,
    "$JS.API.INFO",
    `$JS.API.STREAM.INFO.${registryApi}`
  ],
  subscribe: [
    Subjects.rpc(machine),
    Subjects.oversee(machine),
    Subjects.discover,
    `${Subjects.inbox(machine)}.>`,
    Subjects.disconnectEvents("FLEET")
  ],
  responses: { max: 100_000, ttlMs: 10_000 }
})

/**
 * What client `client` may do: as `nats/fleet.conf` grants it.
 *
 * @since 0.3.0
 */
export const clientPermissions = (client: string): jwt.Permissions => ({
  publish: [
    "agent-terminal.m.*.rpc",
    Subjects.discover,
    "$JS.API.INFO",
    `$JS.API.STREAM.INFO.${registryApi}`,
    `$JS.API.STREAM.MSG.GET.${registryApi}`,
    `$JS.API.DIRECT.GET.${registryApi}`,
    `$JS.API.DIRECT.GET.${registryApi}.>`,
    `$JS.API.CONSUMER.CREATE.${registryApi}`,
    `$JS.API.CONSUMER.CREATE.${registryApi}.>`,
    `$JS.API.CONSUMER.INFO.${registryApi}.>`,
    `$JS.API.CONSUMER.DELETE.${registryApi}.>`,
    `$JS.FC.${registryApi}.>`
  ],
  subscribe: [`${Subjects.inbox(client)}.>`, Subjects.announceAll]
})

/**
 * Start the server; the scope's end kills it and removes its directory.
 *
 * @since 0.3.0
 */
export const make = (options: Options = {}): Effect.Effect<Operator, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "at-operator-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const issuedAt = yield* Clock.currentTimeMillis
    const operator = createOperator()
    const system = createAccount()
    const fleet = createAccount()
    const disconnects = Subjects.disconnectEvents(fleet.getPublicKey())
    const operatorJwt = jwt.encode(operator, operator.getPublicKey(), "agent-terminal-test", {
      type: "operator",
      system_account: system.getPublicKey()
    }, issuedAt)
    const systemJwt = jwt.encode(operator, system.getPublicKey(), "SYS", {
      type: "account",
      limits: jwt.accountLimits(false),
      exports: [{ name: "fleet disconnects", subject: disconnects, type: "stream" }]
    }, issuedAt)
    // The system names the account by its key; machines listen under the name fleet.conf gives it.
    const fleetJwt = jwt.encode(operator, fleet.getPublicKey(), "FLEET", {
      type: "account",
      limits: jwt.accountLimits(true),
      imports: [{
        name: "fleet disconnects",
        subject: disconnects,
        account: system.getPublicKey(),
        type: "stream",
        local_subject: Subjects.disconnectEvents("FLEET")
      }]
    }, issuedAt)
    const credentials = path.join(dir, "credentials")
    fs.mkdirSync(credentials, { mode: 0o700 })
    const users: Array<readonly [string, jwt.Permissions | undefined]> = [
      ["admin", undefined],
      ...(options.machines ?? ["m1", "m2", "m3", "m4"]).map((m) => [m, machinePermissions(m)] as const),
      ...(options.clients ?? ["c1", "c2", "c3"]).map((c) => [c, clientPermissions(c)] as const)
    ]
    const files: Record<string, string> = {}
    for (const [name, permissions] of users) {
      const user = createUser()
      const file = path.join(credentials, `${name}.creds`)
      const userJwt = jwt.encode(fleet, user.getPublicKey(), name, jwt.userClaims(permissions), issuedAt)
      fs.writeFileSync(file, jwt.credsText(userJwt, new TextDecoder().decode(user.getSeed())), { mode: 0o600 })
      files[name] = file
    }
    const port = yield* natsServer.freePort("127.0.0.1")
    const config = path.join(dir, "operator.conf")
    fs.writeFileSync(
      config,
      [
        "server_name: op1",
        `listen: "127.0.0.1:${port}"`,
        `jetstream { store_dir: "${path.join(dir, "store")}", max_memory_store: 256MB, max_file_store: 1GB }`,
        `operator: "${operatorJwt}"`,
        `system_account: ${system.getPublicKey()}`,
        "resolver: MEMORY",
        "resolver_preload: {",
        `  ${system.getPublicKey()}: "${systemJwt}"`,
        `  ${fleet.getPublicKey()}: "${fleetJwt}"`,
        "}",
        ""
      ].join("\n"),
      { mode: 0o600 }
    )
    const server = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => natsServer.start(config, path.join(dir, "operator.log"), {}),
        catch: (error) => error as Error
      }),
      (server) => Effect.promise(() => natsServer.stop(server))
    )
    return {
      dir,
      url: `nats://127.0.0.1:${port}`,
      pid: () => server.child.exitCode === null && server.child.signalCode === null ? server.child.pid : undefined,
      credsFiles: files,
      account: fleet.getPublicKey()
    }
  })
