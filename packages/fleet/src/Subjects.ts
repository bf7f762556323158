/**
 * The NATS subjects of a fleet, in one place: what a machine serves and announces on, where a user's replies
 * go, where the registry keeps a machine's keys. The configuration file `nats/fleet.conf` grants exactly these.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import { InvalidName } from "./FleetErrors.js"

/**
 * The prefix of every subject of the fleet.
 *
 * @since 0.3.0
 */
export const root = "agent-terminal"

const namePattern = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Whether `name` can name a machine or a user: one NATS token of letters, digits, `_` and `-`.
 *
 * @since 0.3.0
 */
export const isValidName = (name: string): boolean => namePattern.test(name)

/**
 * `name`, or `InvalidName` when it cannot be a subject token.
 *
 * @since 0.3.0
 */
export const validName = (kind: "machine" | "user", name: string): Effect.Effect<string, InvalidName> =>
  isValidName(name) ? Effect.succeed(name) : Effect.fail(new InvalidName({ kind, name }))

/**
 * Where machine `machine` takes requests: clients publish, only the machine subscribes.
 *
 * @since 0.3.0
 */
export const rpc = (machine: string): string => `${root}.m.${machine}.rpc`

/**
 * Where machine `machine` takes the live view's requests (every owner's terminals, their keyboards): only the
 * users that serve people may publish here, never an agent's client; only the machine subscribes.
 *
 * @since 0.4.0
 */
export const oversee = (machine: string): string => `${root}.m.${machine}.oversee`

/**
 * The services a machine serves, each on a subject of its own: `rpc` (the daemon's protocol, every client)
 * and `oversee` (the live view's, only the users that serve people).
 *
 * @since 0.4.0
 */
export type Service = "rpc" | "oversee"

/**
 * The subject of `service` on machine `machine`.
 *
 * @since 0.4.0
 */
export const serviceSubject = (machine: string, service: Service): string =>
  service === "rpc" ? rpc(machine) : oversee(machine)

/**
 * Where machine `machine` announces its capacity: only the machine publishes.
 *
 * @since 0.3.0
 */
export const announce = (machine: string): string => `${root}.m.${machine}.announce`

/**
 * Every machine's announcements (the subject's second token names the machine that sent it).
 *
 * @since 0.3.0
 */
export const announceAll = `${root}.m.*.announce`

/**
 * A client asks every machine to announce now.
 *
 * @since 0.3.0
 */
export const discover = `${root}.discover`

/**
 * The private space of user `user`: its RPC sessions' inboxes and its NATS request inboxes.
 *
 * @since 0.3.0
 */
export const inbox = (user: string): string => `${root}.inbox.${user}`

const inboxPattern = /^agent-terminal\.inbox\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,64})$/

/**
 * The user of an RPC session's inbox (`agent-terminal.inbox.<user>.<session>`), or `undefined` for any other
 * subject: a machine answers nothing else, so a client cannot make it write where the client may not.
 *
 * @since 0.3.0
 */
export const inboxUser = (subject: string): string | undefined => inboxPattern.exec(subject)?.[1]

/**
 * The machine named by an announcement's subject, or `undefined` when the subject is not one.
 *
 * @since 0.3.0
 */
export const announcer = (subject: string): string | undefined => {
  const parts = subject.split(".")
  return parts.length === 4 && parts[0] === root && parts[1] === "m" && parts[3] === "announce" &&
      isValidName(parts[2]!)
    ? parts[2]
    : undefined
}

/**
 * The system's event of a closed connection in account `account` (imported into the fleet's account).
 *
 * @since 0.3.0
 */
export const disconnectEvents = (account: string): string => `$SYS.ACCOUNT.${account}.DISCONNECT`

/**
 * The registry's JetStream KV bucket.
 *
 * @since 0.3.0
 */
export const registryBucket = "agent-terminal-fleet"

/**
 * The registry key of terminal `id` on machine `machine` (only `machine` may write `<machine>.*`); an id's `~`
 * (not a key's character) becomes `.`, so `m2~k2x9q1~3f…` is kept at `m2.m2.k2x9q1.3f…`.
 *
 * @since 0.3.0
 */
export const registryKey = (machine: string, id: string): string => `${machine}.${id.replaceAll("~", ".")}`
