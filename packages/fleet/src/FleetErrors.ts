/**
 * The errors of the fleet: each carries its facts as fields and renders a `message` from them. The first two
 * are what a call over NATS can end with besides its own errors; the caller decides what to retry (nothing is
 * retried for it: a call whose answer was lost may or may not have run).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * The machine does not answer: nothing serves its subject (NATS answered "no responders"), or it stopped
 * answering the pings sent while a call or stream was in flight. `since` is when that was first seen (epoch
 * milliseconds).
 *
 * @since 0.3.0
 */
export class MachineUnavailable extends Schema.TaggedError<MachineUnavailable>(
  "@agent-terminal/MachineUnavailable"
)("MachineUnavailable", { machine: Schema.String, since: Schema.Number, reason: Schema.String }) {
  override get message() {
    return `machine ${this.machine} is unavailable since ${new Date(this.since).toISOString()}: ${this.reason}`
  }
}

/**
 * The way to the machine broke: this client's NATS connection dropped (a call in flight may or may not have
 * run; one made while it reconnects is not sent), or the machine no longer knows this client's session (it
 * restarted, or the session expired): `reason` says which.
 *
 * @since 0.3.0
 */
export class ConnectionLost extends Schema.TaggedError<ConnectionLost>("@agent-terminal/ConnectionLost")(
  "ConnectionLost",
  { machine: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `the connection to machine ${this.machine} was lost: ${this.reason}`
  }
}

/**
 * The machine refused this client's session (a protocol it does not speak, too many sessions, a reply subject
 * outside the client's inbox).
 *
 * @since 0.3.0
 */
export class MachineRefused extends Schema.TaggedError<MachineRefused>("@agent-terminal/MachineRefused")(
  "MachineRefused",
  { machine: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `machine ${this.machine} refused the session: ${this.reason}`
  }
}

/**
 * No NATS server of the list could be reached, or every one refused this client (credentials, TLS).
 *
 * @since 0.3.0
 */
export class NatsUnavailable extends Schema.TaggedError<NatsUnavailable>("@agent-terminal/NatsUnavailable")(
  "NatsUnavailable",
  { servers: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `cannot connect to NATS at ${this.servers}: ${this.reason}`
  }
}

/**
 * Another process already serves this machine's subject: one machine name, one server.
 *
 * @since 0.3.0
 */
export class MachineNameTaken extends Schema.TaggedError<MachineNameTaken>("@agent-terminal/MachineNameTaken")(
  "MachineNameTaken",
  { machine: Schema.String }
) {
  override get message() {
    return `machine ${this.machine} is already served by another process: give this one another name`
  }
}

/**
 * A machine or user name that cannot be a NATS subject token.
 *
 * @since 0.3.0
 */
export class InvalidName extends Schema.TaggedError<InvalidName>("@agent-terminal/InvalidName")(
  "InvalidName",
  { kind: Schema.String, name: Schema.String }
) {
  override get message() {
    return `invalid ${this.kind} name ${JSON.stringify(this.name.slice(0, 80))}: use 1 to 64 letters, digits, ` +
      "'_' or '-'"
  }
}

/**
 * No live machine fits the request (the named machine is not in the fleet, or none has the labels or room).
 *
 * @since 0.3.0
 */
export class NoMachineAvailable extends Schema.TaggedError<NoMachineAvailable>(
  "@agent-terminal/NoMachineAvailable"
)("NoMachineAvailable", { wanted: Schema.String, reason: Schema.String }) {
  override get message() {
    return `no machine for ${this.wanted}: ${this.reason}`
  }
}

/**
 * NATS refused this user a subject: its permissions do not allow it (a client serving a machine's subject, a
 * machine another machine's).
 *
 * @since 0.3.0
 */
export class NotPermitted extends Schema.TaggedError<NotPermitted>("@agent-terminal/NotPermitted")(
  "NotPermitted",
  { user: Schema.String, subject: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `NATS does not permit user ${this.user} on ${this.subject}: ${this.reason}`
  }
}

/**
 * The fleet registry (the JetStream KV bucket) cannot be read now: JetStream has no quorum, or the bucket is
 * missing.
 *
 * @since 0.3.0
 */
export class RegistryUnavailable extends Schema.TaggedError<RegistryUnavailable>(
  "@agent-terminal/RegistryUnavailable"
)("RegistryUnavailable", { reason: Schema.String }) {
  override get message() {
    return `the fleet registry is unavailable: ${this.reason}`
  }
}
