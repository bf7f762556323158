/**
 * The live view over the fleet: an `Oversight` over every machine that announces itself (`Discovery`),
 * through each machine's `oversee` subject (`OversightProtocol`, which NATS permissions give only to the users
 * that serve people). `sessions` asks every machine and merges, each session with its `machine`; `changes`
 * merges every machine's changes, and emits when a machine joins or leaves; every call by id (watch, take,
 * input, resize, hand-back, the audit) goes to the machine the id names; a recording's name starts with its
 * session's id, so it names its machine too, and its bytes come over as a stream of bounded chunks.
 *
 * Failures are typed as `FleetTerminal`'s: a machine that does not answer makes the call die with
 * `MachineUnavailable`, an id of a machine's earlier run with `SessionLost`; a list leaves a silent machine
 * out (and logs it), so one dead machine never empties the page.
 *
 * @since 0.4.0
 */
import {
  type Audit,
  Errors,
  Operation,
  Oversight,
  OversightOperations,
  type Recording,
  type Watch
} from "@agent-terminal/core"
import { OversightProtocol } from "@agent-terminal/daemon"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Discovery from "./Discovery.js"
import { MachineUnavailable, type NotPermitted } from "./FleetErrors.js"
import * as FleetIds from "./FleetIds.js"
import * as remoteWatch from "./internal/remoteWatch.js"
import { Nats } from "./Nats.js"
import * as NatsRpcClient from "./NatsRpcClient.js"

/**
 * Options of the fleet's oversight.
 *
 * @since 0.4.0
 */
export interface Options {
  /** The client's name in the machines' logs. */
  readonly client?: string | undefined
  /** A session's handshake deadline (default 2 s). */
  readonly handshakeTimeoutMs?: number | undefined
  /** How often the machines are looked at for one that joined or left (default 250 ms). */
  readonly followMs?: number | undefined
}

const connect = (machine: string, options: Options) =>
  NatsRpcClient.make(OversightProtocol.OversightRpcs, {
    machine,
    service: "oversee",
    name: options.client,
    handshakeTimeoutMs: options.handshakeTimeoutMs
  })

type Client = Effect.Effect.Success<ReturnType<typeof connect>>
type Untyped = Record<string, (payload: unknown, options?: unknown) => any>

interface Session {
  readonly client: Client
  readonly scope: Scope.CloseableScope
  broken: boolean
}

const isTransport = (error: unknown): boolean => {
  const tag = (error as { readonly _tag?: unknown } | undefined)?._tag
  return tag === "MachineUnavailable" || tag === "ConnectionLost" || tag === "MachineRefused" ||
    tag === "RpcClientError" || tag === "HandshakeRequired"
}

/** The machine a recording's name names (`<machine>~<run>~<id>-<start>.cast`). */
const machineOfRecording = (name: string): string | undefined => {
  const dash = name.lastIndexOf("-")
  return dash <= 0 ? undefined : FleetIds.parse(name.slice(0, dash))?.machine
}

/**
 * The fleet's `Oversight`.
 *
 * @since 0.4.0
 */
