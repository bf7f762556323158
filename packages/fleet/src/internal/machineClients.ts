/**
 * The fleet client's sessions with its machines: one `NatsRpcClient` of the daemon's protocol per machine,
 * opened at its first call and said `Hello` as the client's owner, made again at the next call once broken.
 * A call that the transport fails (the machine gone, the connection lost) breaks its session and dies with
 * that typed error (`MachineUnavailable`, `ConnectionLost`, `MachineRefused`): nothing is retried here.
 */
import type { TaskRuntime } from "@agent-terminal/core"
import { Protocol } from "@agent-terminal/daemon"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { MachineUnavailable } from "../FleetErrors.js"
import { Nats } from "../Nats.js"
import * as NatsRpcClient from "../NatsRpcClient.js"

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
}

const isTransport = (error: unknown): boolean => {
  const tag = (error as { readonly _tag?: unknown } | undefined)?._tag
  return tag === "MachineUnavailable" || tag === "ConnectionLost" || tag === "MachineRefused" ||
    tag === "RpcClientError" || tag === "HandshakeRequired"
}

/** A call's own errors, without the transport's (which die). */
export type Own<E> = Exclude<E, NatsRpcClient.TransportError | Protocol.HandshakeRequired>

/** A failure of the session itself, as the typed error it is (`MachineUnavailable` when it is not one). */
const asTransport = (machine: string, error: unknown) =>
  error instanceof Error && isTransport(error)
    ? error
    : new MachineUnavailable({ machine, since: Date.now(), reason: String((error as Error)?.message ?? error) })

/** The sessions, closed with the scope. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const sessions = new Map<string, Session>()
    const opening = new Map<string, Effect.Semaphore>()

    const open = (machine: string) =>
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
          return { client, hello, scope, broken: false } satisfies Session
        }).pipe(
          Scope.extend(scope),
          Effect.provideService(Nats, nats),
          Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack)
        )
        const session = yield* made.pipe(
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
          Effect.catchAll((error) => Effect.die(asTransport(machine, error)))
        )
        sessions.set(machine, session)
        return session
      })

    const session = (machine: string): Effect.Effect<Session> =>
      Effect.suspend(() => {
        const current = sessions.get(machine)
        if (current !== undefined && !current.broken) return Effect.succeed(current)
        let semaphore = opening.get(machine)
        if (semaphore === undefined) {
          semaphore = Effect.unsafeMakeSemaphore(1)
          opening.set(machine, semaphore)
        }
        return semaphore.withPermits(1)(Effect.suspend(() => {
          const again = sessions.get(machine)
          if (again !== undefined && !again.broken) return Effect.succeed(again)
          sessions.delete(machine)
          return (again === undefined ? Effect.void : Scope.close(again.scope, Exit.void)).pipe(
            Effect.zipRight(open(machine))
          )
        }))
      })

    /** One call on `machine`: the transport's failures break the session and die, typed. */
    const call = <A, E>(machine: string, use: (client: Client) => Effect.Effect<A, E>): Effect.Effect<A, Own<E>> =>
      Effect.flatMap(session(machine), (current) =>
        use(current.client).pipe(
          Effect.catchIf(isTransport, (error) => {
            current.broken = true
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
