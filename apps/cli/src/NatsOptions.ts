/**
 * The options of a fleet over NATS (`serve --nats`, and the fleet's clients), each with an `AGENT_TERMINAL_*`
 * environment fallback: declared apart from the fleet (`@agent-terminal/fleet`), loaded only when one starts.
 */
import { Options } from "@effect/cli"
import * as Option from "effect/Option"
import { type Parsed, text } from "./CliOptions.js"

/** How to reach NATS and as whom (the machine and the client share these). */
export const connectionOptions = {
  nats: text(
    "nats",
    "AGENT_TERMINAL_NATS",
    "Join the fleet through NATS at these servers (comma-separated nats:// or tls:// URLs)."
  ),
  natsUser: text(
    "nats-user",
    "AGENT_TERMINAL_NATS_USER",
    "The fleet user this process connects as: its replies arrive under agent-terminal.inbox.<user> (a " +
      "machine's default: its --machine name)."
  ),
  natsNkey: text(
    "nats-nkey",
    "AGENT_TERMINAL_NATS_NKEY",
    "A file holding the user's nkey seed (SU…), read at most 4 KiB."
  ),
  natsCreds: text(
    "nats-creds",
    "AGENT_TERMINAL_NATS_CREDS",
    "A NATS .creds file (the user's JWT and nkey seed) of an operator deployment, instead of --nats-nkey; " +
      "the JWT's name is the fleet user when --nats-user is not given."
  ),
  natsCa: text("nats-ca", "AGENT_TERMINAL_NATS_CA", "TLS: the CA that signed the NATS servers' certificates."),
  natsCert: text("nats-cert", "AGENT_TERMINAL_NATS_CERT", "TLS: this process's certificate, when servers ask."),
  natsKey: text("nats-key", "AGENT_TERMINAL_NATS_KEY", "TLS: the key of --nats-cert.")
}

/** The options of a machine (`serve --nats`). */
export const machineOptions = {
  ...connectionOptions,
  machine: text(
    "machine",
    "AGENT_TERMINAL_MACHINE",
    "With --nats: this machine's name in the fleet (letters, digits, _ and -; at most 32): it serves " +
      "agent-terminal.m.<machine>.rpc and its terminal ids start with it."
  ),
  label: Options.text("label").pipe(
    Options.repeated,
    Options.withDescription("With --nats: a label placement may ask for (gpu, build…). Repeatable.")
  )
}

/** The connection options, as parsed. */
export type ConnectionOptions = {
  readonly [K in keyof typeof connectionOptions]: Parsed<(typeof connectionOptions)[K]>
}

/** The machine options, as parsed. */
export type MachineOptions = { readonly [K in keyof typeof machineOptions]: Parsed<(typeof machineOptions)[K]> }

/** The servers of `--nats`, or none. */
export const serversOf = (parsed: ConnectionOptions): ReadonlyArray<string> | undefined =>
  Option.match(parsed.nats, {
    onNone: () => undefined,
    onSome: (value) => value.split(",").map((url) => url.trim()).filter((url) => url !== "")
  })
