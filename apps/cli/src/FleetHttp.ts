/**
 * `mcp --nats --http`: the terminal services over the fleet for many owners (`FleetTerminal` with `owners`:
 * each HTTP owner has sessions of its own with the machines) and the live view's `Oversight` over every
 * machine (`FleetOversight`), on one NATS connection. Loaded only with `--nats --http`.
 */
import type { Ids } from "@agent-terminal/core"
import { FleetOversight, FleetTerminal } from "@agent-terminal/fleet"
import { McpHttp } from "@agent-terminal/server"
import * as Layer from "effect/Layer"
import { natsLayer } from "./FleetClient.js"
import type * as NatsOptions from "./NatsOptions.js"

const namedPrefix = McpHttp.namedOwner("")

/**
 * The machine owner of an HTTP owner: a named one (`Agent-Terminal-Owner: alice`) is owner `alice` on every
 * machine (under this server's NATS user, so it finds its terminals again after a restart); an anonymous one
 * is anonymous there too (its terminals close with its sessions).
 */
export const machineOwnerOf = (owner: Ids.OwnerId): string | undefined =>
  owner.startsWith(namedPrefix) ? owner.slice(namedPrefix.length) : undefined

/** `mcp --nats --http`: the terminal services for many owners, and the live view over every machine. */
export const layer = (parsed: NatsOptions.ConnectionOptions, servers: ReadonlyArray<string>) =>
  Layer.merge(
    FleetTerminal.layer({ owners: { nameOf: machineOwnerOf }, client: "mcp-http" }),
    FleetOversight.layer({ client: "mcp-http live view" })
  ).pipe(Layer.provide(natsLayer(parsed, servers)))
