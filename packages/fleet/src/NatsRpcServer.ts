/**
 * An `RpcServer.Protocol` over NATS: machine `<m>` serves `agent-terminal.m.<m>.rpc`, and each client that
 * talks to it is a session of its own (a client id of the `@effect/rpc` server), answered on the client's
 * inbox. A session starts with a handshake whose challenge goes to that inbox, which only its NATS user can
 * read: so the session's user is proven, and no client can act in another's session. Frames are the
 * serialization's bytes (msgpack), sent as parts when larger than a NATS message, put back together up to
 * `maxFrameBytes`. A session ends when its client says so, when the system reports its connection closed
 * (`$SYS.ACCOUNT.<account>.DISCONNECT`, imported into the fleet's account), or after `sessionTimeoutMs`
 * without a heartbeat; then the server hears of the disconnect, as from a closed socket.
 *
 * @since 0.3.0
 */
import type * as Rpc from "@effect/rpc/Rpc"
import type * as RpcGroup from "@effect/rpc/RpcGroup"
import type { FromClientEncoded, FromServerEncoded } from "@effect/rpc/RpcMessage"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as crypto from "node:crypto"
import { type InvalidName, MachineNameTaken, type NotPermitted } from "./FleetErrors.js"
import * as envelope from "./internal/envelope.js"
import * as machineInput from "./internal/machineInput.js"
import * as ordered from "./internal/ordered.js"
import * as serverSessions from "./internal/serverSessions.js"
import { isNoResponders, publish, subscribe } from "./internal/subscription.js"
import { Nats } from "./Nats.js"
import * as Subjects from "./Subjects.js"

/**
 * Options of a machine's protocol.
 *
 * @since 0.3.0
 */
export interface Options {
  /** The machine's name: it serves `agent-terminal.m.<machine>.rpc`. */
  readonly machine: string
  /** Which of its services this protocol serves (default `rpc`; `oversee`: `agent-terminal.m.<machine>.oversee`). */
  readonly service?: Subjects.Service | undefined
  /** The largest frame put back together from parts (default 16 MiB); a larger one ends its session. */
  readonly maxFrameBytes?: number | undefined
  /** Sessions at once, all users (default 1024). */
  readonly maxSessions?: number | undefined
  /** Sessions at once of one NATS user (default 256). */
  readonly maxSessionsPerUser?: number | undefined
  /** Frames of a session decoded and not yet taken by the server (default 1024); past it the session ends. */
  readonly maxPendingFrames?: number | undefined
  /**
   * Bytes held for all sessions at once: frames being put together and frames not yet taken (default 256 MiB).
   * The session whose input passes it ends.
   */
  readonly maxBufferedBytes?: number | undefined
  /** A session not heard from for this long ends (default 5 s; clients send a heartbeat every second). */
  readonly sessionTimeoutMs?: number | undefined
  /** A handshake not completed within this ends (default 5 s). */
  readonly handshakeTimeoutMs?: number | undefined
  /** The subject of the system's disconnect events (default `$SYS.ACCOUNT.FLEET.DISCONNECT`); `false`: none. */
  readonly disconnectEvents?: string | false | undefined
  /**
   * How far a stream may run ahead of its reader: chunks and bytes sent and not yet taken by the client
   * (default 16 chunks, 1 MiB; 1 chunk is `@effect/rpc`'s own pace, one chunk per round trip).
   */
  readonly streamWindow?:
    | { readonly maxChunks?: number | undefined; readonly maxBytes?: number | undefined }
    | undefined
}

/**
 * Who a client of the server is.
 *
 * @since 0.3.0
 */
export interface ClientIdentity {
  readonly clientId: number
  /** The NATS user the client connected as (proven by the handshake). */
  readonly user: string
  /** The name the client gave itself (for logs). */
  readonly name: string
  readonly inbox: string
}

/**
 * The sessions of the machine, by the client id the `@effect/rpc` server gives its handlers.
 *
 * @since 0.3.0
 */
export class Sessions extends Context.Tag("@agent-terminal/fleet/NatsRpcServer/Sessions")<Sessions, {
  readonly identify: (clientId: number) => Option.Option<ClientIdentity>
  readonly count: () => number
  /** Tell every client the machine is stopping and end its session (their calls fail at once). */
  readonly stop: Effect.Effect<void>
}>() {}

