/**
 * The machine's table of client sessions: one per inbox, each with its user (the inbox's own token, proven by
 * the challenge only that user can read), the connection it last said it is on (what the system's disconnect
 * event names), when it was last heard, and the caps on how many there are.
 */
import * as crypto from "node:crypto"
import type * as Nats from "../Nats.js"
import { Assembler } from "./envelope.js"
import type { Line } from "./ordered.js"
import { Credits, type Window } from "./streamWindow.js"

/** One client's session at this machine. */
export interface Session {
  readonly clientId: number
  readonly user: string
  readonly inbox: string
  readonly name: string
  readonly challenge: string
  readonly openedAt: number
  readonly assembler: Assembler
  ready: boolean
  ended: boolean
  lastSeen: number
  binding: Nats.Binding | undefined
  /** What the session sent, handed to the server in order. */
  readonly inbound: Line
  /** Decoded batches handed to the server and not yet taken, and their frames' bytes. */
  pending: number
  /** How far each of its streams may run ahead of it. */
  readonly credits: Credits
  /** The next frame number this machine sends the session. */
  frameNo: number
  /** The number of the next frame expected from the session (an earlier one missing was lost on the way). */
  expected: number
}

/** Caps of the table. */
export interface Limits {
  readonly maxSessions: number
  readonly maxSessionsPerUser: number
  readonly maxFrameBytes: number
  readonly streamWindow: Window
}

const bindingKey = (binding: Nats.Binding) => `${binding.server}/${binding.cid}`

/** The table; `inbound` makes a session's line to the server, `onEnd` hears of every session that ends. */
export const make = (limits: Limits, inbound: () => Line, onEnd: (session: Session) => void) => {
  let nextClientId = 0
  const byInbox = new Map<string, Session>()
  const byClientId = new Map<number, Session>()
  const byBinding = new Map<string, Set<Session>>()
  const perUser = new Map<string, number>()

  const unbind = (session: Session) => {
    if (session.binding === undefined) return
    const key = bindingKey(session.binding)
    const set = byBinding.get(key)
    set?.delete(session)
    if (set?.size === 0) byBinding.delete(key)
  }

  const bind = (session: Session, binding: Nats.Binding | undefined) => {
    if (binding === undefined) return
    if (session.binding !== undefined && bindingKey(session.binding) === bindingKey(binding)) return
    unbind(session)
    session.binding = binding
    const key = bindingKey(binding)
    const set = byBinding.get(key) ?? new Set<Session>()
    set.add(session)
    byBinding.set(key, set)
  }

  const end = (session: Session) => {
    if (session.ended) return
    session.ended = true
    byInbox.delete(session.inbox)
    byClientId.delete(session.clientId)
    unbind(session)
    const left = (perUser.get(session.user) ?? 1) - 1
    if (left === 0) perUser.delete(session.user)
    else perUser.set(session.user, left)
    onEnd(session)
  }

  /**
   * A new session on `inbox`, or why not (the caps). An open sent again during its handshake finds the same
   * session (and its challenge); a ready session on the same inbox ends and a new one starts.
   */
  const open = (
    inbox: string,
    user: string,
    name: string,
    binding: Nats.Binding | undefined,
    now: number
  ): Session | string => {
    const previous = byInbox.get(inbox)
    if (previous !== undefined && !previous.ready) return previous
    if (previous !== undefined) end(previous)
    if (byInbox.size >= limits.maxSessions) return `the machine has its maximum of ${limits.maxSessions} sessions`
    if ((perUser.get(user) ?? 0) >= limits.maxSessionsPerUser) {
      return `user ${user} has its maximum of ${limits.maxSessionsPerUser} sessions on this machine`
    }
    const session: Session = {
      clientId: nextClientId++,
      user,
      inbox,
      name,
      challenge: crypto.randomBytes(16).toString("hex"),
      openedAt: now,
      assembler: new Assembler(limits.maxFrameBytes),
      ready: false,
      ended: false,
      lastSeen: now,
      binding: undefined,
      inbound: inbound(),
      pending: 0,
      credits: new Credits(limits.streamWindow),
      frameNo: 0,
      expected: 0
    }
    bind(session, binding)
    byInbox.set(inbox, session)
    byClientId.set(session.clientId, session)
    perUser.set(user, (perUser.get(user) ?? 0) + 1)
    return session
  }

  /** End every session on the connection the system says closed. */
  const disconnected = (binding: Nats.Binding) => {
    const set = byBinding.get(bindingKey(binding))
    if (set === undefined) return 0
    const sessions = [...set]
    for (const session of sessions) end(session)
    return sessions.length
  }

  /** End the sessions not heard from in time: a handshake left half way, or a client gone silent. */
  const expire = (now: number, handshakeTimeoutMs: number, sessionTimeoutMs: number) => {
    for (const session of [...byInbox.values()]) {
      if (!session.ready ? now - session.openedAt > handshakeTimeoutMs : now - session.lastSeen > sessionTimeoutMs) {
        end(session)
      }
    }
  }

  return {
    open,
    end,
    bind,
    disconnected,
    expire,
    byInbox: (inbox: string) => byInbox.get(inbox),
    byClientId: (clientId: number) => byClientId.get(clientId),
    all: () => [...byInbox.values()],
    readyIds: () => new Set([...byClientId.values()].filter((session) => session.ready).map((s) => s.clientId))
  }
}

/** The session table. */
export type Table = ReturnType<typeof make>

/** Whether `value` names a connection (the body of an open or a heartbeat). */
export const bindingOf = (value: unknown): Nats.Binding | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const { cid, server } = value as { server?: unknown; cid?: unknown }
  return typeof server === "string" && server.length <= 128 && typeof cid === "number" && Number.isSafeInteger(cid)
    ? { server, cid }
    : undefined
}
