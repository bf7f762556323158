/**
 * What a machine does with each message on its subject: the handshake, frames put back together and handed to
 * the `@effect/rpc` server in order (each at once when its session has nothing waiting), the acknowledgements
 * of streams, interrupts, heartbeats. Every byte held for a session is counted against the machine's bound
 * before it is held; the session that would pass a bound is refused and ended, and only that one.
 */
import type { FromClientEncoded } from "@effect/rpc/RpcMessage"
import type * as RpcSerialization from "@effect/rpc/RpcSerialization"
import type { Msg } from "@nats-io/transport-node"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import type * as Nats from "../Nats.js"
import * as Subjects from "../Subjects.js"
import * as envelope from "./envelope.js"
import * as serverSessions from "./serverSessions.js"
import { publish } from "./subscription.js"

/** What the input needs of its machine. */
export interface Machine {
  readonly nats: Nats.Service
  /** The machine's clock (taken where the server is built): the sessions' times, read in NATS callbacks. */
  readonly clock: Clock.Clock
  readonly machine: string
  readonly table: serverSessions.Table
  readonly parser: RpcSerialization.Parser
  /** The header naming the session's proven user on every request. */
  readonly userHeader: string
  readonly maxPendingFrames: number
  readonly maxBufferedBytes: number
  /** The `@effect/rpc` server's input (set once the server runs). */
  readonly toServer: () => (clientId: number, message: FromClientEncoded) => Effect.Effect<void>
}

