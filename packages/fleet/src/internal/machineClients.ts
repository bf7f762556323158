/**
 * The fleet client's sessions with its machines: one `NatsRpcClient` of the daemon's protocol per machine,
 * opened at its first call and said `Hello` as the client's owner, made again at the next call once broken.
 * A call that the transport fails (the machine gone, the connection lost) breaks its session and dies with
 * that typed error (`MachineUnavailable`, `ConnectionLost`, `MachineRefused`): nothing is retried here.
 */
import type { TaskRuntime } from "@agent-terminal/core"
import { Protocol } from "@agent-terminal/daemon"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { MachineUnavailable } from "../FleetErrors.js"
import { Nats } from "../Nats.js"
import * as NatsRpcClient from "../NatsRpcClient.js"
import { machineStopping, sessionForgotten } from "./clientSession.js"

const connect = (machine: string, options: Options) =>
  NatsRpcClient.make(Protocol.DaemonRpcs, {
    machine,
    name: options.client,
    handshakeTimeoutMs: options.handshakeTimeoutMs
  })

/** The client of one machine. */
export type Client = Effect.Effect.Success<ReturnType<typeof connect>>

interface Session {
  readonly client: Client
  readonly scope: Scope.CloseableScope
  readonly hello: Protocol.HelloResult
  /** The machine's run when the session began: a later run knows nothing of it. */
  readonly run: string | undefined
  broken: boolean
}

/** Options of the sessions. */
export interface Options {
  /** The owner name every machine binds this client to (under its NATS user); anonymous when absent. */
  readonly owner?: string | undefined
  readonly client?: string | undefined
  readonly handshakeTimeoutMs?: number | undefined
  /** Each task ending that a machine reports for this owner. */
  readonly onCompletion: (event: TaskRuntime.TaskEvent) => Effect.Effect<void>
  /** The machine's run now, as announced (`undefined` when not heard from). */
  readonly runOf: (machine: string) => Effect.Effect<string | undefined>
}

const isTransport = (error: unknown): boolean => {
  const tag = (error as { readonly _tag?: unknown } | undefined)?._tag
  return tag === "MachineUnavailable" || tag === "ConnectionLost" || tag === "MachineRefused" ||
    tag === "RpcClientError" || tag === "HandshakeRequired"
}

/** Whether a transport failure ends the session: all but a dropped connection of a session the machine keeps. */
const breaks = (error: unknown): boolean => {
  const { _tag, reason } = error as { readonly _tag?: unknown; readonly reason?: unknown }
  // NATS between the two (a server lost, the machine reconnecting): the session and its owner go on
  if (_tag === "ConnectionLost") return typeof reason === "string" && reason.startsWith(sessionForgotten)
  if (_tag === "MachineUnavailable") return reason === machineStopping
  return true
}

/** A call's own errors, without the transport's (which die). */
export type Own<E> = Exclude<E, NatsRpcClient.TransportError | Protocol.HandshakeRequired>

/** A failure of the session itself, as the typed error it is (`MachineUnavailable` when it is not one). */
const asTransport = (machine: string, error: unknown, now: number) =>
  error instanceof Error && isTransport(error)
    ? error
    : new MachineUnavailable({ machine, since: now, reason: String((error as Error)?.message ?? error) })

/** The sessions, closed with the scope. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const sessions = new Map<string, Session>()
    const opening = new Map<string, Effect.Semaphore>()

    const open = (machine: string, run: string | undefined) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const made = Effect.gen(function*() {
          const client = yield* connect(machine, options)
          const hello = yield* client.Hello({
            protocolVersion: Protocol.PROTOCOL_VERSION,
            ...(options.owner === undefined ? {} : { owner: { name: options.owner } }),
            ...(options.client === undefined ? {} : { client: options.client })
          })
          yield* client.TaskCompletions().pipe(
            Stream.runForEach(options.onCompletion),
            Effect.ignore,
            Effect.forkScoped
          )
          return { client, hello, scope, run, broken: false } satisfies Session
        }).pipe(
          Scope.extend(scope),
          Effect.provideService(Nats, nats),
          Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack)
        )
        const session = yield* made.pipe(
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
          Effect.catchAll((error) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.die(asTransport(machine, error, now)))
          )
        )
        sessions.set(machine, session)
        return session
      })

    const usable = (open: Session | undefined, run: string | undefined): boolean =>
      open !== undefined && !open.broken && (run === undefined || open.run === undefined || open.run === run)

    const session = (machine: string): Effect.Effect<Session> =>
      Effect.flatMap(options.runOf(machine), (run) => {
        const current = sessions.get(machine)
        if (current !== undefined && usable(current, run)) return Effect.succeed(current)
        let semaphore = opening.get(machine)
        if (semaphore === undefined) {
          semaphore = Effect.unsafeMakeSemaphore(1)
          opening.set(machine, semaphore)
        }
        return semaphore.withPermits(1)(Effect.suspend(() => {
          const again = sessions.get(machine)
          if (again !== undefined && usable(again, run)) return Effect.succeed(again)
          sessions.delete(machine)
          return (again === undefined ? Effect.void : Scope.close(again.scope, Exit.void)).pipe(
            Effect.zipRight(open(machine, run))
          )
        }))
      })

    /**
     * One call on `machine`: the transport's failures die, typed. A dropped NATS connection keeps the session
     * (it resumes once the connection is back, with its owner); anything else breaks it (made again next call).
     */
    const call = <A, E>(machine: string, use: (client: Client) => Effect.Effect<A, E>): Effect.Effect<A, Own<E>> =>
      Effect.flatMap(session(machine), (current) =>
        use(current.client).pipe(
          Effect.catchIf(isTransport, (error) => {
            if (breaks(error)) current.broken = true
            return Effect.die(error)
          })
        ) as Effect.Effect<A, Own<E>>)

    yield* Effect.addFinalizer(() =>
      Effect.forEach([...sessions.values()], (open) => Scope.close(open.scope, Exit.void), { discard: true })
    )

    return {
      session,
      call,
      /** The machines this client holds a session with now. */
      connected: () => [...sessions.entries()].filter(([, open]) => !open.broken).map(([machine]) => machine),
      isTransport
    }
  })

/** The sessions of one client. */
export type MachineClients = Effect.Effect.Success<ReturnType<typeof make>>
