/**
 * The registry's audit, written behind: an entry is kept in memory when it happens and written with the
 * others of its moment, in one transaction, a short while later (`flushMs`), off the path of the send or the
 * keystroke it records. Reading a session's audit writes what is pending first, so a reader sees every entry
 * recorded before it asked. Nothing is dropped: past `maxPending` entries, recording waits for a write; a
 * stopping daemon writes what is pending. Only a daemon killed outright loses the entries of its last
 * `flushMs`.
 */
import type { Audit } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ControlChange, RegistryError } from "../TerminalRegistry.js"

/** What the writer needs of the registry. */
export interface Store {
  readonly audit: (changes: ReadonlyArray<ControlChange>) => Effect.Effect<void, RegistryError>
  readonly auditOf: (sessionId: string, limit?: number) => Effect.Effect<ReadonlyArray<ControlChange>, RegistryError>
}

/** How long an entry waits for the others of its moment (ms). */
export const defaultFlushMs = 20

/** Past this many pending entries, recording waits for them to be written. */
export const defaultMaxPending = 4096

/** The audit over `store`, written behind; what is pending is written when the scope closes. */
export const make = (
  store: Store,
  options: { readonly flushMs?: number | undefined; readonly maxPending?: number | undefined } = {}
): Effect.Effect<Audit.Audit["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const flushMs = options.flushMs ?? defaultFlushMs
    const maxPending = options.maxPending ?? defaultMaxPending
    let pending: Array<ControlChange> = []
    // open while entries wait for the writer
    const waiting = yield* Effect.makeLatch(false)
    // batches are written one at a time, in the order they were recorded
    const lock = yield* Effect.makeSemaphore(1)

    // a batch taken is written whole: an interrupted caller (or the writer stopping) does not lose it
    const flush = lock.withPermits(1)(Effect.uninterruptible(Effect.suspend(() => {
      if (pending.length === 0) return Effect.void
      const batch = pending
      pending = []
      return store.audit(batch).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(
            `audit: ${batch.length} entr${batch.length === 1 ? "y" : "ies"} could not be recorded`,
            error.message
          )
        )
      )
    })))

    yield* waiting.await.pipe(
      Effect.zipRight(Effect.sleep(flushMs)),
      // closed before the batch is taken: an entry recorded after it opens the latch again
      Effect.zipRight(waiting.close),
      Effect.zipRight(flush),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() => flush)

    return {
      record: (entry) =>
        Effect.suspend(() => {
          pending.push(entry)
          if (pending.length >= maxPending) return flush
          return pending.length === 1 ? waiting.open : Effect.void
        }),
      of: (sessionId, limit) =>
        flush.pipe(
          Effect.zipRight(store.auditOf(sessionId, limit)),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning("audit: could not be read", error.message),
              [] as ReadonlyArray<Audit.AuditEntry>
            )
          )
        )
    }
  })
