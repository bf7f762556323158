/**
 * The fleet's registry: where each terminal lives and how it ended (id → machine, owner, status, end), in a
 * JetStream KV bucket replicated over the NATS servers (`agent-terminal-fleet`, replicas 3). A machine writes
 * only its own keys (`<machine>.<id>`), off the data path: `record` puts the entry in a bounded table of
 * pending writes (the newest entry of an id replaces an older one) and returns; a fiber writes them, and while
 * the KV is unavailable (its leader lost, no quorum) it keeps trying with a backoff, so writes catch up when it
 * is back. Clients only read.
 *
 * @since 0.3.0
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { type KV, Kvm } from "@nats-io/kv"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { type InvalidName, RegistryUnavailable } from "./FleetErrors.js"
import * as envelope from "./internal/envelope.js"
import { Nats } from "./Nats.js"
import * as Subjects from "./Subjects.js"

/**
 * One terminal's record.
 *
 * @since 0.3.0
 */
export class Entry extends Schema.Class<Entry>("@agent-terminal/fleet/RegistryEntry")({
  id: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_~-]{1,128}$/)),
  machine: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/)),
  owner: Schema.String.pipe(Schema.maxLength(256)),
  status: Schema.Literal("open", "exited", "closed", "lost"),
  updatedAt: Schema.Number,
  ended: Schema.optional(Schema.Struct({ reason: Schema.String.pipe(Schema.maxLength(1024)), at: Schema.Number }))
}) {}

const encodeEntry = Schema.encodeSync(Entry)
const decodeEntry = Schema.decodeUnknownEither(Entry)

/**
 * How the writer is doing.
 *
 * @since 0.3.0
 */
export interface WriterStats {
  readonly pending: number
  readonly written: number
  /** Entries pushed out of a full table (the oldest pending id's). */
  readonly dropped: number
  /** Attempts that failed (each retried). */
  readonly failures: number
  readonly lastError: string | undefined
}

/**
 * A machine's writer of its own keys.
 *
 * @since 0.3.0
 */
export class Writer extends Context.Tag("@agent-terminal/fleet/FleetRegistry/Writer")<Writer, {
  /** Record `entry` to be written; returns at once, never fails. */
  readonly record: (entry: Entry) => Effect.Effect<void>
  readonly stats: Effect.Effect<WriterStats>
  /** Wait until nothing is pending (or `timeout` passed): for a clean stop and for tests. */
  readonly flush: (timeout: Duration.DurationInput) => Effect.Effect<boolean>
}>() {}

/**
 * Options of the writer.
 *
 * @since 0.3.0
 */
export interface WriterOptions {
  readonly machine: string
  /** Ids waiting to be written at most (default 10 000); past it the oldest is dropped (and counted). */
  readonly capacity?: number | undefined
  /** One put's deadline (default 2 s). */
  readonly putTimeoutMs?: number | undefined
  /** The longest wait between two tries while the KV is unavailable (default 1 s). */
  readonly maxBackoffMs?: number | undefined
}

const kvOf = (nats: Nats["Type"], timeout: number) =>
  Effect.tryPromise({
    try: () => new Kvm(jetstream(nats.connection, { timeout })).open(Subjects.registryBucket, { allow_direct: true }),
    catch: (error) => new RegistryUnavailable({ reason: String(error) })
  })

/**
 * The writer of machine `options.machine`; on the scope's end it tries for 2 s to write what is pending.
 *
 * @since 0.3.0
 */
