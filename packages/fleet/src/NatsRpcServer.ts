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
import type { Msg } from "@nats-io/transport-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as crypto from "node:crypto"
import { type InvalidName, MachineNameTaken, type NotPermitted } from "./FleetErrors.js"
import * as envelope from "./internal/envelope.js"
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

const withUser = (message: FromClientEncoded, user: string): FromClientEncoded =>
  message._tag !== "Request" ? message : {
    ...message,
    headers: [...message.headers.filter(([name]) => name.toLowerCase() !== userHeader), [userHeader, user]]
  }

type Inbound = {
  readonly session: serverSessions.Session
  readonly messages: ReadonlyArray<FromClientEncoded>
  readonly bytes: number
}

/** Whether another process serves the machine's subject now: it answers a probe, or nothing says "no one". */
const probe = (nats: Nats["Type"], machine: string) =>
  Effect.gen(function*() {
    const reply = `${Subjects.inbox(nats.user)}.${crypto.randomBytes(12).toString("hex")}`
    const answered = yield* Effect.async<"free" | "taken">((resume) => {
      const subscription = nats.connection.subscribe(reply, {
        max: 1,
        callback: (error, message) =>
          resume(Effect.succeed(error === null && isNoResponders(message) ? "free" : "taken"))
      })
      nats.connection.flush().then(() =>
        publish(nats, Subjects.rpc(machine), envelope.control(envelope.Client.Probe), reply)
      )
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
    const maxPendingFrames = options.maxPendingFrames ?? 1024
    const maxBufferedBytes = options.maxBufferedBytes ?? 256 * 1024 * 1024
    // What every session holds, counted before it is held: partial frames and frames waiting to be taken.
    let buffered = 0
    const sessionTimeoutMs = options.sessionTimeoutMs ?? 5_000
    const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 5_000
    const disconnects = yield* Mailbox.make<number>()
    const inbound = yield* Effect.acquireRelease(Queue.unbounded<Inbound>(), Queue.shutdown)
    const parser = serialization.unsafeMake()
    const table = serverSessions.make({
      maxSessions: options.maxSessions ?? 1024,
      maxSessionsPerUser: options.maxSessionsPerUser ?? 256,
      maxFrameBytes: options.maxFrameBytes ?? 16 * 1024 * 1024
    }, (session) => {
      buffered -= session.assembler.held
      session.assembler.reset()
      if (session.ready) disconnects.unsafeOffer(session.clientId)
    })
    const end = table.end

    const answer = (inbox: string, kind: number, body: unknown = {}) =>
      publish(nats, inbox, envelope.control(kind, body))
    const refuse = (inbox: string, reason: string) => answer(inbox, envelope.Machine.Refused, { reason })
    const chunk = () => (nats.connection.info?.max_payload ?? 1024 * 1024) - 64

    const onFrame = (session: serverSessions.Session, message: Uint8Array, last: boolean) => {
      if (buffered + message.length > maxBufferedBytes) {
        refuse(session.inbox, `the machine holds ${maxBufferedBytes} bytes of input not yet handled`)
        return end(session)
      }
      const held = session.assembler.held
      const assembled = session.assembler.push(message, last)
      buffered += session.assembler.held - held
      if (assembled._tag === "TooLarge") {
        refuse(session.inbox, `a frame larger than ${session.assembler.maxFrameBytes} bytes`)
        return end(session)
      }
      if (assembled._tag !== "Frame") return
      let messages: ReadonlyArray<FromClientEncoded>
      try {
        messages = parser.decode(assembled.bytes) as ReadonlyArray<FromClientEncoded>
      } catch (error) {
        refuse(session.inbox, `a frame that does not decode: ${String(error).slice(0, 200)}`)
        return end(session)
      }
      if (messages.length > 0) {
        enqueue(session, messages.map((message) => withUser(message, session.user)), assembled.bytes.length)
      }
    }

    // The calls a client gave up on (after a failure): no reply subject, the session named by its inbox.
    const onInterrupt = (data: Uint8Array) => {
      const request = envelope.body(data, 65_536)
      const session = typeof request?.inbox === "string" ? table.byInbox(request.inbox) : undefined
      if (session === undefined || !session.ready || !Array.isArray(request?.ids)) return
      const messages = request.ids.filter((id): id is string => typeof id === "string")
        .map((requestId): FromClientEncoded => ({ _tag: "Interrupt", requestId }))
      if (messages.length > 0) enqueue(session, messages, 0)
    }

    const enqueue = (session: serverSessions.Session, messages: ReadonlyArray<FromClientEncoded>, bytes: number) => {
      if (session.pending >= maxPendingFrames) {
        refuse(session.inbox, `more than ${maxPendingFrames} frames waiting`)
        return end(session)
      }
      session.pending++
      buffered += bytes
      inbound.unsafeOffer({ session, messages, bytes })
    }

    const onMessage = (message: Msg) => {
      if (message.data[0] === envelope.Client.Interrupt) return onInterrupt(message.data)
      const inbox = message.reply
      const user = inbox === undefined ? undefined : Subjects.inboxUser(inbox)
      const data = message.data
      if (inbox === undefined || user === undefined || data.length === 0) return
      const now = Date.now()
      const kind = data[0]
      if (kind === envelope.Client.Probe) return answer(inbox, envelope.Machine.Here, { machine })
      if (kind === envelope.Client.Open) {
        const request = envelope.body(data)
        if (request?.v !== envelope.VERSION) {
          return refuse(inbox, `transport version ${String(request?.v)}; this machine speaks ${envelope.VERSION}`)
        }
        const name = typeof request.name === "string" ? request.name.slice(0, 128) : user
        const opened = table.open(inbox, user, name, serverSessions.bindingOf(request.binding), now)
        if (typeof opened === "string") return refuse(inbox, opened)
        return answer(inbox, envelope.Machine.Challenge, { challenge: opened.challenge, attempt: request.attempt })
      }
      const session = table.byInbox(inbox)
      if (session === undefined) {
        return kind === envelope.Client.Close ? undefined : answer(inbox, envelope.Machine.Gone, { reason: "unknown" })
      }
      session.lastSeen = now
      switch (kind) {
        case envelope.Client.Confirm: {
          const challenge = envelope.body(data)?.challenge
          if (
            session.ready || typeof challenge !== "string" || challenge.length !== session.challenge.length ||
            !crypto.timingSafeEqual(Buffer.from(challenge), Buffer.from(session.challenge))
          ) {
            refuse(inbox, "the handshake's challenge was not answered")
            return end(session)
          }
          session.ready = true
          return answer(inbox, envelope.Machine.Ready, { machine, clientId: session.clientId })
        }
        case envelope.Client.Heartbeat: {
          const heartbeat = envelope.body(data)
          table.bind(session, serverSessions.bindingOf(heartbeat?.binding))
          return answer(inbox, envelope.Machine.Pong, { seq: heartbeat?.seq })
        }
        case envelope.Client.Part:
        case envelope.Client.Frame:
          return session.ready ? onFrame(session, data, kind === envelope.Client.Frame) : undefined
        case envelope.Client.Close:
          return end(session)
      }
    }

    // A user the configuration does not let serve this subject hears so, not that the name is taken.
    yield* Effect.scoped(subscribe(nats, Subjects.rpc(machine), () => undefined))
    yield* probe(nats, machine)
    yield* subscribe(nats, Subjects.rpc(machine), onMessage)
    if (options.disconnectEvents !== false) {
      yield* subscribe(nats, options.disconnectEvents ?? Subjects.disconnectEvents("FLEET"), (message) => {
        const event = envelope.json(message.data, 65_536)
        const server = (event?.server as { id?: unknown } | undefined)?.id
        const cid = (event?.client as { id?: unknown } | undefined)?.id
        const binding = serverSessions.bindingOf({ server, cid })
        if (binding !== undefined) table.disconnected(binding)
      })
    }
    yield* Effect.sync(() => table.expire(Date.now(), handshakeTimeoutMs, sessionTimeoutMs)).pipe(
      Effect.repeat(Schedule.spaced(Math.max(50, Math.min(1_000, sessionTimeoutMs / 4)))),
      Effect.forkScoped
    )
    // A machine that stops tells each client, so their calls fail now rather than after the pings.
    const stop = Effect.sync(() => {
      for (const session of table.all()) {
        answer(session.inbox, envelope.Machine.Gone, { reason: "stopping" })
        table.end(session)
      }
    })
    yield* Effect.addFinalizer(() => stop)

    const send = (clientId: number, response: FromServerEncoded) =>
      Effect.sync(() => {
        const session = table.byClientId(clientId)
        if (session === undefined) return
        let encoded: Uint8Array | string | undefined
        try {
          encoded = parser.encode(response)
        } catch (cause) {
          encoded = parser.encode({ _tag: "Defect", defect: String(cause) })
        }
        if (encoded === undefined) return
        const bytes = typeof encoded === "string" ? new TextEncoder().encode(encoded) : encoded
        const kinds = { part: envelope.Machine.Part, last: envelope.Machine.Frame }
        for (const piece of envelope.frame(kinds, session.frameNo++, bytes, chunk())) {
          publish(nats, session.inbox, piece)
        }
      })

    const protocol = yield* RpcServer.Protocol.make((writeRequest) =>
      Effect.gen(function*() {
        yield* Queue.take(inbound).pipe(
          Effect.flatMap(({ bytes, messages, session }) => {
            session.pending--
            buffered -= bytes
            if (session.ended) return Effect.void
            return Effect.forEach(messages, (message) => writeRequest(session.clientId, message), { discard: true })
          }),
          Effect.forever,
          Effect.interruptible,
          Effect.forkScoped
        )
        return {
          disconnects,
          send,
          end: () => Effect.void,
          clientIds: Effect.sync(() => table.readyIds()),
          initialMessage: Effect.succeedNone,
          supportsAck: true,
          supportsTransferables: false,
          supportsSpanPropagation: false
        }
      })
    )
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
