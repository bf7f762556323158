/**
 * The errors that cross the service and tool boundary. Each carries the facts as fields and renders a
 * human `message` from them; over MCP a failure is `isError: true` with the `_tag` and that message.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * No session with this id exists (never did, or it was closed and forgotten).
 *
 * @since 0.1.0
 */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>("@agent-terminal/SessionNotFound")(
  "SessionNotFound",
  { sessionId: Schema.String }
) {
  override get message() {
    return `no session ${this.sessionId}: it does not exist or was closed`
  }
}

/**
 * The session belongs to another owner.
 *
 * @since 0.1.0
 */
export class ForeignSession extends Schema.TaggedError<ForeignSession>("@agent-terminal/ForeignSession")(
  "ForeignSession",
  { sessionId: Schema.String }
) {
  override get message() {
    return `session ${this.sessionId} belongs to another owner: a terminal belongs to the owner that opened it — ` +
      "a stdio connection, an HTTP MCP session, or the owner it named (the Agent-Terminal-Owner header with " +
      "the bearer token over HTTP, --owner with the daemon); connect as that owner to use it"
  }
}

/**
 * A send is already in progress on the session; one send at a time.
 *
 * @since 0.1.0
 */
export class SendActive extends Schema.TaggedError<SendActive>("@agent-terminal/SendActive")(
  "SendActive",
  { sessionId: Schema.String, taskId: Schema.optional(Schema.String) }
) {
  override get message() {
    return `session ${this.sessionId} is busy with another send${
      this.taskId === undefined ? "" : ` (background task ${this.taskId})`
    }: wait for it, or interrupt it (SIGINT)`
  }
}

/**
 * The session's program has exited; it takes no more input.
 *
 * @since 0.1.0
 */
export class SessionExited extends Schema.TaggedError<SessionExited>("@agent-terminal/SessionExited")(
  "SessionExited",
  {
    sessionId: Schema.String,
    exitCode: Schema.NullOr(Schema.Number),
    signal: Schema.NullOr(Schema.String)
  }
) {
  override get message() {
    const how = this.signal !== null ? `killed by ${this.signal}` : `exit code ${this.exitCode ?? "unknown"}`
    return `session ${this.sessionId} has exited (${how}); its output is still readable, open a new session to go on`
  }
}

/**
 * The owner already has an open session with this name.
 *
 * @since 0.1.0
 */
export class DuplicateName extends Schema.TaggedError<DuplicateName>("@agent-terminal/DuplicateName")(
  "DuplicateName",
  { name: Schema.String, sessionId: Schema.String }
) {
  override get message() {
    return `a session named ${JSON.stringify(this.name)} is already open (${this.sessionId})`
  }
}

/**
 * A parameter is missing, malformed or out of range.
 *
 * @since 0.1.0
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>("@agent-terminal/InvalidInput")(
  "InvalidInput",
  { field: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `invalid ${this.field}: ${this.reason}`
  }
}

/**
 * The configuration is invalid; `field` names the offending setting.
 *
 * @since 0.1.0
 */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>("@agent-terminal/InvalidConfig")(
  "InvalidConfig",
  { field: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `invalid configuration ${this.field}: ${this.reason}`
  }
}

/**
 * The signal was refused (e.g. SIGKILL aimed at the shell itself) or has no valid target.
 *
 * @since 0.1.0
 */
export class SignalRefused extends Schema.TaggedError<SignalRefused>("@agent-terminal/SignalRefused")(
  "SignalRefused",
  { sessionId: Schema.String, signal: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `${this.signal} not sent to session ${this.sessionId}: ${this.reason}`
  }
}

/**
 * The session's program could not be started, or did not become ready.
 *
 * @since 0.1.0
 */
export class SpawnFailed extends Schema.TaggedError<SpawnFailed>("@agent-terminal/SpawnFailed")(
  "SpawnFailed",
  { command: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `could not start ${this.command}: ${this.reason}`
  }
}

/**
 * A confined session was asked for but the sandbox cannot be applied here; nothing was started.
 *
 * @since 0.1.0
 */
export class SandboxUnavailable extends Schema.TaggedError<SandboxUnavailable>(
  "@agent-terminal/SandboxUnavailable"
)("SandboxUnavailable", { mode: Schema.String, reason: Schema.String }) {
  override get message() {
    return `sandbox ${this.mode} unavailable: ${this.reason}`
  }
}

/**
 * Close could not end every process of the session; the survivors are listed and close can be retried.
 *
 * @since 0.1.0
 */