export const makeWriter = (options: WriterOptions): Effect.Effect<Writer["Type"], InvalidName, Nats | Scope.Scope> =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const machine = yield* Subjects.validName("machine", options.machine)
    const capacity = options.capacity ?? 10_000
    const putTimeoutMs = options.putTimeoutMs ?? 2_000
    const maxBackoffMs = options.maxBackoffMs ?? 1_000
    const pending = new Map<string, Entry>()
    const stats = { written: 0, dropped: 0, failures: 0, lastError: undefined as string | undefined }
    const wake = yield* Effect.makeLatch(false)
    let kv: KV | undefined

    const putAll = Effect.gen(function*() {
      kv ??= yield* kvOf(nats, putTimeoutMs)
      const store = kv
      const batch = [...pending.entries()]
      yield* Effect.forEach(batch, ([key, entry]) =>
        Effect.tryPromise({
          try: () => store.put(key, envelope.encodeJson(encodeEntry(entry)), { timeout: putTimeoutMs }),
          catch: (error) => new RegistryUnavailable({ reason: String(error) })
        }).pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              if (pending.get(key) === entry) pending.delete(key)
              stats.written++
            })
          )
        ), { concurrency: 16, discard: true })
    })

    // Woken by a record; the latch is closed before the table is read, so a record made meanwhile wakes it again.
    let backoff = 50
    const drain = Effect.gen(function*() {
      while (pending.size > 0) {
        const result = yield* Effect.either(putAll)
        if (Either.isRight(result)) {
          backoff = 50
          continue
        }
        stats.failures++
        stats.lastError = result.left.reason
        yield* Effect.sleep(backoff)
        backoff = Math.min(maxBackoffMs, backoff * 2)
      }
    })
    yield* wake.await.pipe(Effect.zipRight(wake.close), Effect.zipRight(drain), Effect.forever, Effect.forkScoped)

    const flush = (timeout: Duration.DurationInput) =>
      Effect.sync(() => pending.size === 0).pipe(
        Effect.repeat({ until: (done) => done, schedule: Schedule.addDelay(Schedule.identity<boolean>(), () => 20) }),
        Effect.timeoutTo({ duration: timeout, onTimeout: () => false, onSuccess: (done) => done })
      )
    yield* Effect.addFinalizer(() => flush(Duration.seconds(2)))

    return Writer.of({
      record: (entry) =>
        Effect.suspend(() => {
          if (entry.machine !== machine) return Effect.logWarning(`registry: ${entry.id} is not of machine ${machine}`)
          const key = Subjects.registryKey(machine, entry.id)
          pending.delete(key)
          if (pending.size >= capacity) {
            const oldest = pending.keys().next().value
            if (oldest !== undefined) pending.delete(oldest)
            stats.dropped++
          }
          pending.set(key, entry)
          return wake.open
        }),
      stats: Effect.sync(() => ({ ...stats, pending: pending.size })),
      flush
    })
  })

/**
 * The writer as a layer.
 *
 * @since 0.3.0
 */
export const layerWriter = (options: WriterOptions): Layer.Layer<Writer, InvalidName, Nats> =>
  Layer.scoped(Writer, makeWriter(options))

/**
 * Read the registry (any user the configuration lets read it).
 *
 * @since 0.3.0
 */
export const makeReader = (options: { readonly timeoutMs?: number | undefined } = {}) =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const timeout = options.timeoutMs ?? 2_000
    const kv = yield* kvOf(nats, timeout)
    const unavailable = (error: unknown) => new RegistryUnavailable({ reason: String(error) })
    const get = (machine: string, id: string): Effect.Effect<Option.Option<Entry>, RegistryUnavailable> =>
      Effect.tryPromise({ try: () => kv.get(Subjects.registryKey(machine, id)), catch: unavailable }).pipe(
        Effect.map((found) => {
          if (found === null || found.operation !== "PUT") return Option.none()
          const decoded = decodeEntry(envelope.json(found.value, 65_536))
          return Either.isRight(decoded) ? Option.some(decoded.right) : Option.none()
        })
      )
    const keys = (machine?: string): Effect.Effect<ReadonlyArray<string>, RegistryUnavailable> =>
      Effect.tryPromise({
        try: async () => {
          const out: Array<string> = []
          for await (const key of await kv.keys(machine === undefined ? ">" : `${machine}.>`)) out.push(key)
          return out
        },
        catch: unavailable
      })
    return { get, keys }
  })

/**
 * Make the registry's bucket (the operator's user: machines and clients may not): replicated on `replicas`
 * servers, one value per key.
 *
 * @since 0.3.0
 */
export const createBucket = (
  options: { readonly replicas?: number | undefined } = {}
): Effect.Effect<void, RegistryUnavailable, Nats> =>
  Effect.gen(function*() {
    const nats = yield* Nats
    yield* Effect.tryPromise({
      try: async () => {
        const js = jetstream(nats.connection, { timeout: 10_000 })
        await jetstreamManager(nats.connection, { timeout: 10_000 })
        await new Kvm(js).create(Subjects.registryBucket, { replicas: options.replicas ?? 3, history: 1 })
      },
      catch: (error) => new RegistryUnavailable({ reason: String(error) })
    })
  })
