/**
 * The live view's sign-ins, kept by the server: a person who proves they hold the bearer token
 * (`POST /live/login`, the bearer header only — a cookie never mints another) gets a session — 256 random
 * bits, valid for `ttlMs` (default 12 h) — as an HttpOnly, SameSite=Strict cookie, and a stable id that
 * names them as a person (the control lease and the audit: `web-<id>`, never the name they type). The
 * server keeps only a SHA-256 of each value, in memory: a sign-out revokes it, a restart (which a change of
 * the token takes) signs everyone out, a leaked cookie ends with its expiry or a sign-out, and nothing
 * about the token can be learnt from it.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"

/**
 * A new session: its cookie value and when it expires (ms since the epoch).
 *
 * @since 0.2.0
 */
export interface Issued {
  readonly value: string
  readonly expiresAt: number
  /** The person this sign-in is: `web-` and 48 random bits, stable for the session's life. */
  readonly person: string
}

/**
 * A live session as a request presents it.
 *
 * @since 0.3.0
 */
export interface Live {
  readonly person: string
  readonly expiresAt: number
}

/**
 * @since 0.2.0
 */
export class WebSessions extends Context.Tag("@agent-terminal/tools/WebSessions")<
  WebSessions,
  {
    readonly issue: () => Issued
    /** Whether `value` is a live session (an expired one is forgotten). */
    readonly valid: (value: string) => boolean
    /** The live session of `value` (`undefined`: none, or expired). */
    readonly lookup: (value: string) => Live | undefined
    readonly revoke: (value: string) => void
    readonly ttlMs: number
  }
>() {}

/**
 * Options of the store.
 *
 * @since 0.2.0
 */
export interface Options {
  /** How long a sign-in lasts (default 12 hours). */
  readonly ttlMs?: number | undefined
  /** At most this many live sessions; the oldest goes first (default 256). */
  readonly max?: number | undefined
  /** The clock (`layer` gives the fiber's; a test may give its own). */
  readonly now?: (() => number) | undefined
}

const hash = (value: string) => crypto.createHash("sha256").update(value).digest("base64url")

/**
 * A store in memory.
 *
 * @since 0.2.0
 */
export const make = (options: Options & { readonly now: () => number }): WebSessions["Type"] => {
  const ttlMs = options.ttlMs ?? 12 * 3600 * 1000
  const max = options.max ?? 256
  const now = options.now
  const live = new Map<string, Live>()
  const lookup = (value: string): Live | undefined => {
    if (value.length === 0 || value.length > 128) return undefined
    const key = hash(value)
    const session = live.get(key)
    if (session === undefined) return undefined
    if (session.expiresAt <= now()) {
      live.delete(key)
      return undefined
    }
    return session
  }
  return {
    ttlMs,
    issue: () => {
      const value = crypto.randomBytes(32).toString("base64url")
      const session: Live = { person: `web-${crypto.randomBytes(6).toString("hex")}`, expiresAt: now() + ttlMs }
      live.set(hash(value), session)
      while (live.size > max) live.delete(live.keys().next().value!)
      return { value, ...session }
    },
    valid: (value) => lookup(value) !== undefined,
    lookup,
    revoke: (value) => {
      live.delete(hash(value))
    }
  }
}

/**
 * The store as a layer.
 *
 * @since 0.2.0
 */
export const layer = (options: Options = {}): Layer.Layer<WebSessions> =>
  Layer.effect(
    WebSessions,
    Effect.map(
      Effect.clock,
      (clock) => make({ ...options, now: options.now ?? (() => clock.unsafeCurrentTimeMillis()) })
    )
  )
