/**
 * Which machines are in the fleet and how much room each has. A machine announces its capacity on its own
 * subject (`agent-terminal.m.<m>.announce`, which only it may publish to: so no machine can speak for another
 * or steer placement) when it starts, every `intervalMs`, when a client asks (`agent-terminal.discover`), and
 * once more as it leaves. A client's directory keeps the live set: a machine is in it from its first
 * announcement until it says it leaves or falls silent for `expireAfterMs`.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { InvalidName, NoMachineAvailable, NotPermitted } from "./FleetErrors.js"
import * as envelope from "./internal/envelope.js"
import { publish, subscribe } from "./internal/subscription.js"
import { Nats } from "./Nats.js"
import * as Placement from "./Placement.js"
import * as Subjects from "./Subjects.js"

const Count = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())

/**
 * What a machine reports: its terminals and the most it takes, the room left, its load (the 1-minute load
 * average per CPU), its free memory, its labels, and the run it is (a restart is a new run).
 *
 * @since 0.3.0
 */
export class Capacity extends Schema.Class<Capacity>("@agent-terminal/fleet/Capacity")({
  machine: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/)),
  run: Schema.String.pipe(Schema.maxLength(64)),
  terminals: Count,
  maxTerminals: Count,
  free: Count,
  load: Count,
  memoryFree: Count,
  labels: Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(32)),
  leaving: Schema.optional(Schema.Boolean)
}) {}

const decodeCapacity = Schema.decodeUnknownEither(Capacity)

/**
 * What the machine's own figures are now (all but its name).
 *
 * @since 0.3.0
 */
export type Figures = Omit<Capacity, "machine" | "leaving">

/**
 * Announce machine `machine` until the scope ends (then once more, as leaving).
 *
 * @since 0.3.0
 */
export const announce = (options: {
  readonly machine: string
  readonly figures: Effect.Effect<Figures>
  readonly intervalMs?: number | undefined
}): Effect.Effect<void, NotPermitted | InvalidName, Nats | Scope.Scope> =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const machine = yield* Subjects.validName("machine", options.machine)
    const subject = Subjects.announce(machine)
    const send = (leaving: boolean) =>
      Effect.map(options.figures, (figures) =>
        publish(nats, subject, envelope.encodeJson({ ...figures, machine, ...(leaving ? { leaving } : {}) })))
    yield* Effect.addFinalizer(() =>
      send(true).pipe(Effect.zipRight(Effect.promise(() =>
        nats.connection.flush().catch(() => undefined)
      )))
    )
    // A client's "announce now": at most one waiting, however many ask.
    const asked = yield* Effect.acquireRelease(Queue.dropping<void>(1), Queue.shutdown)
    yield* subscribe(nats, Subjects.discover, () => asked.unsafeOffer(undefined))
    yield* Queue.take(asked).pipe(Effect.zipRight(send(false)), Effect.forever, Effect.forkScoped)
    yield* send(false).pipe(Effect.repeat(Schedule.spaced(options.intervalMs ?? 250)), Effect.forkScoped)
  })

/**
 * The live machines, as this client sees them.
 *
 * @since 0.3.0
 */
export class Directory extends Context.Tag("@agent-terminal/fleet/Discovery/Directory")<Directory, {
  /** The machines heard from within the expiry, not leaving, by name. */
  readonly machines: Effect.Effect<ReadonlyArray<Capacity>>
  /** The machine for a new terminal: the one named, or with the labels and the most room. */
  readonly place: (request?: Placement.Request) => Effect.Effect<Capacity, NoMachineAvailable>
}>() {}

/**
 * A directory of the fleet's machines, kept from their announcements.
 *
 * @since 0.3.0
 */
export const makeDirectory = (
  options: { readonly expireAfterMs?: number | undefined } = {}
): Effect.Effect<Directory["Type"], NotPermitted, Nats | Scope.Scope> =>
  Effect.gen(function*() {
    const nats = yield* Nats
    // when each machine was last heard, on the fiber's clock (read in the subscription's callback)
    const clock = yield* Effect.clock
    const expireAfterMs = options.expireAfterMs ?? 1_000
    const seen = new Map<string, { readonly capacity: Capacity; readonly at: number }>()
    yield* subscribe(nats, Subjects.announceAll, (message) => {
      const machine = Subjects.announcer(message.subject)
      const body = envelope.json(message.data, 16_384)
      if (machine === undefined || body === undefined) return
      const decoded = decodeCapacity(body)
      // The subject says who speaks; an announcement that names another machine is not believed.
      if (Either.isLeft(decoded) || decoded.right.machine !== machine) return
      if (decoded.right.leaving === true) seen.delete(machine)
      else seen.set(machine, { capacity: decoded.right, at: clock.unsafeCurrentTimeMillis() })
    })
    publish(nats, Subjects.discover, new Uint8Array(0))
    const machines = Effect.sync(() => {
      const now = clock.unsafeCurrentTimeMillis()
      const live: Array<Capacity> = []
      for (const [machine, entry] of seen) {
        if (now - entry.at > expireAfterMs) seen.delete(machine)
        else live.push(entry.capacity)
      }
      return live.sort((a, b) => a.machine < b.machine ? -1 : a.machine > b.machine ? 1 : 0)
    })
    return Directory.of({
      machines,
      place: (request = {}) => Effect.flatMap(machines, (live) => Placement.choose(live, request))
    })
  })

/**
 * The directory as a layer.
 *
 * @since 0.3.0
 */
export const layerDirectory = (
  options: { readonly expireAfterMs?: number | undefined } = {}
): Layer.Layer<Directory, NotPermitted, Nats> => Layer.scoped(Directory, makeDirectory(options))