export class CleanupFailed extends Schema.TaggedError<CleanupFailed>("@agent-terminal/CleanupFailed")(
  "CleanupFailed",
  { sessionId: Schema.String, survivors: Schema.Array(Schema.Number) }
) {
  override get message() {
    return `session ${this.sessionId} closed with ${this.survivors.length} surviving process(es): ${
      this.survivors.join(", ")
    }; the close can be retried`
  }
}

/**
 * No task with this id is visible to this owner.
 *
 * @since 0.1.0
 */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>("@agent-terminal/TaskNotFound")(
  "TaskNotFound",
  { taskId: Schema.String }
) {
  override get message() {
    return `no task ${this.taskId}`
  }
}

/**
 * A cap was reached: `limit` names what is capped (`terminals`: open sessions; `tasks`: live background
 * tasks; `file descriptors`: what the server process may still open), `max` is the cap, and `scope` whose cap
 * it is — the owner's own (the default), or the server's, shared by every owner. Nothing was started; close
 * or end something first.
 *
 * @since 0.2.0
 */
export class LimitReached extends Schema.TaggedError<LimitReached>("@agent-terminal/LimitReached")(
  "LimitReached",
  { limit: Schema.String, max: Schema.Number, scope: Schema.optional(Schema.Literal("owner", "server")) }
) {
  override get message() {
    const what = this.limit === "terminals"
      ? "open terminals (close one first)"
      : this.limit === "tasks"
      ? "live background tasks (wait for one, or end one first)"
      : this.limit
    return this.scope === "server"
      ? `limit reached: this server holds at most ${this.max} ${what}, all owners together; ` +
        "its operator sets the cap (--max-terminals, --max-tasks)"
      : `limit reached: at most ${this.max} ${what} per owner`
  }
}

/**
 * The session existed in a daemon that has since stopped or died: a terminal does not survive the process
 * that holds its pty, so it is gone for good (unlike `SessionNotFound`: no such session, ever).
 *
 * @since 0.2.0
 */
export class SessionLost extends Schema.TaggedError<SessionLost>("@agent-terminal/SessionLost")(
  "SessionLost",
  {
    sessionId: Schema.String,
    /** When it was lost (ISO 8601): when the daemon stopped, or when it was last seen alive before it died. */
    lostAt: Schema.String,
    reason: Schema.Literal("daemon-stopped", "daemon-died")
  }
) {
  override get message() {
    const how = this.reason === "daemon-stopped" ? "the daemon that held it stopped" : "the daemon that held it died"
    return `session ${this.sessionId} was lost at ${this.lostAt}: ${how} (a terminal does not outlive its daemon); ` +
      "open a new session"
  }
}

/**
 * A person holds the session's control lease (the live view): the agent's input and signals are refused until
 * they hand it back (or the lease times out); `terminal_read` and `terminal_list` still work. The next send
 * after the hand-back says what happened meanwhile.
 *
 * @since 0.2.0
 */
export class HumanInControl extends Schema.TaggedError<HumanInControl>("@agent-terminal/HumanInControl")(
  "HumanInControl",
  {
    sessionId: Schema.String,
    /** Who holds the control (`person:<name>`). */
    holder: Schema.String,
    /** Since when (ISO 8601). */
    since: Schema.String
  }
) {
  override get message() {
    return `a person (${this.holder}) has controlled session ${this.sessionId} since ${this.since}: input and ` +
      "signals are refused until they hand it back; the session can still be read meanwhile"
  }
}

/**
 * Every error a terminal operation can fail with.
 *
 * @since 0.1.0
 */
export type TerminalError =
  | SessionNotFound
  | ForeignSession
  | SendActive
  | SessionExited
  | DuplicateName
  | InvalidInput
  | InvalidConfig
  | SignalRefused
  | SpawnFailed
  | SandboxUnavailable
  | CleanupFailed
  | TaskNotFound
  | LimitReached
  | SessionLost
  | HumanInControl

/**
 * The schema of every terminal error, for decoding them on the other side of a wire.
 *
 * @since 0.1.0
 */
export const TerminalError = Schema.Union(
  SessionNotFound,
  ForeignSession,
  SendActive,
  SessionExited,
  DuplicateName,
  InvalidInput,
  InvalidConfig,
  SignalRefused,
  SpawnFailed,
  SandboxUnavailable,
  CleanupFailed,
  TaskNotFound,
  LimitReached,
  SessionLost,
  HumanInControl
)
