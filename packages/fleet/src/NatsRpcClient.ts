/**
 * An `RpcClient.Protocol` over NATS: one session with one machine. Requests go to the machine's subject with
 * this session's inbox as the reply (`agent-terminal.inbox.<user>.<random>`), answers come back there; the
 * session starts with the machine's challenge, which only this NATS user can read. While a call or stream is
 * in flight the session pings the machine every 200 ms: "no responders" or a second of silence fails every
 * call in flight with `MachineUnavailable`; a dropped NATS connection fails them with `ConnectionLost`.
 * Nothing is retried: the caller knows what it may repeat. `make` gives an `RpcClient` whose calls fail with
 * those errors themselves rather than inside an `RpcClientError`.
 *
 * @since 0.3.0
 */
import type * as Rpc from "@effect/rpc/Rpc"
import * as RpcClient from "@effect/rpc/RpcClient"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import type * as RpcGroup from "@effect/rpc/RpcGroup"
import type { FromClientEncoded, FromServerEncoded } from "@effect/rpc/RpcMessage"
import * as RpcSchema from "@effect/rpc/RpcSchema"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as crypto from "node:crypto"
import {
  ConnectionLost,
  type InvalidName,
  MachineRefused,
  MachineUnavailable,
  type NotPermitted
} from "./FleetErrors.js"
import { ClientSession, type Failure } from "./internal/clientSession.js"
import * as envelope from "./internal/envelope.js"
import * as ordered from "./internal/ordered.js"
import { isNoResponders, publish, subscribe } from "./internal/subscription.js"
import { Nats } from "./Nats.js"
import * as Subjects from "./Subjects.js"

/**
 * Options of a session with a machine.
 *
 * @since 0.3.0
 */
export interface Options {
  /** The machine called. */
  readonly machine: string
  /** Which of its services (default `rpc`, the daemon's protocol; `oversee`, the live view's). */
  readonly service?: Subjects.Service | undefined
  /** This client's name in the machine's logs. */
  readonly name?: string | undefined
  /** While anything is in flight, ping this often (default 200 ms). */
  readonly pingIntervalMs?: number | undefined
  /** When idle, a heartbeat this often (default 1 s; the machine ends a session silent for 5 s). */
  readonly heartbeatMs?: number | undefined
  /** Pings unanswered this long while something is in flight: `MachineUnavailable` (default 1 s). */
  readonly unavailableAfterMs?: number | undefined
  /** The handshake's deadline (default 2 s). */
  readonly handshakeTimeoutMs?: number | undefined
  /** The largest answer put back together from parts (default 16 MiB). */
  readonly maxFrameBytes?: number | undefined
}

/**
 * What a call over NATS can fail with besides its own errors.
 *
 * @since 0.3.0
 */
export type TransportError = MachineUnavailable | ConnectionLost | MachineRefused | RpcClientError

/**
 * Why a session could not start.
 *
 * @since 0.3.0
 */
export type SessionError = MachineUnavailable | MachineRefused | InvalidName | NotPermitted

const asClientError = (error: Failure["error"]) =>
  new RpcClientError({ reason: "Protocol", message: error.message, cause: error })

type Phase =
  | { readonly _tag: "Challenge"; readonly deferred: Deferred.Deferred<string, SessionError> }
  | { readonly _tag: "Ready"; readonly deferred: Deferred.Deferred<void, SessionError> }
  | { readonly _tag: "Open" }

/**
 * A session with `options.machine` as the protocol of an `RpcClient`; it ends (the machine told) with the scope.
 *
 * @since 0.3.0
 */
export const makeProtocol = (
  options: Options
): Effect.Effect<
  RpcClient.Protocol["Type"],
  SessionError,
  Nats | RpcSerialization.RpcSerialization | Scope.Scope
