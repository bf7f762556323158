import * as Effect from "effect/Effect"

/**
 * Writes one record of the terminal registry (an owner seen, a terminal opened or ended, a task started or
 * ended). A failed write is logged and the daemon's work goes on without the record.
 */
export const writeRegistryRecord = <A, E>(write: Effect.Effect<A, E>): Effect.Effect<void> =>
  write.pipe(
    Effect.asVoid,
    Effect.catchAll((error) => Effect.logWarning("registry: a record could not be written", error))
  )
