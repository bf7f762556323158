/**
 * People in the loop (docs/live-view.md): what the live view uses to see every session of every owner, watch
 * any of them, take its keyboard (the control lease), type, resize, and hand it back. Provided by the same
 * layer as `PtyService`, over the same sessions: while a person holds a session's lease the agent's sends,
 * keys and signals fail with `HumanInControl`, and the agent's next send after the hand-back starts with a
 * note of what happened and what the terminal showed meanwhile. What a person types while the terminal has
 * echo off (a password or PIN prompt; the shell's own line editor excepted) is never audited or recorded: only
 * its length.
 *
 * No tool reaches this Tag: it is for the process that owns the terminals (the daemon, `mcp --http`) to
 * serve to people, behind the HTTP guard.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { AuditEntry } from "./Audit.js"
import type { HumanInControl, InvalidInput, SessionExited, SessionNotFound } from "./Errors.js"
import type { RecordingInfo } from "./Recording.js"
import type { HumanNote, ResizeResult } from "./Session.js"
import { SessionStatus, SessionType } from "./Session.js"
import type { Watch, WatchOptions } from "./Watch.js"

/**
 * Who holds a session's control lease, since when, and when it ends without more input.
 *
 * @since 0.2.0
 */
export const ControlState = Schema.Struct({
  /** The holder as people read it: the name they gave and their credential (`ops (web-3f2a9c1b0d4e)`). */
  holder: Schema.String,
  /** The holder's credential: the person, whatever name they give. */
  holderId: Schema.String,
  /** ms since the epoch */
  since: Schema.Number,
  lastInputAt: Schema.Number,
  /** The lease ends by itself after this long without the holder's input. */
  idleMs: Schema.Number,
  linesTyped: Schema.Number
})
/** @since 0.2.0 */
export type ControlState = typeof ControlState.Type

/**
 * An agent's request for a person (`terminal_request_human`), waiting for a hand-back.
 *
 * @since 0.2.0
 */
export const PendingRequest = Schema.Struct({
  taskId: Schema.String,
  owner: Schema.String,
  reason: Schema.String,
  at: Schema.Number
})
/** @since 0.2.0 */
export type PendingRequest = typeof PendingRequest.Type

/**
 * A session as a person sees it in the list.
 *
 * @since 0.2.0
 */
export const OverseenSession = Schema.Struct({
  sessionId: Schema.String,
  /** The machine of the fleet the session lives on (absent when one process owns every session shown). */
  machine: Schema.optional(Schema.String),
  owner: Schema.String,
  name: Schema.String,
  type: SessionType,
  pid: Schema.Number,
  status: SessionStatus,
  cwd: Schema.optional(Schema.String),
  shell: Schema.optional(Schema.String),
  cols: Schema.Number,
  rows: Schema.Number,
  /** A send (foreground or background) is running. */
  busy: Schema.Boolean,
  /** The foreground program is blocked reading the terminal (a prompt, a REPL). */
  waitingForInput: Schema.Boolean,
  /** What runs in the terminal's foreground now. */
  foreground: Schema.optional(Schema.Struct({ pgid: Schema.Number, command: Schema.String })),
  control: Schema.optional(ControlState),
  requests: Schema.Array(PendingRequest),
  recording: Schema.optional(Schema.Struct({
    name: Schema.String,
    bytes: Schema.Number,
    stopped: Schema.optional(Schema.String)
  }))
})
/** @since 0.2.0 */
export type OverseenSession = typeof OverseenSession.Type

/**
 * A person acted on a session whose control lease they do not hold.
 *
 * @since 0.2.0
 */
export class NotInControl extends Schema.TaggedError<NotInControl>("@agent-terminal/NotInControl")(
  "NotInControl",
  { sessionId: Schema.String, person: Schema.String }
) {
  override get message() {
    return `${this.person} does not hold the control of session ${this.sessionId}: take control first`
  }
}

/**
 * A person's display name from the name they give (`person:<name>`): at most 64 characters of letters,
 * digits and `._@-`; anything else becomes `-`. Only a label: the person is their credential.
 *
 * @since 0.2.0
 */
export const personId = (name: string): string => {
  const cleaned = name.trim().slice(0, 64).replace(/[^A-Za-z0-9._@-]/g, "-")
  return `person:${cleaned === "" ? "person" : cleaned}`
}

/**
 * How a holder is shown: the name they gave and, when it is not the same, their credential.
 *
 * @since 0.3.0
 */
export const holderText = (person: string, name?: string | undefined): string =>
  name === undefined || name === person ? person : `${name} (${person})`

/**
 * @since 0.2.0
 */
export class Oversight extends Context.Tag("@agent-terminal/core/Oversight")<
  Oversight,
  {
    /** Every open session of every owner. */
    readonly sessions: Effect.Effect<ReadonlyArray<OverseenSession>>
    /** Emits when a session opens or closes, a lease changes hands, or a request comes or goes. */
    readonly changes: Stream.Stream<void>
    /** Watch any session (the live view's stream). */
    readonly watch: (
      sessionId: string,
      options?: WatchOptions
    ) => Effect.Effect<Watch, SessionNotFound, Scope.Scope>
    /**
     * Take the session's control lease: the agent's input is refused until the hand-back. `person` is who
     * takes it — their credential, which every later action is checked against — and `name` only how they
     * are shown. Taking the lease one holds already renews it; another person's lease is `HumanInControl`.
     */
    readonly take: (
      sessionId: string,
      person: string,
      name?: string
    ) => Effect.Effect<ControlState, SessionNotFound | SessionExited | HumanInControl>
    /** The holder's keys, as a terminal sends them (the bytes go to the pty unchanged). */
    readonly input: (
      sessionId: string,
      person: string,
      data: string
    ) => Effect.Effect<void, SessionNotFound | NotInControl | SessionExited>
    /** The holder resizes the terminal (to their window). */
    readonly resize: (
      sessionId: string,
      person: string,
      cols: number,
      rows: number
    ) => Effect.Effect<ResizeResult, SessionNotFound | NotInControl | InvalidInput | SessionExited>
    /** Give the control back to the agent: what happened, as the agent's next send will report it. */
    readonly handBack: (
      sessionId: string,
      person: string
    ) => Effect.Effect<HumanNote, SessionNotFound | NotInControl>
    /** A session's audit (agent sends, a person's input redacted, control changes), newest `limit`. */
    readonly audit: (sessionId: string, limit?: number) => Effect.Effect<ReadonlyArray<AuditEntry>>
    readonly recordings: Effect.Effect<ReadonlyArray<RecordingInfo>>
    readonly recording: (name: string) => Effect.Effect<Option.Option<Uint8Array>>
  }
>() {}