> =>
  RpcClient.Protocol.make((writeResponse) =>
    Effect.gen(function*() {
      const nats = yield* Nats
      // the session's times (sends, heartbeats, silences) on the fiber's clock, read in NATS callbacks below
      const clock = yield* Effect.clock
      const serialization = yield* RpcSerialization.RpcSerialization
      const machine = yield* Subjects.validName("machine", options.machine)
      const subject = Subjects.serviceSubject(machine, options.service ?? "rpc")
      const inbox = `${Subjects.inbox(nats.user)}.${crypto.randomBytes(12).toString("hex")}`
      const parser = serialization.unsafeMake()
      // Each call's answers reach the client in the order they came, each as it is read; a stream waiting for
      // room in its reader's buffer holds up only its own later chunks.
      const run: ordered.Run = yield* FiberSet.make<void, unknown>().pipe(
        Effect.flatMap((fibers) => FiberSet.runtime(fibers)())
      )
      const lines = new Map<string, ordered.Line>()
      const toClient = (message: FromServerEncoded) => {
        if (message._tag !== "Chunk" && message._tag !== "Exit") {
          return void run(Effect.suspend(() => writeResponse(message)))
        }
        const requestId = String(message.requestId)
        let line = lines.get(requestId)
        if (line === undefined) {
          line = new ordered.Line(run, () => lines.delete(requestId))
          lines.set(requestId, line)
        }
        line.offer(Effect.suspend(() => {
          if (message._tag === "Exit") {
            session.inflight.delete(requestId)
            frameOfCall.delete(requestId)
          }
          return writeResponse(message)
        }))
      }
      const assembler = new envelope.Assembler(options.maxFrameBytes ?? 16 * 1024 * 1024)
      const session = new ClientSession(machine, {
        pingIntervalMs: options.pingIntervalMs ?? 200,
        heartbeatMs: options.heartbeatMs ?? 1_000,
        unavailableAfterMs: options.unavailableAfterMs ?? 1_000
      })
      let frameNo = 0
      /** The frame each call in flight went in (to know whether a frame the machine never got carried one). */
      const frameOfCall = new Map<string, number>()
      let attempt = 0
      let phase: Phase = { _tag: "Challenge", deferred: yield* Deferred.make<string, SessionError>() }

      const toMachine = (data: Uint8Array) => {
        session.lastSent = clock.unsafeCurrentTimeMillis()
        publish(nats, subject, data, inbox)
      }
      const sendFrame = (message: FromClientEncoded) => {
        const encoded = parser.encode(message)
        if (encoded === undefined) return
        if (message._tag === "Request") frameOfCall.set(String(message.id), frameNo)
        const bytes = typeof encoded === "string" ? new TextEncoder().encode(encoded) : encoded
        const chunk = (nats.connection.info?.max_payload ?? 1024 * 1024) - 64
        for (
          const piece of envelope.frame(
            { part: envelope.Client.Part, last: envelope.Client.Frame },
            frameNo++,
            bytes,
            chunk
          )
        ) {
          toMachine(piece)
        }
      }
      // Sent without a reply subject: no "no responders" comes back from it to fail a later call.
      const interrupt = (ids: ReadonlyArray<string>) => {
        if (ids.length > 0) publish(nats, subject, envelope.control(envelope.Client.Interrupt, { inbox, ids }))
      }
      // Every call in flight fails; the machine is told to stop them (at once, or when NATS is back).
      const failWith = (failure: Failure | undefined) => {
        if (failure === undefined) return
        toClient({ _tag: "ClientProtocolError", error: asClientError(failure.error) })
        if (session.connected) interrupt(session.takeInterrupts())
      }
      // Chunks taken by the reader, acknowledged together once the messages read with them are handled.
      const acks = new Map<string, number>()
      let acksDue = false
      const sendAcks = () => {
        acksDue = false
        if (acks.size === 0) return
        const body = { acks: [...acks] }
        acks.clear()
        if (session.unsendable() === undefined) toMachine(envelope.control(envelope.Client.Acks, body))
      }
      const heartbeat = () =>
        toMachine(envelope.control(envelope.Client.Heartbeat, {
          seq: session.pinged(clock.unsafeCurrentTimeMillis()),
          binding: nats.binding(),
          sent: frameNo
        }))
      /**
       * Frames `from`..`to` never reached the machine: when one carried a call still in flight, the calls in
       * flight fail (`ConnectionLost`), rather than wait for an answer that cannot come while the machine
       * answers every ping. A call failed before (a dropped connection) is not in flight any more.
       */
      const framesLost = (from: unknown, to: unknown) => {
        if (typeof from !== "number" || typeof to !== "number" || to < from) return
        let carried = false
        for (const [requestId, frame] of frameOfCall) {
          if (!session.inflight.has(requestId)) frameOfCall.delete(requestId)
          else if (frame >= from && frame <= to) carried = true
        }
        if (carried) failWith(session.lost(to - from + 1))
      }
      const handshakeFailed = (error: SessionError) => {
        if (phase._tag === "Challenge") Deferred.unsafeDone(phase.deferred, Effect.fail(error))
        else if (phase._tag === "Ready") Deferred.unsafeDone(phase.deferred, Effect.fail(error))
      }

      const onMessage = (message: { readonly data: Uint8Array } & Parameters<typeof isNoResponders>[0]) => {
        const now = clock.unsafeCurrentTimeMillis()
        if (isNoResponders(message)) {
          if (phase._tag !== "Open") {
            return handshakeFailed(
              new MachineUnavailable({
                machine,
                since: now,
                reason: "nothing serves its subject (NATS: no responders)"
              })
            )
          }
          return failWith(session.noResponders(now))
        }
        const data = message.data
        if (data.length === 0) return
        session.heard()
        switch (data[0]) {
          case envelope.Machine.Challenge: {
            const answer = envelope.body(data)
            const challenge = answer?.challenge
            // Only the challenge of the latest open: an earlier one's session was replaced by it.
            if (phase._tag === "Challenge" && typeof challenge === "string" && answer?.attempt === attempt) {
              Deferred.unsafeDone(phase.deferred, Effect.succeed(challenge))
            }
            return
          }
          case envelope.Machine.Ready:
            if (phase._tag === "Ready") Deferred.unsafeDone(phase.deferred, Effect.void)
            return
          case envelope.Machine.Pong: {
            // every frame sent before the heartbeat came before it: one the machine still expects is lost
            const pong = envelope.body(data)
            if (phase._tag === "Open" && typeof pong?.sent === "number" && typeof pong.next === "number") {
              framesLost(pong.next, pong.sent - 1)
            }
            return
          }
          case envelope.Machine.Lost: {
            const lost = envelope.body(data)
            if (phase._tag === "Open") framesLost(lost?.from, lost?.to)
            return
          }
          case envelope.Machine.Refused: {
            const reason = String(envelope.body(data)?.reason ?? "refused").slice(0, 500)
            if (phase._tag !== "Open") return handshakeFailed(new MachineRefused({ machine, reason }))
            return failWith(session.refused(reason))
          }
          case envelope.Machine.Gone: {
            const reason = String(envelope.body(data)?.reason ?? "")
            if (phase._tag !== "Open") {
              return handshakeFailed(new MachineUnavailable({ machine, since: now, reason: "the machine is stopping" }))
            }
            return failWith(session.gone(reason, now))
          }
          case envelope.Machine.Part:
          case envelope.Machine.Frame: {
            const assembled = assembler.push(data, data[0] === envelope.Machine.Frame)
            if (assembled._tag === "TooLarge") {
              return failWith(session.refused(`an answer larger than ${assembler.maxFrameBytes} bytes`))
            }
            if (assembled._tag !== "Frame") return
            try {
              const messages = parser.decode(assembled.bytes) as ReadonlyArray<FromServerEncoded>
              for (const answer of messages) toClient(answer)
            } catch (error) {
              failWith(session.refused(`an answer that does not decode: ${String(error).slice(0, 200)}`))
            }
            return
          }
        }
      }

      yield* subscribe(nats, inbox, onMessage)

      // The handshake: open, answer the challenge that only this user's inbox receives, ready.
      const timeout = Effect.timeoutFail({
        duration: options.handshakeTimeoutMs ?? 2_000,
        onTimeout: () =>
          new MachineUnavailable({
            machine,
            since: clock.unsafeCurrentTimeMillis(),
            reason: `it did not answer the session's handshake within ${options.handshakeTimeoutMs ?? 2_000} ms ` +
              `(${phase._tag === "Challenge" ? "no challenge came" : "no ready came after the challenge"})`
          })
      })
      // The open is sent again every second until a challenge comes (a message can be lost while the
      // cluster learns of a machine); each open replaces the machine's half-open session of this inbox.
      const open = Effect.sync(() => {
        attempt++
        toMachine(envelope.control(envelope.Client.Open, {
          v: envelope.VERSION,
          name: options.name ?? nats.user,
          binding: nats.binding(),
          attempt
        }))
      })
      const opening = yield* open.pipe(Effect.repeat(Schedule.spaced("1 second")), Effect.fork)
      const challenge = yield* Deferred.await(phase.deferred).pipe(timeout, Effect.ensuring(Fiber.interrupt(opening)))
      const ready = yield* Deferred.make<void, SessionError>()
      phase = { _tag: "Ready", deferred: ready }
      toMachine(envelope.control(envelope.Client.Confirm, { challenge }))
      yield* Deferred.await(ready).pipe(timeout)
      phase = { _tag: "Open" }
      yield* Effect.addFinalizer(() => Effect.sync(() => toMachine(envelope.control(envelope.Client.Close))))

      yield* Effect.sync(() => {
        const next = session.tick(clock.unsafeCurrentTimeMillis())
        if (next === "ping") heartbeat()
        else failWith(next)
      }).pipe(Effect.repeat(Schedule.spaced(session.timing.pingIntervalMs)), Effect.forkScoped)
      yield* Stream.fromPubSub(nats.events).pipe(
        Stream.runForEach((event) =>
          Effect.sync(() => {
            if (event._tag === "Disconnected") {
              assembler.reset()
              failWith(session.disconnected(event.server))
            } else if (event._tag === "Reconnected") {
              session.reconnected()
              heartbeat()
              interrupt(session.takeInterrupts())
            }
          })
        ),
        Effect.forkScoped
      )

      return {
        send: (request: FromClientEncoded) => {
          const unsendable = session.unsendable()
          if (unsendable !== undefined) return Effect.fail(asClientError(unsendable))
          if (request._tag === "Ack") {
            return Effect.sync(() => {
              acks.set(request.requestId, (acks.get(request.requestId) ?? 0) + 1)
              if (!acksDue) {
                acksDue = true
                queueMicrotask(sendAcks)
              }
            })
          }
          if (request._tag === "Request") session.inflight.add(String(request.id))
          else if (request._tag === "Interrupt") {
            session.inflight.delete(String(request.requestId))
            frameOfCall.delete(String(request.requestId))
            acks.delete(request.requestId)
          }
          return Effect.sync(() => sendFrame(request))
        },
        supportsAck: true,
        supportsTransferables: false
      }
    })
  )

