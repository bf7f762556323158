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
 * The audit in memory, bounded to the newest `maxEntries` (default 100 000).
 *
 * @since 0.2.0
 */
export const makeMemory = (maxEntries = 100_000): Audit["Type"] => {
  const entries: Array<AuditEntry> = []
  return {
    record: (entry) =>
      Effect.sync(() => {
        entries.push(entry)
        if (entries.length > maxEntries) entries.splice(0, entries.length - maxEntries)
      }),
    of: (sessionId, limit = 1000) =>
      Effect.sync(() => entries.filter((entry) => entry.sessionId === sessionId).slice(-limit))
  }
}

/**
 * The audit in memory.
 *
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<Audit> = Layer.sync(Audit, () => makeMemory())
