/**
 * The audit of who wrote what to each terminal and of every change of control (the live view): an agent's
 * sends, a person's input (redacted while the terminal had echo off: only how many bytes), takes, hand-backs
 * and lease timeouts. Behind a Tag: in memory by default, the daemon's registry (SQLite) when one is
 * provided (`TerminalRegistry.auditLayer` in `@agent-terminal/daemon`).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/**
 * One audited event.
 *
 * @since 0.2.0
 */
export const AuditEntry = Schema.Struct({
  sessionId: Schema.String,
  /** When (ms since the epoch). */
  at: Schema.Number,
  /** Who: an agent's owner id, or `person:<name>`. */
  actor: Schema.String,
  /** `send`, `input`, `take`, `hand-back`, `idle-timeout`, `request`, `resize`, `closed`. */
  action: Schema.String,
  /** What, bounded (`[human typed 9 bytes with echo off]` for a secret). */
  detail: Schema.optional(Schema.String)
})
/** @since 0.2.0 */
export type AuditEntry = typeof AuditEntry.Type

/**
 * Where audit entries go. Recording never fails the terminal work: a failed write is the implementation's to
 * log.
 *
 * @since 0.2.0
 */
export class Audit extends Context.Tag("@agent-terminal/core/Audit")<
  Audit,
  {
    readonly record: (entry: AuditEntry) => Effect.Effect<void>
    /** A session's entries, oldest first (at most `limit`, the newest ones). */
    readonly of: (sessionId: string, limit?: number) => Effect.Effect<ReadonlyArray<AuditEntry>>
  }
>() {}

/**
 * At most this many characters of what was typed go into one entry.
 *
 * @since 0.2.0
 */
export const detailLength = 256

/**
 * Text for an entry: control characters shown as escapes (`\r`, `\x1b`), cut to `detailLength`.
 *
 * @since 0.2.0
 */
export const printable = (text: string): string => {
  let out = ""
  for (const char of text) {
    const code = char.codePointAt(0)!
    out += char === "\r"
      ? "\\r"
      : char === "\n"
      ? "\\n"
      : char === "\t"
      ? "\\t"
      : char === "\\"
      ? "\\\\"
      : code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0)
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : char
    if (out.length >= detailLength) return `${out.slice(0, detailLength)}…`
  }
  return out
}

/**
 * The audit in memory, bounded to the newest `maxEntries` (default 100 000): a ring, so recording costs
 * the same once it is full (dropping the oldest entry from the front of an array moved all the others:
 * ~0.25 ms per entry at 100 000, more than a whole send).
 *
 * @since 0.2.0
 */
export const makeMemory = (maxEntries = 100_000): Audit["Type"] => {
  const capacity = Math.max(0, Math.floor(maxEntries))
  const ring: Array<AuditEntry> = []
  /** Where the next entry goes once the ring is full: the oldest entry's place. */
  let oldest = 0
  return {
    record: (entry) =>
      Effect.sync(() => {
        if (capacity === 0) return
        if (ring.length < capacity) {
          ring.push(entry)
          return
        }
        ring[oldest] = entry
        oldest = (oldest + 1) % capacity
      }),
    of: (sessionId, limit = 1000) =>
      Effect.sync(() => {
        const found: Array<AuditEntry> = []
        const size = ring.length
        // newest first, so only the last `limit` of the session's entries are visited
        for (let back = 1; back <= size && found.length < limit; back++) {
          const entry = ring[(oldest + size - back) % size]!
          if (entry.sessionId === sessionId) found.push(entry)
        }
        return found.reverse()
      })
  }
}

/**
 * The audit in memory.
 *
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<Audit> = Layer.sync(Audit, () => makeMemory())