/** The machine's input: `onMessage` for its subject, `ended` for each session that ends. */
export const make = (machine: Machine) => {
  const { clock, maxBufferedBytes, maxPendingFrames, nats, parser, table, userHeader } = machine
  // What every session holds, counted before it is held: partial frames and frames not yet taken.
  let buffered = 0

  const answer = (inbox: string, kind: number, body: unknown = {}) => publish(nats, inbox, envelope.control(kind, body))
  const refuse = (inbox: string, reason: string) => answer(inbox, envelope.Machine.Refused, { reason })

  const withUser = (message: FromClientEncoded, user: string): FromClientEncoded =>
    message._tag !== "Request" ? message : {
      ...message,
      headers: [...message.headers.filter(([name]) => name.toLowerCase() !== userHeader), [userHeader, user]]
    }

  // Handed to the server in the order received, at once when the session has nothing waiting.
  const deliver = (session: serverSessions.Session, messages: ReadonlyArray<FromClientEncoded>, bytes: number) => {
    if (session.pending >= maxPendingFrames) {
      refuse(session.inbox, `more than ${maxPendingFrames} frames waiting`)
      return table.end(session)
    }
    session.pending++
    buffered += bytes
    session.inbound.offer(
      Effect.suspend(() => {
        if (session.ended) return Effect.void
        const write = machine.toServer()
        return messages.length === 1
          ? write(session.clientId, messages[0]!)
          : Effect.forEach(messages, (message) => write(session.clientId, message), { discard: true })
      }),
      () => {
        session.pending--
        buffered -= bytes
      }
    )
  }

  // The client took `count` chunks of a stream: the acknowledgement the server waits for, once it is due.
  const acked = (session: serverSessions.Session, requestId: string, count: number) => {
    if (session.credits.acked(requestId, count)) deliver(session, [{ _tag: "Ack", requestId }], 0)
  }

  const onFrame = (session: serverSessions.Session, message: Uint8Array, last: boolean) => {
    if (buffered + message.length > maxBufferedBytes) {
      refuse(session.inbox, `the machine holds ${maxBufferedBytes} bytes of input not yet handled`)
      return table.end(session)
    }
    const held = session.assembler.held
    const assembled = session.assembler.push(message, last)
    buffered += session.assembler.held - held
    if (assembled._tag === "TooLarge") {
      refuse(session.inbox, `a frame larger than ${session.assembler.maxFrameBytes} bytes`)
      return table.end(session)
    }
    if (assembled._tag !== "Frame") return
    // Frames come in order from the client's connection: one after a gap says the gap's were lost on the way
    // (the client fails the calls they carried, which never ran).
    const frameNo = envelope.frameNumber(message)
    if (frameNo > session.expected) {
      answer(session.inbox, envelope.Machine.Lost, { from: session.expected, to: frameNo - 1 })
    }
    if (frameNo >= session.expected) session.expected = frameNo + 1
    let decoded: ReadonlyArray<FromClientEncoded>
    try {
      decoded = parser.decode(assembled.bytes) as ReadonlyArray<FromClientEncoded>
    } catch (error) {
      refuse(session.inbox, `a frame that does not decode: ${String(error).slice(0, 200)}`)
      return table.end(session)
    }
    const messages: Array<FromClientEncoded> = []
    for (const message of decoded) {
      if (message._tag === "Ack") acked(session, String(message.requestId), 1)
      else messages.push(withUser(message, session.user))
    }
    if (messages.length > 0) deliver(session, messages, assembled.bytes.length)
  }

  const onAcks = (session: serverSessions.Session, data: Uint8Array) => {
    const acks = envelope.body(data, 65_536)?.acks
    if (!Array.isArray(acks)) return
    for (const entry of acks) {
      if (Array.isArray(entry) && typeof entry[0] === "string" && Number.isSafeInteger(entry[1])) {
        acked(session, entry[0], entry[1] as number)
      }
    }
  }

  // The calls a client gave up on (after a failure): no reply subject, the session named by its inbox.
  const onInterrupt = (data: Uint8Array) => {
    const request = envelope.body(data, 65_536)
    const session = typeof request?.inbox === "string" ? table.byInbox(request.inbox) : undefined
    if (session === undefined || !session.ready || !Array.isArray(request?.ids)) return
    const messages = request.ids.filter((id): id is string => typeof id === "string")
      .map((requestId): FromClientEncoded => ({ _tag: "Interrupt", requestId }))
    if (messages.length > 0) deliver(session, messages, 0)
  }

  const onOpen = (inbox: string, user: string, data: Uint8Array, now: number) => {
    const request = envelope.body(data)
    if (request?.v !== envelope.VERSION) {
      return refuse(inbox, `transport version ${String(request?.v)}; this machine speaks ${envelope.VERSION}`)
    }
    const name = typeof request.name === "string" ? request.name.slice(0, 128) : user
    const opened = table.open(inbox, user, name, serverSessions.bindingOf(request.binding), now)
    if (typeof opened === "string") return refuse(inbox, opened)
    return answer(inbox, envelope.Machine.Challenge, { challenge: opened.challenge, attempt: request.attempt })
  }

  const onConfirm = (session: serverSessions.Session, data: Uint8Array) => {
    const challenge = envelope.body(data)?.challenge
    if (
      session.ready || typeof challenge !== "string" || challenge.length !== session.challenge.length ||
      !crypto.timingSafeEqual(Buffer.from(challenge), Buffer.from(session.challenge))
    ) {
      refuse(session.inbox, "the handshake's challenge was not answered")
      return table.end(session)
    }
    session.ready = true
    return answer(session.inbox, envelope.Machine.Ready, { machine: machine.machine, clientId: session.clientId })
  }

  const onMessage = (message: Msg) => {
    const data = message.data
    const kind = data[0]
    if (kind === undefined) return
    if (kind === envelope.Client.Interrupt) return onInterrupt(data)
    const inbox = message.reply
    if (inbox === undefined) return
    const now = clock.unsafeCurrentTimeMillis()
    // A session exists only for an inbox of the right form, so a known one needs no second look.
    const session = kind === envelope.Client.Open ? undefined : table.byInbox(inbox)
    if (session === undefined) {
      const user = Subjects.inboxUser(inbox)
      if (user === undefined) return
      if (kind === envelope.Client.Probe) return answer(inbox, envelope.Machine.Here, { machine: machine.machine })
      if (kind === envelope.Client.Open) return onOpen(inbox, user, data, now)
      return kind === envelope.Client.Close ? undefined : answer(inbox, envelope.Machine.Gone, { reason: "unknown" })
    }
    session.lastSeen = now
    switch (kind) {
      case envelope.Client.Part:
      case envelope.Client.Frame:
        return session.ready ? onFrame(session, data, kind === envelope.Client.Frame) : undefined
      case envelope.Client.Acks:
        return session.ready ? onAcks(session, data) : undefined
      case envelope.Client.Confirm:
        return onConfirm(session, data)
      case envelope.Client.Heartbeat: {
        const heartbeat = envelope.body(data)
        table.bind(session, serverSessions.bindingOf(heartbeat?.binding))
        // `sent`: the frames the client had sent before this heartbeat; `next`: the next one this machine
        // expects. Behind the heartbeat in the same order, a frame below `sent` not received is lost.
        return answer(inbox, envelope.Machine.Pong, {
          seq: heartbeat?.seq,
          sent: heartbeat?.sent,
          next: session.expected
        })
      }
      case envelope.Client.Probe:
        return answer(inbox, envelope.Machine.Here, { machine: machine.machine })
      case envelope.Client.Close:
        return table.end(session)
    }
  }

  /** A session ended: what it held is released, what it sent and the server did not take is dropped. */
  const ended = (session: serverSessions.Session) => {
    buffered -= session.assembler.held
    session.assembler.reset()
    session.inbound.clear()
  }

  return { onMessage, ended, answer }
}
