/**
 * The fleet for `mcp --nats` (and `console --nats`): the terminal services over every machine of the fleet
 * (`FleetTerminal`), connected to NATS as the options say. Loaded only with `--nats`.
 */
import type { Ids } from "@agent-terminal/core"
import { FleetTerminal, Nats } from "@agent-terminal/fleet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NatsOptions from "./NatsOptions.js"

/** The NATS connection of a client or machine, as the options say (`servers` from `--nats`). */
export const natsLayer = (
  parsed: NatsOptions.ConnectionOptions,
  servers: ReadonlyArray<string>,
  fallbackUser: string
) =>
  Nats.layer({
    servers,
    user: Option.getOrElse(parsed.natsUser, () => fallbackUser),
    seedFile: Option.getOrUndefined(parsed.natsNkey),
    name: `agent-terminal ${fallbackUser}`,
    tls: Option.isNone(parsed.natsCa) && Option.isNone(parsed.natsCert) ? undefined : {
      caFile: Option.getOrUndefined(parsed.natsCa),
      certFile: Option.getOrUndefined(parsed.natsCert),
      keyFile: Option.getOrUndefined(parsed.natsKey)
    }
  })

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
    Layer.provide(natsLayer(parsed, servers, "client"))
  )
