/**
 * The fleet for `mcp --nats` (and `console --nats`): the terminal services over every machine of the fleet
 * (`FleetTerminal`), connected to NATS as the options say. Loaded only with `--nats`.
 */
import type { Ids } from "@agent-terminal/core"
import { FleetTerminal, Nats, Subjects } from "@agent-terminal/fleet"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NatsOptions from "./NatsOptions.js"

/**
 * The fleet user the options name: `--nats-user`, else a machine's own name, else the name in the
 * credentials' JWT, else `client`.
 */
export const userOf = (
  parsed: NatsOptions.ConnectionOptions,
  creds: Nats.Credentials | undefined,
  machine: string | undefined
): string =>
  Option.getOrElse(
    parsed.natsUser,
    () => machine ?? (creds?.name !== undefined && Subjects.isValidName(creds.name) ? creds.name : "client")
  )

/** The credentials of `--nats-creds`, when given. */
export const credentialsOf = (parsed: NatsOptions.ConnectionOptions, servers: ReadonlyArray<string>) =>
  Option.match(parsed.natsCreds, {
    onNone: () => Effect.succeed(undefined),
    onSome: (file) => Nats.readCredentials(file, servers.join(","))
  })

/**
 * The NATS connection of a client or machine, as the options say (`servers` from `--nats`; `machine`: the
 * machine's name, its user's default).
 */
export const natsLayer = (
  parsed: NatsOptions.ConnectionOptions,
  servers: ReadonlyArray<string>,
  machine?: string
) =>
  Layer.unwrapEffect(Effect.map(credentialsOf(parsed, servers), (creds) => {
    const user = userOf(parsed, creds, machine)
    return Nats.layer({
      servers,
      user,
      seedFile: Option.getOrUndefined(parsed.natsNkey),
      creds,
      name: `agent-terminal ${machine ?? user}`,
      tls: Option.isNone(parsed.natsCa) && Option.isNone(parsed.natsCert) ? undefined : {
        caFile: Option.getOrUndefined(parsed.natsCa),
        certFile: Option.getOrUndefined(parsed.natsCert),
        keyFile: Option.getOrUndefined(parsed.natsKey)
      }
    })
  }))

/**
 * `PtyService`, `TaskRuntime`, `Exec` over the fleet, as owner `owner` on the machines (anonymous when none),
 * acting for `actsFor` only (a call for another owner is `OwnerMismatch`).
 */
export const fleetLayer = (
  parsed: NatsOptions.ConnectionOptions,
  servers: ReadonlyArray<string>,
  owner: Option.Option<string>,
  client: string,
  actsFor?: Ids.OwnerId
) =>
  FleetTerminal.layer({ owner: Option.getOrUndefined(owner), client, actsFor }).pipe(
    Layer.provide(natsLayer(parsed, servers))
  )
