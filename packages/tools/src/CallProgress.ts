/**
 * What a tool call that reports progress waits on: a transport that sends progress notifications provides
 * `CallProgress` around the call, and the handlers tell it which terminal's new lines to count
 * (`@agent-terminal/server`'s MCP transports do).
 *
 * @since 0.4.0
 */
import * as internal from "./internal/progress.js"

/**
 * The terminal a call waits on, told by its handler.
 *
 * @since 0.4.0
 * @category tags
 */
export const CallProgress = internal.CallProgress

/**
 * The terminal a call waits on, told by its handler.
 *
 * @since 0.4.0
 * @category tags
 */
export type CallProgress = internal.CallProgress

/**
 * The default interval of progress notifications (5 s).
 *
 * @since 0.4.0
 * @category constants
 */
export const defaultIntervalMs: number = internal.defaultIntervalMs

/**
 * Tell the call's progress (if it reports any) which terminal it waits on.
 *
 * @since 0.4.0
 * @category combinators
 */
export const waitsOn = internal.waitsOn
