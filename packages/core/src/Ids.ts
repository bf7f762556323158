/**
 * Opaque identifiers. Branded so a session id can never be passed where an owner id is expected.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A session's id: opaque, unguessable, minted by the service.
 *
 * @since 0.1.0
 */
export const SessionId = Schema.String.pipe(Schema.brand("@agent-terminal/SessionId"))
/** @since 0.1.0 */
export type SessionId = typeof SessionId.Type

/**
 * The agent or connection that owns sessions; every operation is checked against it.
 *
 * @since 0.1.0
 */
export const OwnerId = Schema.String.pipe(Schema.brand("@agent-terminal/OwnerId"))
/** @since 0.1.0 */
export type OwnerId = typeof OwnerId.Type

/**
 * A background task's id (a background send or a one-shot run).
 *
 * @since 0.1.0
 */
export const TaskId = Schema.String.pipe(Schema.brand("@agent-terminal/TaskId"))
/** @since 0.1.0 */
export type TaskId = typeof TaskId.Type
