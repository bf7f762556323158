/**
 * The operations of `Oversight` (the live view's service) declared once, as the terminal service's are: their
 * arguments, successes and errors. The daemon derives from them the RPCs a machine of the fleet serves to the
 * servers that show its terminals to people (on a subject of their own, so only those may call them), and the
 * fleet's client of those RPCs sends each call's arguments by name.
 *
 * Unlike the terminal service's, these operations take no owner: a person sees every owner's sessions. Who
 * may call them is the transport's to decide (NATS permissions on the subject, the HTTP guard).
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { AuditEntry } from "./Audit.js"
import * as Errors from "./Errors.js"
import { HumanNote } from "./internal/oversight/human.js"
import * as Operation from "./Operation.js"
import { ControlState, NotInControl, OverseenSession } from "./Oversight.js"
import * as PtyService from "./PtyService.js"
import { RecordingInfo } from "./Recording.js"
import { ResizeResult } from "./Session.js"

const bounded = (max: number) => Schema.String.pipe(Schema.maxLength(max))
const sessionId = Operation.arg("sessionId", bounded(512))
const person = Operation.arg("person", bounded(256))

/**
 * A recording that is not there (or not anymore).
 *
 * @since 0.4.0
 */
export class RecordingNotFound extends Schema.TaggedError<RecordingNotFound>("@agent-terminal/RecordingNotFound")(
  "RecordingNotFound",
  { name: Schema.String }
) {
  override get message() {
    return `no recording named ${JSON.stringify(this.name.slice(0, 200))}`
  }
}

/**
 * The unary operations of `Oversight`, keyed by its method names (`Oversight<Tag>` on the wire).
 *
 * @since 0.4.0
 * @category operations
 */
export const operations = {
  /** Every open session of every owner. */
  sessions: Operation.make("OversightSessions", { args: [], success: Schema.Array(OverseenSession), checked: false }),
  /** Take a session's control lease as `person` (shown as `name`). */
  take: Operation.make("OversightTake", {
    args: [sessionId, person, Operation.optionalArg("name", bounded(256))],
    success: ControlState,
    errors: [Errors.SessionNotFound, Errors.SessionExited, Errors.HumanInControl],
    checked: false
  }),
  /** The holder's keys. */
  input: Operation.make("OversightInput", {
    args: [sessionId, person, Operation.arg("data", bounded(1 << 20))],
    success: Schema.Void,
    errors: [Errors.SessionNotFound, NotInControl, Errors.SessionExited],
    checked: false
  }),
  /** The holder resizes the terminal. */
  resize: Operation.make("OversightResize", {
    args: [sessionId, person, Operation.arg("cols", Schema.Number), Operation.arg("rows", Schema.Number)],
    success: ResizeResult,
    errors: [Errors.SessionNotFound, NotInControl, Errors.InvalidInput, Errors.SessionExited],
    checked: false
  }),
  /** Give the control back to the agent. */
  handBack: Operation.make("OversightHandBack", {
    args: [sessionId, person],
    success: HumanNote,
    errors: [Errors.SessionNotFound, NotInControl],
    checked: false
  }),
  /** A session's audit, newest `limit`. */
  audit: Operation.make("OversightAudit", {
    args: [sessionId, Operation.optionalArg("limit", Schema.Number)],
    success: Schema.Array(AuditEntry),
    checked: false
  }),
  /** Every recording. */
  recordings: Operation.make("OversightRecordings", {
    args: [],
    success: Schema.Array(RecordingInfo),
    checked: false
  })
} as const

/**
 * The streams of `Oversight`: its changes (one element per change), a watch of any session (the snapshot,
 * then the events, as the terminal service's watch), and a recording's bytes in bounded chunks (a recording
 * can be larger than one message of a transport).
 *
 * @since 0.4.0
 * @category operations
 */
export const streams = {
  changes: Operation.make("OversightChanges", { args: [], success: Schema.Literal(1), checked: false }),
  watch: Operation.make("OversightWatch", {
    args: [sessionId, Operation.optionalArg("options", PtyService.WatchOptionsSchema)],
    success: PtyService.streams.watch.success,
    errors: [Errors.SessionNotFound],
    checked: false
  }),
  recording: Operation.make("OversightRecording", {
    args: [Operation.arg("name", bounded(1024))],
    success: Schema.Uint8ArrayFromSelf,
    errors: [RecordingNotFound],
    checked: false
  })
} as const

/**
 * The size of one chunk of a recording on the wire.
 *
 * @since 0.4.0
 */
export const recordingChunkBytes = 256 * 1024
