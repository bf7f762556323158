/**
 * Where a new session should go, when the terminals live on many machines (a fleet): a machine by name, or
 * labels every chosen machine must have. Set around an `open` (`placedOn`), read by a terminal service that
 * places sessions; any other service ignores it.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"

/**
 * A machine's name or a label: one token of letters, digits, `_` and `-`.
 *
 * @since 0.3.0
 */
export const Token = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/),
  Schema.annotations({ message: () => "must be 1 to 64 letters, digits, _ or -" })
)

/**
 * What the caller asks for.
 *
 * @since 0.3.0
 */
export const Request = Schema.Struct({
  machine: Schema.optional(Token),
  labels: Schema.optional(Schema.Array(Token).pipe(Schema.maxItems(16)))
})
/** @since 0.3.0 */
export type Request = typeof Request.Type

/**
 * The placement asked for by the effect running now (none: anywhere).
 *
 * @since 0.3.0
 */
export const current: FiberRef.FiberRef<Request> = FiberRef.unsafeMake<Request>({})

/**
 * Run `effect` with its `open`s placed as `request` asks.
 *
 * @since 0.3.0
 */
export const placedOn = (request: Request) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, current, request)
