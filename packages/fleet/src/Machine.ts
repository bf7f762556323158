/**
 * A daemon as a machine of the fleet: the daemon's own protocol, handlers and owners, served over NATS on
 * the machine's subject besides its Unix socket (`DaemonServer.layer({ transport })`), the live view's
 * operations (`OversightProtocol`) on a subject of their own (`agent-terminal.m.<machine>.oversee`, which NATS
 * permissions give only to the users that serve people), its capacity announced
 * (`Discovery`), and where each of its terminals is and how it ended written to the fleet registry, off the
 * data path. Its ids name it and its run (`FleetIds`: the terminal service is built with that
 * `sessionIdPrefix`).
 *
 * A NATS client is bound to an owner by its NATS user: anonymous (its terminals close when the NATS server
 * reports its connection closed, or its session falls silent), or the owner name it declares, kept per NATS
 * user (`<name>@<user>.<run>`): the NATS credential is the proof, no secret is asked.
 *
 * @since 0.3.0
 */
import { Oversight } from "@agent-terminal/core"
import { type DaemonServer, OversightProtocol, TerminalRegistry } from "@agent-terminal/daemon"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as crypto from "node:crypto"
import * as os from "node:os"
import * as Discovery from "./Discovery.js"
import type { InvalidName, MachineNameTaken, NotPermitted } from "./FleetErrors.js"
import * as FleetIds from "./FleetIds.js"
import * as FleetRegistry from "./FleetRegistry.js"
import * as mergedProtocol from "./internal/mergedProtocol.js"
import type { Nats } from "./Nats.js"
import * as NatsRpcServer from "./NatsRpcServer.js"

/**
 * Options of a machine.
 *
 * @since 0.3.0
 */
export interface Options {
  /** Its name (its subject `agent-terminal.m.<machine>.rpc`; the first part of its ids). */
  readonly machine: string
  /** This run of it (`FleetIds.newRun()`; the second part of its ids). */
  readonly run: string
  /** What placement may ask for (`gpu`, `build`…). */
  readonly labels?: ReadonlyArray<string> | undefined
  /** The most terminals it holds (the terminal service's `maxTerminals`). */
  readonly maxTerminals: number
  /**
   * How often it announces its capacity (default 250 ms), and looks for the registry's changes besides each
   * open and close (default 1 s: a program's exit).
   */
  readonly announceIntervalMs?: number | undefined
  readonly registryIntervalMs?: number | undefined
  /** The NATS protocol's bounds. */
  readonly server?: Omit<NatsRpcServer.Options, "machine"> | undefined
}

/**
 * The daemon's owner name of owner `name` declared by NATS user `user` in run `run`: `<name>@<user>.<run>`,
 * or, when that passes the 64 characters of an owner name (a name of 64 is valid on its own), its first 47
 * characters and 16 hex of its hash: the same owner finds the same name again, two owners never share one.
 *
 * @since 0.4.0
 */
export const ownerName = (name: string, user: string, run: string): string => {
  const full = `${name}@${user}.${run}`
  return full.length <= 64
    ? full
    : `${full.slice(0, 47)}-${crypto.createHash("sha256").update(full).digest("hex").slice(0, 16)}`
}

/**
 * Record what changed among the machine's terminals since the last look; `stop` records the open ones as lost
 * with the machine's stop ("daemon-stopped", now), after which the follower records nothing more (the
 * daemon's closing them is part of that stop).
 */
const registryFollower = (
  options: Options,
  oversight: Oversight.Oversight["Type"],
  writer: FleetRegistry.Writer["Type"]
) => {
  const known = new Map<string, { readonly status: string; readonly owner: string }>()
  let stopped = false
  const stop = Effect.gen(function*() {
    stopped = true
    const now = yield* Clock.currentTimeMillis
    for (const session of yield* oversight.sessions) {
      if (session.status._tag === "exited") continue
      yield* writer.record(
        new FleetRegistry.Entry({
          id: session.sessionId,
          machine: options.machine,
          owner: session.owner,
          status: "lost",
          updatedAt: now,
          ended: { reason: "daemon-stopped", at: now }
        })
      )
    }
  })
  const follow = Effect.gen(function*() {
    if (stopped) return
    const now = yield* Clock.currentTimeMillis
    const sessions = yield* oversight.sessions
    const seen = new Set<string>()
    for (const session of sessions) {
      seen.add(session.sessionId)
      const status = session.status._tag === "exited" ? "exited" : "open"
      if (known.get(session.sessionId)?.status === status) continue
      known.set(session.sessionId, { status, owner: session.owner })
      yield* writer.record(
        new FleetRegistry.Entry({
          id: session.sessionId,
          machine: options.machine,
          owner: session.owner,
          status,
          updatedAt: now,
          ...(session.status._tag === "exited"
            ? {
              ended: {
                reason: session.status.signal === null
                  ? `exited with code ${session.status.exitCode}`
                  : `killed by ${session.status.signal}`,
                at: now
              }
            }
            : {})
        })
      )
    }
    for (const [id, last] of known) {
      if (seen.has(id)) continue
      known.delete(id)
      yield* writer.record(
        new FleetRegistry.Entry({
          id,
          machine: options.machine,
          owner: last.owner,
          status: "closed",
          updatedAt: now,
          ended: { reason: "closed", at: now }
        })
      )
    }
  })
  return { follow, stop }
}

