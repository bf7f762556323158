/**
 * The send's span. The hot path's span is taken whenever a tracer that exports spans is installed (an
 * OpenTelemetry layer), without a stack trace per call (as `Effect.fn` and a plain `withSpan` take one: it
 * cost more than the rest of the span). Under Effect's built-in tracer, whose spans reach no one, it is
 * skipped: it was a third of a send's Effect operations (docs/performance.md).
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/** Effect's own tracer, in place unless a program installs another: its spans are seen by no exporter. */
const builtInTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

const spanOptions = { captureStackTrace: false } as const

/** `operation` as a span named `name`, when a tracer other than the built-in one would see it. */
export const tracedWhenSeen = <Args extends ReadonlyArray<unknown>, A, E, R>(
  name: string,
  operation: (...args: Args) => Effect.Effect<A, E, R>
) =>
(...args: Args): Effect.Effect<A, E, R> =>
  // the fiber's tracer read directly: `Effect.tracerWith` costs two runtime operations and their closures
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    fiber.currentTracer === builtInTracer
      ? operation(...args)
      : Effect.withSpan(operation(...args), name, spanOptions)
  )
