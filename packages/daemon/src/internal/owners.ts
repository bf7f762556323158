import { Ids, PtyService, TaskRuntime } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Credentials from "../Credentials.js"
import type { HelloResult, OwnerCredential } from "../Protocol.js"
import { HandshakeRequired, OwnerRejected, PROTOCOL_VERSION, ProtocolMismatch } from "../Protocol.js"
import type { EndReason } from "../TerminalRegistry.js"
import { TerminalRegistry } from "../TerminalRegistry.js"
import { writeRegistryRecord } from "./registryRecord.js"

/** The owner a connection acts as. */
export interface Bound {
  readonly owner: Ids.OwnerId
  /** The owner's name when it is a named owner (it survives a reconnect); undefined when anonymous. */
  readonly name: string | undefined
}

const anonymousId = (): Ids.OwnerId => {
  const bytes = new Uint8Array(12)
  globalThis.crypto.getRandomValues(bytes)
  return Ids.OwnerId.make(`anonymous:${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`)
}

/**
 * Connections and their owners: the handshake (protocol version, credential), which owner each connection
 * is bound to, and what happens when connections go — an anonymous owner's terminals and tasks close with
 * its connection; a named owner's are kept while any of its connections lives, and for `detachedTtlMs` after
 * the last one went.
 */
export const make = (options: {
  readonly detachedTtlMs: number
  readonly shell: string
}) =>
  Effect.gen(function*() {
    const registry = yield* TerminalRegistry
    const pty = yield* PtyService.PtyService
    const tasks = yield* TaskRuntime.Tasks
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const bindings = new Map<number, Bound>()
    const attached = new Map<Ids.OwnerId, Set<number>>()
    const expiries = new Map<Ids.OwnerId, Fiber.RuntimeFiber<void>>()
    let stopping = false

    /** End everything an owner has: its tasks, then its terminals, each recorded with how it ended. */
    const closeOwner = (owner: Ids.OwnerId, reason: EndReason) =>
      Effect.gen(function*() {
        const open = yield* pty.list(owner)
        yield* tasks.removeOwner(owner)
        yield* pty.closeOwner(owner)
        const at = clock.unsafeCurrentTimeMillis()
        for (const session of open) {
          yield* writeRegistryRecord(registry.terminalEnded(session.sessionId, {
            at,
            reason,
            ...(session.status._tag === "exited"
              ? { exitCode: session.status.exitCode ?? undefined, signal: session.status.signal ?? undefined }
              : {})
          }))
        }
        if (open.length > 0) {
          yield* Effect.logInfo(`owner ${owner}: ${open.length} terminal(s) closed (${reason})`)
        }
      })

    const authenticate = (
      credential: OwnerCredential
    ): Effect.Effect<{ readonly issued?: string | undefined }, OwnerRejected> =>
      Effect.gen(function*() {
        const name = credential.name
        const known = yield* registry.owner(name).pipe(Effect.orDie)
        if (Option.isNone(known)) {
          const secret = credential.secret ?? Credentials.issueSecret()
          const now = clock.unsafeCurrentTimeMillis()
          const added = yield* registry.addOwner({
            name,
            secret: yield* Credentials.hashSecret(secret),
            createdAt: now,
            lastSeenAt: now
          }).pipe(Effect.orDie)
          if (added) return credential.secret === undefined ? { issued: secret } : {}
          // registered by a concurrent handshake meanwhile: verify against that one
          return yield* authenticate(credential)
        }
        if (credential.secret === undefined) {
          return yield* new OwnerRejected({ owner: name, reason: "this owner exists: give its secret" })
        }
        if (!(yield* Credentials.verifySecret(credential.secret, known.value.secret))) {
          return yield* new OwnerRejected({ owner: name, reason: "the secret does not match" })
        }
        return {}
      })

    const attach = (clientId: number, bound: Bound) =>
      Effect.gen(function*() {
        bindings.set(clientId, bound)
        if (bound.name === undefined) return
        const clients = attached.get(bound.owner) ?? new Set<number>()
        clients.add(clientId)
        attached.set(bound.owner, clients)
        const expiry = expiries.get(bound.owner)
        if (expiry !== undefined) {
          expiries.delete(bound.owner)
          yield* Fiber.interrupt(expiry)
        }
        yield* writeRegistryRecord(registry.ownerSeen(bound.name, clock.unsafeCurrentTimeMillis()))
      })

    const hello = (
      clientId: number,
      payload: { readonly protocolVersion: number; readonly owner?: OwnerCredential | undefined }
    ): Effect.Effect<HelloResult, ProtocolMismatch | OwnerRejected> =>
      Effect.gen(function*() {
        if (payload.protocolVersion !== PROTOCOL_VERSION) {
          return yield* new ProtocolMismatch({ client: payload.protocolVersion, daemon: PROTOCOL_VERSION })
        }
        const requested = payload.owner
        const current = bindings.get(clientId)
        if (current !== undefined) {
          if (current.name !== requested?.name) {
            return yield* new OwnerRejected({
              owner: requested?.name ?? "anonymous",
              reason: `this connection is already bound to ${current.owner}`
            })
          }
          return {
            protocolVersion: PROTOCOL_VERSION,
            daemonPid: process.pid,
            owner: current.owner,
            shell: options.shell
          }
        }
        if (requested === undefined) {
          const owner = anonymousId()
          yield* attach(clientId, { owner, name: undefined })
          return { protocolVersion: PROTOCOL_VERSION, daemonPid: process.pid, owner, shell: options.shell }
        }
        const { issued } = yield* authenticate(requested)
        const owner = Ids.OwnerId.make(`owner:${requested.name}`)
        yield* attach(clientId, { owner, name: requested.name })
        return {
          protocolVersion: PROTOCOL_VERSION,
          daemonPid: process.pid,
          owner,
          shell: options.shell,
          ...(issued === undefined ? {} : { issuedSecret: issued })
        }
      })

    const of = (clientId: number): Effect.Effect<Bound, HandshakeRequired> => {
      const bound = bindings.get(clientId)
      return bound === undefined ? Effect.fail(new HandshakeRequired()) : Effect.succeed(bound)
    }

    const expire = (owner: Ids.OwnerId) =>
      Effect.sleep(options.detachedTtlMs).pipe(
        Effect.zipRight(Effect.suspend(() => {
          expiries.delete(owner)
          return attached.has(owner) ? Effect.void : closeOwner(owner, "detached-ttl")
        }))
      )

    const disconnected = (clientId: number) =>
      Effect.gen(function*() {
        const bound = bindings.get(clientId)
        bindings.delete(clientId)
        if (bound === undefined || stopping) return
        if (bound.name === undefined) return yield* closeOwner(bound.owner, "owner-gone")
        const clients = attached.get(bound.owner)
        clients?.delete(clientId)
        if (clients !== undefined && clients.size > 0) return
        attached.delete(bound.owner)
        yield* Effect.logInfo(
          `owner ${bound.owner} detached: its terminals are kept for ${options.detachedTtlMs} ms`
        )
        expiries.set(bound.owner, yield* Effect.forkIn(expire(bound.owner), scope))
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("closing a disconnected owner failed", cause)))

    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        stopping = true
      })
    )

    return {
      hello,
      of,
      disconnected,
      stop: Effect.sync(() => {
        stopping = true
      })
    }
  })

/** The owner lifecycle of one daemon. */
export type Owners = Effect.Effect.Success<ReturnType<typeof make>>