/**
 * The machine's transport for `DaemonServer.layer({ transport })`; its announcements and registry writes run
 * in the scope. When the daemon stops, its NATS clients are told first ("machine stopping"), so their calls in
 * flight fail with `MachineUnavailable` rather than hang.
 *
 * @since 0.3.0
 */
export const transport = (
  options: Options
): Effect.Effect<
  DaemonServer.Transport,
  MachineNameTaken | InvalidName | NotPermitted,
  Nats | Oversight.Oversight | TerminalRegistry.TerminalRegistry | Scope.Scope
> =>
  Effect.gen(function*() {
    const oversight = yield* Oversight.Oversight
    const registry = yield* TerminalRegistry.TerminalRegistry
    const { protocol, sessions } = yield* NatsRpcServer.makeProtocol({ ...options.server, machine: options.machine })
      .pipe(Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack))
    // The live view's operations, on the machine's `oversee` subject: only the users that serve people may call it.
    const oversee = yield* NatsRpcServer.makeProtocol({
      ...options.server,
      machine: options.machine,
      service: "oversee"
    })
      .pipe(Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack))
    const overseeHandlers = yield* Layer.build(OversightProtocol.handlersLayer)
    yield* RpcServer.make(OversightProtocol.OversightRpcs, { disableTracing: true, concurrency: "unbounded" }).pipe(
      Effect.provide(overseeHandlers),
      Effect.provideService(RpcServer.Protocol, oversee.protocol),
      Effect.interruptible,
      Effect.forkScoped
    )
    const labels = options.labels ?? []
    const figures = Effect.map(oversight.sessions, (open): Discovery.Figures => ({
      run: options.run,
      terminals: open.length,
      maxTerminals: options.maxTerminals,
      free: Math.max(0, options.maxTerminals - open.length),
      load: os.loadavg()[0]! / Math.max(1, os.cpus().length),
      memoryFree: os.freemem(),
      labels
    }))
    yield* Discovery.announce({ machine: options.machine, figures, intervalMs: options.announceIntervalMs })
    const writer = yield* FleetRegistry.makeWriter({ machine: options.machine })
    const follower = registryFollower(options, oversight, writer)
    // At each open or close (the oversight's changes), and every second for what changes tell nothing of (a
    // program's exit); one look at a time.
    const looking = yield* Effect.makeSemaphore(1)
    const look = looking.withPermits(1)(follower.follow).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("machine: the registry's follower failed", cause))
    )
    yield* look.pipe(Effect.repeat(Schedule.spaced(options.registryIntervalMs ?? 1_000)), Effect.forkScoped)
    yield* oversight.changes.pipe(Stream.runForEach(() => look), Effect.forkScoped)
    // The owners of NATS users: the NATS credential proves the user, so the secret is the machine's own.
    const ownerKey = crypto.randomBytes(32)
    const credential = (name: string, user: string) => {
      const owner = ownerName(name, user, options.run)
      return { name: owner, secret: crypto.createHmac("sha256", ownerKey).update(owner).digest("hex") }
    }
    yield* Effect.logInfo(
      `machine ${options.machine}: serving over NATS (run ${options.run}${
        labels.length === 0 ? "" : `, labels ${labels.join(", ")}`
      })`
    )
    // An id of this machine's earlier run: lost with that run (how, from the daemon's own registry when it
    // has the record), known from the id alone.
    const lost = (sessionId: string) => {
      const place = FleetIds.parse(sessionId)
      if (place === undefined || place.machine !== options.machine || place.run === options.run) {
        return Effect.succeed(undefined)
      }
      return registry.terminal(sessionId).pipe(
        Effect.orElseSucceed(() => Option.none<TerminalRegistry.TerminalRecord>()),
        Effect.zipWith(Clock.currentTimeMillis, (record, now) => {
          const ended = Option.getOrUndefined(record)
          return {
            lostAt: new Date(ended?.endedAt ?? now).toISOString(),
            reason: ended?.endReason === "daemon-stopped" ? "daemon-stopped" as const : "daemon-died" as const
          }
        })
      )
    }
    return {
      protocol: (socket) =>
        mergedProtocol.merge(socket, protocol, { userHeader: NatsRpcServer.userHeader, credential, lost }),
      stopping: Effect.suspend(() =>
        Effect.logInfo(
          `machine ${options.machine}: machine stopping (telling ${
            sessions.count() + oversee.sessions.count()
          } clients)`
        )
      ).pipe(Effect.zipRight(follower.stop), Effect.zipRight(sessions.stop), Effect.zipRight(oversee.sessions.stop))
    }
  })