const isTransportCause = (error: unknown): error is RpcClientError & { readonly cause: TransportError } =>
  error instanceof RpcClientError &&
  (error.cause instanceof MachineUnavailable || error.cause instanceof ConnectionLost ||
    error.cause instanceof MachineRefused)

const lift = (error: unknown) => isTransportCause(error) ? error.cause : error

/**
 * An `RpcClient` of `group` over a session with `options.machine`: its calls fail with `MachineUnavailable`,
 * `ConnectionLost` or `MachineRefused` themselves (and `RpcClientError` for anything else of the transport).
 *
 * @since 0.3.0
 */
export const make = <Rpcs extends Rpc.Any>(
  group: RpcGroup.RpcGroup<Rpcs>,
  options: Options
): Effect.Effect<
  RpcClient.RpcClient<Rpcs, TransportError>,
  SessionError,
  Nats | RpcSerialization.RpcSerialization | Scope.Scope | Rpc.MiddlewareClient<Rpcs>
> =>
  Effect.gen(function*() {
    const protocol = yield* makeProtocol(options)
    const client = yield* RpcClient.make(group, { disableTracing: true }).pipe(
      Effect.provideService(RpcClient.Protocol, protocol)
    )
    const lifted: Record<string, any> = {}
    for (const rpc of group.requests.values() as Iterable<Rpc.AnyWithProps>) {
      const dot = rpc._tag.indexOf(".")
      const prefix = dot === -1 ? undefined : rpc._tag.slice(0, dot)
      const tag = dot === -1 ? rpc._tag : rpc._tag.slice(dot + 1)
      const source = (prefix === undefined ? client : (client as any)[prefix]) as Record<string, any>
      const target = prefix === undefined ? lifted : (lifted[prefix] ??= {})
      const call = source[tag] as (payload: unknown, options?: any) => any
      const isStream = RpcSchema.isStreamSchema(rpc.successSchema)
      target[tag] = (payload: unknown, callOptions?: { readonly asMailbox?: boolean; streamBufferSize?: number }) => {
        const result = call(payload, callOptions)
        if (!isStream) return Effect.mapError(result, lift)
        if (callOptions?.asMailbox !== true) return Stream.mapError(result, lift)
        return Effect.flatMap(result as Effect.Effect<Mailbox.ReadonlyMailbox<unknown, unknown>>, (mailbox) =>
          Mailbox.fromStream(Stream.mapError(Mailbox.toStream(mailbox), lift), {
            capacity: callOptions.streamBufferSize ?? 16
          }))
      }
    }
    return lifted as RpcClient.RpcClient<Rpcs, TransportError>
  })
