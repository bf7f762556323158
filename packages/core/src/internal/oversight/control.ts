/**
 * A session's control lease (the live view), beside its send slot: who holds the keyboard — the agent by
 * default, or a person since a time — what they typed, the capture of what the terminal showed meanwhile,
 * the note the agent's next result reports, and the agent's pending requests for a person.
 */
import type { Capture } from "@agent-terminal/terminal"
import type * as Deferred from "effect/Deferred"
import { HumanInControl } from "../../Errors.js"
import type { HumanNote } from "../../Session.js"

/** A person's hold of the lease. */
export interface Holding {
  /** Who holds it: the person's credential (a signed-in session), what every later action is checked against. */
  readonly holderId: string
  /** The holder as people and the agent read it: the name they gave and their credential. */
  readonly holder: string
  /** ms since the epoch on the service's clock (what people read, and what durations are measured on). */
  readonly since: number
  /** The last input on the service's clock (the idle timeout counts from it). */
  lastInputAt: number
  linesTyped: number
  bytesTyped: number
  echoOffBytes: number
  /** What the terminal shows from the take on (closed at the hand-back). */
  readonly capture: Capture.Capture
  /** Cancels the idle timer. */
  cancelTimer: () => void
  /** Input not audited yet: it is audited a line (or a change of echo) at a time. */
  pending: { text: string; secret: boolean; bytes: number } | undefined
}

/** A request for a person, waiting for the next hand-back. */
export interface Request {
  readonly taskId: string
  readonly owner: string
  readonly reason: string
  readonly at: number
  readonly done: Deferred.Deferred<HumanNote>
}

/** What the agent's next result reports. */
export interface Note {
  readonly note: HumanNote
  /** What the terminal showed while the person held the control. */
  readonly output: string
}

/** The lease of one session. */
export class ControlLease {
  holding: Holding | undefined = undefined
  note: Note | undefined = undefined
  readonly requests = new Map<string, Request>()

  /** The refusal the agent gets while a person holds the lease (`undefined`: the agent may go on). */
  refusal(sessionId: string): HumanInControl | undefined {
    const holding = this.holding
    return holding === undefined
      ? undefined
      : new HumanInControl({ sessionId, holder: holding.holder, since: new Date(holding.since).toISOString() })
  }

  /** The note for the agent's next result, given once. */
  takeNote(): Note | undefined {
    const note = this.note
    this.note = undefined
    return note
  }
}