/**
 * The header every request reaches its handler with: the NATS user of the session it came in (proven by the
 * handshake; a header of that name sent by the client is dropped).
 *
 * @since 0.3.0
 */
export const userHeader = "x-agent-terminal-nats-user"

/** Whether another process serves the machine's subject now: it answers a probe, or nothing says "no one". */
const probe = (nats: Nats["Type"], machine: string, subject: string) =>
  Effect.gen(function*() {
    const reply = `${Subjects.inbox(nats.user)}.${crypto.randomBytes(12).toString("hex")}`
    const answered = yield* Effect.async<"free" | "taken">((resume) => {
      const subscription = nats.connection.subscribe(reply, {
        max: 1,
        callback: (error, message) =>
          resume(Effect.succeed(error === null && isNoResponders(message) ? "free" : "taken"))
      })
      nats.connection.flush().then(() => publish(nats, subject, envelope.control(envelope.Client.Probe), reply))
        .catch(() => resume(Effect.succeed("free")))
      return Effect.sync(() => subscription.unsubscribe())
    }).pipe(Effect.timeoutTo({ duration: "1 second", onTimeout: () => "taken" as const, onSuccess: (a) => a }))
    if (answered === "taken") return yield* new MachineNameTaken({ machine })
  })

/**
 * The protocol of machine `options.machine`, and its sessions.
 *
 * @since 0.3.0
 */
export const makeProtocol = (
  options: Options
): Effect.Effect<
  { readonly protocol: RpcServer.Protocol["Type"]; readonly sessions: Sessions["Type"] },
  MachineNameTaken | InvalidName | NotPermitted,
  Nats | RpcSerialization.RpcSerialization | Scope.Scope
> =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const serialization = yield* RpcSerialization.RpcSerialization
    const machine = yield* Subjects.validName("machine", options.machine)
    const sessionTimeoutMs = options.sessionTimeoutMs ?? 5_000
    const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 5_000
    const disconnects = yield* Mailbox.make<number>()
    const run = yield* FiberSet.make<void, unknown>().pipe(Effect.flatMap((fibers) => FiberSet.runtime(fibers)()))
    const parser = serialization.unsafeMake()
    let writeRequest!: (clientId: number, message: FromClientEncoded) => Effect.Effect<void>
    const table = serverSessions.make({
      maxSessions: options.maxSessions ?? 1024,
      maxSessionsPerUser: options.maxSessionsPerUser ?? 256,
      maxFrameBytes: options.maxFrameBytes ?? 16 * 1024 * 1024,
      streamWindow: {
        maxChunks: Math.max(1, options.streamWindow?.maxChunks ?? 16),
        maxBytes: Math.max(1, options.streamWindow?.maxBytes ?? 1024 * 1024)
      }
    }, () =>
      new ordered.Line(run), (session) => {
      input.ended(session)
      if (session.ready) {
        disconnects.unsafeOffer(session.clientId)
      }
    })
    // the sessions' times (handshakes, silences) on the clock the server is built with
    const clock = yield* Effect.clock
    const input = machineInput.make({
      nats,
      clock,
      machine,
      table,
      parser,
      userHeader,
      maxPendingFrames: options.maxPendingFrames ?? 1024,
      maxBufferedBytes: options.maxBufferedBytes ?? 256 * 1024 * 1024,
      toServer: () =>
        writeRequest
    })
    const chunk = () =>
      (nats.connection.info?.max_payload ?? 1024 * 1024) - 64

    const send = (clientId: number, response: FromServerEncoded) =>
      Effect.suspend(() => {
        const session = table.byClientId(clientId)
        if (session === undefined) return Effect.void
        let encoded: Uint8Array | string | undefined
        try {
          encoded = parser.encode(response)
        } catch (cause) {
          encoded = parser.encode({ _tag: "Defect", defect: String(cause) })
        }
        if (encoded === undefined) return Effect.void
        const bytes = typeof encoded === "string" ? new TextEncoder().encode(encoded) : encoded
        const kinds = { part: envelope.Machine.Part, last: envelope.Machine.Frame }
        for (const piece of envelope.frame(kinds, session.frameNo++, bytes, chunk())) {
          publish(nats, session.inbox, piece)
        }
        if (response._tag === "Chunk") {
          // Within the stream's window the machine acknowledges the chunk itself: the server goes on at once.
          return session.credits.sent(response.requestId, bytes.length)
            ? writeRequest(clientId, { _tag: "Ack", requestId: response.requestId })
            : Effect.void
        }
        if (response._tag === "Exit") session.credits.ended(response.requestId)
        return Effect.void
      })

    const protocol = yield* RpcServer.Protocol.make((write) => {
      writeRequest = write
      return Effect.succeed({
        disconnects,
        send,
        end: () => Effect.void,
        clientIds: Effect.sync(() => table.readyIds()),
        initialMessage: Effect.succeedNone,
        supportsAck: true,
        supportsTransferables: false,
        supportsSpanPropagation: false
      })
    })

    // A user the configuration does not let serve this subject hears so, not that the name is taken.
    const subject = Subjects.serviceSubject(machine, options.service ?? "rpc")
    yield* Effect.scoped(subscribe(nats, subject, () => undefined))
    yield* probe(nats, machine, subject)
    yield* subscribe(nats, subject, input.onMessage)
    if (options.disconnectEvents !== false) {
      yield* subscribe(nats, options.disconnectEvents ?? Subjects.disconnectEvents("FLEET"), (message) => {
        const event = envelope.json(message.data, 65_536)
        const server = (event?.server as { id?: unknown } | undefined)?.id
        const cid = (event?.client as { id?: unknown } | undefined)?.id
        const binding = serverSessions.bindingOf({ server, cid })
        if (binding !== undefined) table.disconnected(binding)
      })
    }
    yield* Effect.sync(() => table.expire(clock.unsafeCurrentTimeMillis(), handshakeTimeoutMs, sessionTimeoutMs)).pipe(
      Effect.repeat(Schedule.spaced(Math.max(50, Math.min(1_000, sessionTimeoutMs / 4)))),
      Effect.forkScoped
    )
    // A machine that stops tells each client, so their calls fail now rather than after the pings.
    const stop = Effect.sync(() => {
      for (const session of table.all()) {
        input.answer(session.inbox, envelope.Machine.Gone, { reason: "stopping" })
        table.end(session)
      }
    })
    yield* Effect.addFinalizer(() => stop)

    const sessions = Sessions.of({
      identify: (clientId) => {
        const session = table.byClientId(clientId)
        return session === undefined || !session.ready
          ? Option.none()
          : Option.some({ clientId, user: session.user, name: session.name, inbox: session.inbox })
      },
      count: () => table.all().length,
      stop
    })
    return { protocol, sessions }
  })

