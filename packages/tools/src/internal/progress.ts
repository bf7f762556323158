/**
 * What a tool call that reports progress waits on. A transport that sends progress notifications (a long
 * send, `task_output` or `process poll` with `wait`, `steps`, a foreground `exec`, `terminal_request_human`)
 * provides `CallProgress` around the call; the handlers tell it which terminal's new lines to count. Without
 * a transport that reports progress, telling it does nothing.
 */
import type { Ids } from "@agent-terminal/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * What a call that reports progress is waiting on, told by its handler: the terminal whose new lines the
 * progress messages count.
 */
export class CallProgress extends Context.Tag("@agent-terminal/tools/CallProgress")<CallProgress, {
  readonly waitsOn: (sessionId: Ids.SessionId) => Effect.Effect<void>
}>() {}

/** The default interval of progress notifications. */
export const defaultIntervalMs = 5000

/** Tell the call's progress (if it reports any) which terminal it waits on. */
export const waitsOn = (sessionId: Ids.SessionId): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.serviceOption(CallProgress),
    Option.match({ onNone: () => Effect.void, onSome: (progress) => progress.waitsOn(sessionId) })
  )
