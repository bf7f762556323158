/**
 * Whom the fleet client acts for. One owner (stdio: one MCP connection): the client's sessions with the
 * machines, for the owner it acts for; a call for another owner dies with `OwnerMismatch`, as over the
 * daemon's socket. Many owners (an HTTP server): each owner its own sessions with the machines, made at its
 * first call as the machine owner `nameOf` gives, closed when the owner is released; so two owners never see
 * each other's terminals, and an anonymous owner's terminals close when its sessions do.
 */
import type { Ids, TaskRuntime } from "@agent-terminal/core"
import { Protocol } from "@agent-terminal/daemon"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Nats } from "../Nats.js"
import * as machineClients from "./machineClients.js"

/** Options of the owners' sessions. */
export interface Options {
  /** The one machine owner of a one-owner client (anonymous when absent). */
  readonly owner?: string | undefined
  /** The one owner a one-owner client acts for (default: the first that calls). */
  readonly actsFor?: Ids.OwnerId | undefined
  /** Many owners, each named on the machines by `nameOf` (`undefined`: anonymous there). */
  readonly owners?: { readonly nameOf: (owner: Ids.OwnerId) => string | undefined } | undefined
  readonly client?: string | undefined
  readonly handshakeTimeoutMs?: number | undefined
  readonly runOf: (machine: string) => Effect.Effect<string | undefined>
  /** A task ending, as the caller's owner sees it. */
  readonly publish: (event: TaskRuntime.TaskEvent) => Effect.Effect<unknown>
}

/** The sessions of each owner, closed with the scope. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const nats = yield* Nats
    const single = options.owners === undefined
      ? yield* machineClients.make({ ...options, onCompletion: (event) => Effect.asVoid(options.publish(event)) })
      : undefined
    let actsFor = options.actsFor
    const perOwner = new Map<
      Ids.OwnerId,
      { readonly clients: machineClients.MachineClients; readonly scope: Scope.CloseableScope }
    >()
    const owning = Effect.unsafeMakeSemaphore(1)

    const clientsOf = (owner: Ids.OwnerId): Effect.Effect<machineClients.MachineClients> => {
      if (single !== undefined) {
        actsFor ??= owner
        return owner === actsFor
          ? Effect.succeed(single)
          : Effect.die(new Protocol.OwnerMismatch({ connection: actsFor, call: owner }))
      }
      const known = perOwner.get(owner)
      if (known !== undefined) return Effect.succeed(known.clients)
      return owning.withPermits(1)(Effect.suspend(() => {
        const again = perOwner.get(owner)
        if (again !== undefined) return Effect.succeed(again.clients)
        return Effect.gen(function*() {
          const ownScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
          const clients = yield* machineClients.make({
            client: options.client,
            handshakeTimeoutMs: options.handshakeTimeoutMs,
            owner: options.owners!.nameOf(owner),
            // the machine names the owner its own way: the caller's completions carry the caller's owner
            onCompletion: (event) => Effect.asVoid(options.publish({ ...event, owner })),
            runOf: options.runOf
          }).pipe(Scope.extend(ownScope), Effect.provideService(Nats, nats))
          perOwner.set(owner, { clients, scope: ownScope })
          return clients
        })
      }))
    }

    return {
      clientsOf,
      /** Whether `owner` may have anything on the machines (with many owners: it has called). */
      isKnown: (owner: Ids.OwnerId): boolean => single !== undefined || perOwner.has(owner),
      /** An owner closed: its sessions with the machines end (with many owners). */
      release: (owner: Ids.OwnerId): Effect.Effect<void> =>
        Effect.suspend(() => {
          const known = perOwner.get(owner)
          if (known === undefined) return Effect.void
          perOwner.delete(owner)
          return Scope.close(known.scope, Exit.void)
        })
    }
  })
