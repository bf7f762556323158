/**
 * `agent-terminal serve --nats URL --machine NAME`: the daemon as a machine of the fleet. Loaded only with
 * `--nats`, so a daemon without it loads nothing of NATS.
 */
import type { TerminalConfig } from "@agent-terminal/core"
import { DaemonServer } from "@agent-terminal/daemon"
import { FleetIds, Machine, Subjects } from "@agent-terminal/fleet"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as FleetClient from "./FleetClient.js"
import type * as NatsOptions from "./NatsOptions.js"

/** Options the machine cannot start with. */
export interface Refusal {
  readonly field: string
  readonly message: string
}

/** The terminal settings of this run, and the daemon serving as the machine (or why it cannot). */
export const plan = (
  parsed: NatsOptions.MachineOptions,
  servers: ReadonlyArray<string>,
  settings: TerminalConfig.TerminalConfig,
  daemon: Omit<DaemonServer.Options, "transport">
) => {
  const machine = Option.getOrUndefined(parsed.machine)
  if (machine === undefined) {
    return Either.left<Refusal>({ field: "machine", message: "--nats needs --machine NAME: this machine's name" })
  }
  if (!Subjects.isValidName(machine) || machine.length > FleetIds.maxMachineLength) {
    return Either.left<Refusal>({
      field: "machine",
      message: `invalid configuration machine: ${JSON.stringify(machine.slice(0, 80))} must be 1 to ` +
        `${FleetIds.maxMachineLength} letters, digits, _ or -`
    })
  }
  const badLabel = parsed.label.find((label) => !Subjects.isValidName(label))
  if (badLabel !== undefined) {
    return Either.left<Refusal>({
      field: "label",
      message: `invalid configuration label: ${JSON.stringify(badLabel.slice(0, 80))} must be 1 to 64 letters, ` +
        "digits, _ or -"
    })
  }
  const run = FleetIds.newRun()
  const nats = FleetClient.natsLayer(parsed, servers, machine)
  const layer = Layer.unwrapScoped(
    Effect.map(
      Machine.transport({
        machine,
        run,
        labels: parsed.label,
        maxTerminals: settings.maxTerminals
      }),
      (transport) => DaemonServer.layer({ ...daemon, transport })
    )
  ).pipe(Layer.provide(nats))
  return Either.right({
    settings: { ...settings, sessionIdPrefix: FleetIds.prefix(machine, run) },
    layer
  })
}
