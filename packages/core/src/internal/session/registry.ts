/**
 * The service's registry of sessions and what every part of the service works with (`Deps`): who may see
 * which session (`lookup`), a place for a new one (`reserve`: a free name, a fresh id, within the owner's
 * cap, under the owner's sandbox policy read in the same step), and the owners' sandbox policies.
 */
import * as Effect from "effect/Effect"
import type * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import type { Audit } from "../../Audit.js"
import type * as EnvPolicy from "../../EnvPolicy.js"
import { DuplicateName, ForeignSession, LimitReached, SessionNotFound } from "../../Errors.js"
import type { OwnerId } from "../../Ids.js"
import { SessionId } from "../../Ids.js"
import type { ProcessInspector } from "../../ProcessInspector.js"
import type { PtyBackend } from "../../PtyBackend.js"
import type { Recordings } from "../../Recording.js"
import { Registry } from "../../Registry.js"
import type * as Sandbox from "../../Sandbox.js"
import type { SessionType } from "../../Session.js"
import type { ShellDialects } from "../../ShellDialects.js"
import type { TaskRuntime } from "../../TaskRuntime.js"
import type { TerminalConfig } from "../../TerminalConfig.js"
import type { Timers } from "../clock/wake.js"
import { randomHex, type SessionRuntime } from "./runtime.js"

/**
 * A session in the registry: starting (its name and its place in the owner's cap taken, not visible yet),
 * open, or closing (still there to be reached and retried, no longer listed).
 */
export type Entry =
  | { readonly _tag: "Opening"; readonly owner: OwnerId; readonly name: string }
  | { readonly _tag: "Open"; readonly runtime: SessionRuntime }
  | { readonly _tag: "Closing"; readonly runtime: SessionRuntime }

const ownerOf = (entry: Entry): OwnerId => entry._tag === "Opening" ? entry.owner : entry.runtime.owner
const nameOf = (entry: Entry): string => entry._tag === "Opening" ? entry.name : entry.runtime.name

/** Closed sessions remembered, so closing twice is not an error. */
const CLOSED_MEMORY = 1024

/** The registry of sessions. */
export const makeSessions = (): Registry<SessionId, Entry> => new Registry(ownerOf, CLOSED_MEMORY)

/** What every part of the service works with: its settings, the services it runs over, its registry. */
export interface Deps {
  readonly config: TerminalConfig
  readonly backend: PtyBackend["Type"]
  readonly inspector: ProcessInspector["Type"]
  readonly dialects: ShellDialects["Type"]
  readonly tasks: TaskRuntime["Type"]
  readonly environment: EnvPolicy.HostEnvironment["Type"]
  readonly sandbox: Sandbox.Sandbox["Type"]
  readonly timers: Timers
  readonly sessions: Registry<SessionId, Entry>
  /** Sessions asked for so far: a session without a name is named `<type>-<count>`. */
  readonly opened: { count: number }
  /** The sandbox policy of owners given their own (`configureSandbox`). */
  readonly policies: Map<OwnerId, Sandbox.Policy>
  /** Where each session's scope is forked from (closed, after every session, when the service ends). */
  readonly sessionsScope: Scope.Scope
  /** Who wrote what, and every change of control (`Audit`; in memory unless one is provided). */
  readonly audit: Audit["Type"]
  /** Where recordings go (`Recordings`; none unless one is provided). */
  readonly recordings: Recordings["Type"]
  /** Sessions opened or closed, leases and requests changed: what the live view's list listens to. */
  readonly changes: PubSub.PubSub<void>
  /** Run an effect from a callback (a lease's idle timer), in the service's runtime. */
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => void
}

/** The owner's open (or closing) session. */
export const lookup = (
  deps: Deps,
  owner: OwnerId,
  id: SessionId
): Effect.Effect<SessionRuntime, SessionNotFound | ForeignSession> =>
  Effect.suspend((): Effect.Effect<SessionRuntime, SessionNotFound | ForeignSession> => {
    const entry = deps.sessions.get(id)
    if (entry === undefined || entry._tag === "Opening") return Effect.fail(new SessionNotFound({ sessionId: id }))
    if (entry.runtime.owner !== owner) return Effect.fail(new ForeignSession({ sessionId: id }))
    return Effect.succeed(entry.runtime)
  })

/** The sandbox policy an owner's sessions are opened with now. */
export const policyOf = (deps: Deps, owner: OwnerId): Sandbox.Policy => deps.policies.get(owner) ?? deps.sandbox.policy

/** A new session's place: its id and name, held in the registry, and the policy it is opened with. */
export interface Reservation {
  readonly id: SessionId
  readonly name: string
  readonly policy: Sandbox.Policy
}

/**
 * Take a place for a new session of `owner`: refused when the name is taken (`DuplicateName`), the owner
 * holds `maxTerminalsPerOwner` sessions already, or the server `maxTerminals` (`LimitReached`, scope
 * `server`; its last sixteenth kept for owners who hold none). The owner's policy is read in the same
 * step that registers the opening session, so a concurrent `configureSandbox` either sees this session or
 * is seen by it.
 */
export const reserve = (
  deps: Deps,
  owner: OwnerId,
  type: SessionType,
  requested: string | undefined
): Effect.Effect<Reservation, DuplicateName | LimitReached> =>
  Effect.suspend((): Effect.Effect<Reservation, DuplicateName | LimitReached> => {
    const count = ++deps.opened.count
    const name = requested ?? `${type}-${count}`
    for (const [id, entry] of deps.sessions.entries()) {
      if (ownerOf(entry) === owner && nameOf(entry) === name) {
        return Effect.fail(new DuplicateName({ name, sessionId: id }))
      }
    }
    const max = deps.config.maxTerminalsPerOwner
    const held = deps.sessions.countOf(owner)
    if (held >= max) return Effect.fail(new LimitReached({ limit: "terminals", max }))
    const serverMax = deps.config.maxTerminals
    // the last sixteenth of the server's places (at least one) goes only to owners who hold none
    const open = held === 0 ? serverMax : serverMax - Math.max(1, Math.floor(serverMax / 16))
    if (deps.sessions.size >= open) {
      return Effect.fail(new LimitReached({ limit: "terminals", max: serverMax, scope: "server" }))
    }
    const id = deps.sessions.mint(() => SessionId.make(`${deps.config.sessionIdPrefix}${randomHex()}`))
    if (id === undefined) return Effect.dieMessage("session ids keep colliding: the random source is broken")
    const policy = policyOf(deps, owner)
    deps.sessions.set(id, { _tag: "Opening", owner, name })
    return Effect.succeed({ id, name, policy })
  })
