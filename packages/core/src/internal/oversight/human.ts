/**
 * What a person did while they held the control (`HumanNote`), and an agent's request for one
 * (`HumanRequest`, `HumanRequestResult`); re-exported by `Session`.
 */
import * as Schema from "effect/Schema"
import { Millis } from "../bounds.js"

/**
 * What a person did while they held the session's control lease (the live view), reported once, on the
 * agent's next send after the hand-back (`SendResult.human`): that result's output starts with
 * `humanNoteText` and what the terminal showed meanwhile.
 *
 * @since 0.2.0
 */
export const HumanNote = Schema.Struct({
  /** Who held the control (`person:<name>`). */
  holder: Schema.String,
  heldMs: Schema.Number,
  /** Lines the person typed (Enter presses). */
  linesTyped: Schema.Number,
  bytesTyped: Schema.Number,
  /** Of those, bytes typed while the terminal had echo off (a password): never shown, recorded or audited. */
  echoOffBytes: Schema.Number,
  /** How the lease ended: handed back, timed out without input, or taken away by a close. */
  endedBy: Schema.Literal("hand-back", "idle-timeout", "closed")
})
/** @since 0.2.0 */
export type HumanNote = typeof HumanNote.Type

/**
 * The note the model reads first after a person held the control: `[human: in control for 42 s, 3 lines typed]`.
 *
 * @since 0.2.0
 */
export const humanNoteText = (note: HumanNote): string => {
  const facts = [
    `in control for ${Math.round(note.heldMs / 1000)} s`,
    `${note.linesTyped} line${note.linesTyped === 1 ? "" : "s"} typed`
  ]
  if (note.echoOffBytes > 0) facts.push(`${note.echoOffBytes} bytes with echo off (not shown)`)
  if (note.endedBy === "idle-timeout") facts.push("the lease timed out")
  return `[human: ${facts.join(", ")}]`
}

/**
 * The bound of a request for a person's `reason`, in characters.
 *
 * @since 0.2.0
 */
export const reasonLength = 1024

/**
 * An agent's request for a person (shown in the live view): why, and whether to wait for the hand-back.
 *
 * @since 0.2.0
 */
export const HumanRequest = Schema.Struct({
  reason: Schema.String.pipe(
    Schema.filter((reason) => reason.length >= 1 && reason.length <= reasonLength, {
      message: () => `must be a string of 1 to ${reasonLength} characters`,
      jsonSchema: { minLength: 1, maxLength: reasonLength }
    })
  ),
  /** Block until a person took the control and handed it back, or `timeoutMs` passed. */
  wait: Schema.optional(Schema.Boolean),
  timeoutMs: Schema.optional(Millis)
})
/** @since 0.2.0 */
export type HumanRequest = typeof HumanRequest.Type

/**
 * A request for a person: its task (`task_output` with `wait: true` blocks until the hand-back), whether a
 * person has answered it, and what they did.
 *
 * @since 0.2.0
 */
export const HumanRequestResult = Schema.Struct({
  taskId: Schema.String,
  status: Schema.Literal("pending", "handed-back", "withdrawn"),
  human: Schema.optional(HumanNote)
})
/** @since 0.2.0 */
export type HumanRequestResult = typeof HumanRequestResult.Type