/**
 * The protocol and the sessions as a layer (with `RpcServer.layer(group)` on top).
 *
 * @since 0.3.0
 */
export const layerProtocol = (
  options: Options
): Layer.Layer<
  RpcServer.Protocol | Sessions,
  MachineNameTaken | InvalidName | NotPermitted,
  Nats | RpcSerialization.RpcSerialization
> =>
  Layer.scopedContext(
    Effect.map(makeProtocol(options), ({ protocol, sessions }) =>
      Context.make(RpcServer.Protocol, protocol).pipe(Context.add(Sessions, sessions)))
  )

/**
 * Serve `group` as machine `options.machine` over NATS with the handlers in context (`group.toLayer(...)`;
 * a handler finds the caller's NATS user in the `userHeader` header). When the layer ends, the clients are
 * told first, so their calls in flight fail with `MachineUnavailable` rather than as interrupted.
 *
 * @since 0.3.0
 */
export const layer = <Rpcs extends Rpc.Any>(
  group: RpcGroup.RpcGroup<Rpcs>,
  options: Options & { readonly concurrency?: number | "unbounded" | undefined }
): Layer.Layer<
  Sessions,
  MachineNameTaken | InvalidName | NotPermitted,
  | Nats
  | RpcSerialization.RpcSerialization
  | Rpc.ToHandler<Rpcs>
  | Rpc.Middleware<Rpcs>
  | Rpc.Context<Rpcs>
> =>
  Layer.scoped(
    Sessions,
    Effect.gen(function*() {
      const { protocol, sessions } = yield* makeProtocol(options)
      yield* RpcServer.make(group, { disableTracing: true, concurrency: options.concurrency ?? "unbounded" }).pipe(
        Effect.provideService(RpcServer.Protocol, protocol),
        Effect.interruptible,
        Effect.forkScoped
      )
      yield* Effect.addFinalizer(() => sessions.stop)
      return sessions
    })
  )
