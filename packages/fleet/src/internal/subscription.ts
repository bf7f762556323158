/** A NATS subscription as a scoped resource that fails when the user's permissions refuse the subject. */
import type { Msg, Subscription } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { NotPermitted } from "../FleetErrors.js"
import type * as Nats from "../Nats.js"

/**
 * Subscribe `onMessage` to `subject` until the scope ends. A refusal comes back before the flush's answer, so
 * the subscription is known to stand (or not) when this returns.
 */
export const subscribe = (
  nats: Nats.Service,
  subject: string,
  onMessage: (message: Msg) => void
): Effect.Effect<Subscription, NotPermitted, Scope.Scope> =>
  Effect.gen(function*() {
    let refused: Error | undefined
    const subscription = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nats.connection.subscribe(subject, {
          callback: (error, message) => {
            if (error !== null) {
              refused = error
              return
            }
            onMessage(message)
          }
        })
      ),
      (subscription) => Effect.sync(() => subscription.isClosed() ? undefined : subscription.unsubscribe())
    )
    yield* Effect.promise(() => nats.connection.flush().catch(() => undefined))
    if (refused !== undefined) {
      return yield* new NotPermitted({ user: nats.user, subject, reason: refused.message })
    }
    return subscription
  })

/** Publish, ignoring a connection that is closing (the caller learns of it from the connection's events). */
export const publish = (nats: Nats.Service, subject: string, data: Uint8Array, reply?: string): void => {
  try {
    nats.connection.publish(subject, data, reply === undefined ? undefined : { reply })
  } catch {
    // closed or draining
  }
}

/** Whether `message` is NATS's "no responders" answer (status 503) to a request. */
export const isNoResponders = (message: Msg): boolean => message.headers?.code === 503