export const make = (
  options: Options = {}
): Effect.Effect<Oversight.Oversight["Type"], NotPermitted, Nats | Scope.Scope> =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const clock = yield* Effect.clock
    const directory = yield* Discovery.makeDirectory()
    const sessions = new Map<string, Session>()
    const opening = new Map<string, Effect.Semaphore>()

    const open = (machine: string) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const client = yield* connect(machine, options).pipe(
          Scope.extend(scope),
          Effect.provideService(Nats, nats),
          Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
          Effect.catchAll((error) =>
            Effect.die(
              isTransport(error) ? error : new MachineUnavailable({
                machine,
                since: clock.unsafeCurrentTimeMillis(),
                reason: String((error as Error)?.message ?? error)
              })
            )
          )
        )
        const session: Session = { client, scope, broken: false }
        sessions.set(machine, session)
        return session
      })

    /** The session with `machine`: the open one, else a new one (one opening at a time per machine). */
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
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...sessions.values()], (open) => Scope.close(open.scope, Exit.void), { discard: true })
    )

    /** One call on `machine`: the transport's failures break the session and die, typed. */
    const call = <A>(machine: string, use: (client: Untyped) => Effect.Effect<A, unknown>): Effect.Effect<A, any> =>
      Effect.flatMap(session(machine), (current) =>
        use(current.client as unknown as Untyped).pipe(
          Effect.catchIf(isTransport, (error) => {
            current.broken = true
            return Effect.die(error)
          })
        ))

    /** The machine an id names: an id of no machine is not found; one of a machine's earlier run is lost. */
    const home = (sessionId: string): Effect.Effect<string, Errors.SessionNotFound> =>
      Effect.flatMap(directory.machines, (machines) => {
        const place = FleetIds.parse(sessionId)
        if (place === undefined) return Effect.fail(new Errors.SessionNotFound({ sessionId }))
        const now = machines.find((machine) => machine.machine === place.machine)
        if (now !== undefined && now.run !== place.run) {
          return Effect.die(
            new Errors.SessionLost({
              sessionId,
              lostAt: new Date(clock.unsafeCurrentTimeMillis()).toISOString(),
              reason: "daemon-died"
            })
          )
        }
        return Effect.succeed(place.machine)
      })

    /** Every machine in the directory, asked at once; one that does not answer is left out (and logged). */
    const fanOut = <A>(use: (machine: string, client: Untyped) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
      Effect.flatMap(directory.machines, (machines) =>
        Effect.forEach(machines, ({ machine }) =>
          call(machine, (client) =>
            use(machine, client)).pipe(
              Effect.catchAllCause((cause) =>
                Effect.logWarning(`fleet oversight: machine ${machine} left out of a list`, cause).pipe(
                  Effect.as([] as ReadonlyArray<A>)
                )
              )
            ), { concurrency: "unbounded" })).pipe(Effect.map((lists) =>
            lists.flat()))

    /** A call by session id, routed to its machine, with the declaration's payload. */
    const byId = (operation: Operation.Any) => (...args: ReadonlyArray<unknown>) =>
      Effect.flatMap(
        home(String(args[0])),
        (machine) => call(machine, (client) => client[operation.tag]!(Operation.payloadOf(operation, args)))
      )

    // Changes: every machine's, and a machine joining or leaving. Each machine's stream is followed while the
    // machine is in the directory; a broken one is followed again at the next look.
    const changes = yield* PubSub.sliding<void>(16)
    const following = new Map<string, Fiber.RuntimeFiber<unknown, unknown>>()
    const scope = yield* Effect.scope
    let lastMachines = ""
    yield* Effect.gen(function*() {
      const machines = new Set((yield* directory.machines).map((machine) => machine.machine))
      for (const [machine, fiber] of following) {
        if (machines.has(machine) && fiber.unsafePoll() === null) continue
        following.delete(machine)
        yield* Fiber.interrupt(fiber)
      }
      for (const machine of machines) {
        if (following.has(machine)) continue
        const fiber = yield* call(machine, (client) =>
          Stream.runForEach(client[OversightOperations.streams.changes.tag]!({}), () =>
            PubSub.publish(changes, undefined))).pipe(Effect.exit, Effect.forkIn(scope))
        following.set(machine, fiber)
      }
      // a machine joined or left (a stream followed again after a failure is no change of its own)
      const names = [...machines].sort().join(" ")
      if (names !== lastMachines) {
        lastMachines = names
        yield* PubSub.publish(changes, undefined)
      }
    }).pipe(
      Effect.repeat(Schedule.spaced(options.followMs ?? 250)),
      Effect.forkScoped
    )

    const watch: Oversight.Oversight["Type"]["watch"] = (sessionId, watchOptions) =>
      Effect.gen(function*() {
        const machine = yield* home(sessionId)
        const { client } = yield* session(machine)
        const mailbox: Mailbox.ReadonlyMailbox<Watch.Snapshot | Watch.WatchEvent, unknown> =
          yield* (client as unknown as Untyped)[OversightOperations.streams.watch.tag]!({
            sessionId,
            ...(watchOptions?.maxBufferedBytes === undefined ? {} : { options: watchOptions })
          }, { asMailbox: true })
        return yield* remoteWatch.fromMailbox(machine, mailbox, {
          now: () =>
            clock.unsafeCurrentTimeMillis(),
          isTransport,
          typed: (error): error is Errors.SessionNotFound =>
            (error as { _tag?: string })._tag === "SessionNotFound"
        })
      }) as Effect.Effect<Watch.Watch, Errors.SessionNotFound, Scope.Scope>

    const { operations } = OversightOperations
    return Oversight.Oversight.of({
      sessions: fanOut((machine, client) =>
        Effect.map(
          client[operations.sessions.tag]!({}) as Effect.Effect<ReadonlyArray<Oversight.OverseenSession>>,
          (list) =>
            list.map((overseen) => ({ ...overseen, machine }))
        )
      ),
      changes: Stream.fromPubSub(changes),
      watch,
      take: byId(operations.take) as Oversight.Oversight["Type"]["take"],
      input: byId(operations.input) as Oversight.Oversight["Type"]["input"],
      resize: byId(operations.resize) as Oversight.Oversight["Type"]["resize"],
      handBack: byId(operations.handBack) as Oversight.Oversight["Type"]["handBack"],
      audit: (sessionId, limit) =>
        byId(operations.audit)(sessionId, limit).pipe(
          Effect.catchTag("SessionNotFound", () => Effect.succeed([]))
        ) as Effect.Effect<ReadonlyArray<Audit.AuditEntry>>,
      recordings: fanOut((machine, client) =>
        Effect.map(
          client[operations.recordings.tag]!({}) as Effect.Effect<ReadonlyArray<Recording.RecordingInfo>>,
          (list) => list.map((info) => ({ ...info, machine }))
        )
      ),
      recording: (name) => {
        const machine = machineOfRecording(name)
        if (machine === undefined) return Effect.succeed(Option.none())
        return call(machine, (client) =>
          Stream.runCollect(
            client[OversightOperations.streams.recording.tag]!({ name }) as Stream.Stream<Uint8Array, unknown>
          )).pipe(
            Effect.map((chunks) => Option.some(new Uint8Array(Buffer.concat(Chunk.toReadonlyArray(chunks))))),
            Effect.catchAll(() => Effect.succeed(Option.none()))
          )
      }
    })
  })

/**
 * The fleet's `Oversight` as a layer.
 *
 * @since 0.4.0
 */
export const layer = (options: Options = {}): Layer.Layer<Oversight.Oversight, NotPermitted, Nats> =>
  Layer.scoped(Oversight.Oversight, make(options))
