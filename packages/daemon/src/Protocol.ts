/**
 * The daemon's wire protocol: the operations of `PtyService`, `TaskRuntime` and `Exec` as one `@effect/rpc`
 * `RpcGroup`, with the session Schemas as payloads and successes and the typed errors as failures, a
 * handshake (`Hello`) that carries the protocol version and binds the connection to its owner, and streams
 * for watching a terminal and for task completions. docs/protocol.md describes every RPC.
 *
 * @since 0.2.0
 */
import { Errors, Exec, Ids, Sandbox, Session, TaskRuntime, Watch } from "@agent-terminal/core"
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as Schema from "effect/Schema"

/**
 * The protocol's version: a client and a daemon talk only when theirs are equal.
 *
 * @since 0.2.0
 */
export const PROTOCOL_VERSION = 2

/**
 * The client and the daemon speak different protocol versions: nothing runs until both are the same version.
 *
 * @since 0.2.0
 */
export class ProtocolMismatch extends Schema.TaggedError<ProtocolMismatch>("@agent-terminal/ProtocolMismatch")(
  "ProtocolMismatch",
  { client: Schema.Number, daemon: Schema.Number }
) {
  override get message() {
    return `protocol mismatch: this client speaks agent-terminal protocol ${this.client}, the daemon speaks ` +
      `${this.daemon}; run a client and a daemon of the same version (restart the daemon after an upgrade)`
  }
}

/**
 * The owner's credential was refused: a known owner name with another secret (or none).
 *
 * @since 0.2.0
 */
export class OwnerRejected extends Schema.TaggedError<OwnerRejected>("@agent-terminal/OwnerRejected")(
  "OwnerRejected",
  { owner: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `owner ${JSON.stringify(this.owner)} refused: ${this.reason}`
  }
}

/**
 * A request on a connection that has not completed the handshake.
 *
 * @since 0.2.0
 */
export class HandshakeRequired extends Schema.TaggedError<HandshakeRequired>("@agent-terminal/HandshakeRequired")(
  "HandshakeRequired",
  {}
) {
  override get message() {
    return "this connection has not said Hello: every request needs the handshake first (protocol version, owner)"
  }
}

/**
 * No daemon answers (not running, or its socket is not reachable from here), or the connection to it broke.
 *
 * @since 0.2.0
 */
export class DaemonUnavailable extends Schema.TaggedError<DaemonUnavailable>("@agent-terminal/DaemonUnavailable")(
  "DaemonUnavailable",
  { socket: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `no agent-terminal daemon answers at ${this.socket}: ${this.reason} (start one with agent-terminal serve)`
  }
}

/**
 * The owner a client asks to be: a name and its secret. Without a secret, a name the daemon does not know
 * yet gets one issued (returned once, in `HelloResult.issuedSecret`).
 *
 * @since 0.2.0
 */
export const OwnerCredential = Schema.Struct({
  name: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/)),
  secret: Schema.optional(Schema.String.pipe(Schema.minLength(16), Schema.maxLength(1024)))
})
/** @since 0.2.0 */
export type OwnerCredential = typeof OwnerCredential.Type

/**
 * What the daemon answers to `Hello`.
 *
 * @since 0.2.0
 */
export const HelloResult = Schema.Struct({
  protocolVersion: Schema.Number,
  daemonPid: Schema.Number,
  /** The owner this connection acts as (`owner:<name>` for a named owner, `anonymous:<id>` otherwise). */
  owner: Schema.String,
  /** The secret issued for a new named owner that came without one: keep it, it is never shown again. */
  issuedSecret: Schema.optional(Schema.String),
  /** The shell one-shot runs use (`Exec.shell`). */
  shell: Schema.String
})
/** @since 0.2.0 */
export type HelloResult = typeof HelloResult.Type

/**
 * What `PtyService.cancel` did.
 *
 * @since 0.2.0
 */
export const CancelResult = Schema.Struct({
  cancelled: Schema.Boolean,
  written: Schema.Boolean,
  discarded: Schema.Number,
  signalled: Schema.Array(Schema.Number),
  taskId: Schema.optionalWith(Schema.String, { exact: true })
})

/**
 * A look at a task (`TaskRuntime.TaskView`).
 *
 * @since 0.2.0
 */
export const TaskView = Schema.Struct({
  taskId: Ids.TaskId,
  kind: Schema.String,
  label: Schema.String,
  sessionId: Schema.optional(Schema.String),
  status: TaskRuntime.TaskStatus,
  output: Schema.String,
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Struct({ _tag: Schema.String, message: Schema.String })),
  match: Schema.optional(Session.Match),
  elapsedMs: Schema.Number
})

/**
 * A task's end (`TaskRuntime.TaskEvent`), for the owner's completions stream.
 *
 * @since 0.2.0
 */
export const TaskEvent = Schema.Struct({ owner: Ids.OwnerId, taskId: Ids.TaskId, status: TaskRuntime.TaskStatus })

/**
 * What a watch streams: the snapshot first, then the events.
 *
 * @since 0.2.0
 */
export const WatchItem = Schema.Union(Watch.Snapshot, Watch.WatchEvent)
/** @since 0.2.0 */
export type WatchItem = typeof WatchItem.Type

const session = { sessionId: Schema.String }
const task = { taskId: Schema.String }
const waitOptions = { wait: Schema.optional(Schema.Boolean), timeoutMs: Schema.optional(Schema.Number) }

const lookup = [Errors.SessionNotFound, Errors.ForeignSession, Errors.SessionLost] as const
const anyTerminalError = [Errors.TerminalError] as const

/** A request/response RPC: its failures are the operation's own errors, and `HandshakeRequired`. */
const request = <
  const Tag extends string,
  P extends Schema.Struct.Fields,
  S extends Schema.Schema.Any,
  const E extends ReadonlyArray<Schema.Schema.Any> = readonly []
>(tag: Tag, payload: P, success: S, errors?: E) =>
  Rpc.make(tag, { payload, success, error: Schema.Union(HandshakeRequired, ...(errors ?? ([] as unknown as E))) })

/**
 * Every operation of the protocol.
 *
 * @since 0.2.0
 */
export class DaemonRpcs extends RpcGroup.make(
  Rpc.make("Hello", {
    payload: {
      protocolVersion: Schema.Number,
      owner: Schema.optional(OwnerCredential),
      client: Schema.optional(Schema.String)
    },
    success: HelloResult,
    error: Schema.Union(ProtocolMismatch, OwnerRejected)
  }),
  request("Open", { request: Session.OpenRequest }, Session.OpenResult, [
    Errors.SpawnFailed,
    Errors.SandboxUnavailable,
    Errors.InvalidInput,
    Errors.DuplicateName,
    Errors.LimitReached
  ]),
  request("Send", { ...session, request: Session.SendRequest }, Session.SendResult, [
    ...lookup,
    Errors.SendActive,
    Errors.SessionExited,
    Errors.InvalidInput,
    Errors.LimitReached,
    Errors.HumanInControl,
    Errors.SignalRefused
  ]),
  request("Read", { ...session, request: Session.ReadRequest }, Session.ReadResult, [...lookup, Errors.InvalidInput]),
  request("Signal", { ...session, signal: Session.SignalName }, Session.SignalResult, [
    ...lookup,
    Errors.SignalRefused,
    Errors.SessionExited,
    Errors.InvalidInput,
    Errors.HumanInControl
  ]),
  request("Resize", { ...session, request: Session.ResizeRequest }, Session.ResizeResult, [
    ...lookup,
    Errors.SessionExited,
    Errors.InvalidInput,
    Errors.HumanInControl
  ]),
  request("RequestHuman", { ...session, request: Session.HumanRequest }, Session.HumanRequestResult, [
    ...lookup,
    Errors.SessionExited,
    Errors.InvalidInput,
    Errors.LimitReached
  ]),
  request("Cancel", session, CancelResult, lookup),
  request("Close", session, Session.CloseResult, [...lookup, Errors.CleanupFailed]),
  request("List", {}, Schema.Array(Session.SessionInfo)),
  request("CloseOwner", {}, Schema.Void),
  request("ConfigureSandbox", { policy: Sandbox.Policy }, Schema.Void, [Sandbox.SandboxInUse, Errors.InvalidConfig]),
  request("SandboxOf", {}, Sandbox.Policy),
  Rpc.make("Watch", {
    // bounded (a watcher's backlog is memory of the daemon's): 1 byte to 1 GiB
    payload: { ...session, maxBufferedBytes: Schema.optional(Session.integerBetween(1, 1 << 30, " of bytes")) },
    success: WatchItem,
    error: Schema.Union(HandshakeRequired, ...lookup),
    stream: true
  }),
  request("TaskOutput", { ...task, ...waitOptions, waitFor: Schema.optional(Session.WaitFor) }, TaskView, [
    Errors.TaskNotFound
  ]),
  request("TaskKill", task, TaskView, [Errors.TaskNotFound]),
  request("TaskWrite", { ...task, input: TaskRuntime.TaskInput }, Schema.Void, anyTerminalError),
  request("TaskList", {}, Schema.Array(TaskView)),
  request("TaskRemove", task, Schema.Void, [Errors.TaskNotFound]),
  request("TaskRemoveOwner", {}, Schema.Void),
  Rpc.make("TaskCompletions", { success: TaskEvent, error: HandshakeRequired, stream: true }),
  request("ExecRun", { request: Exec.ExecRequest }, Exec.ExecResult, [
    Errors.SpawnFailed,
    Errors.SandboxUnavailable,
    Errors.InvalidInput,
    Errors.LimitReached
  ]),
  request("ExecPoll", { ...task, ...waitOptions }, Exec.ExecResult, [Errors.TaskNotFound, Errors.InvalidInput]),
  request(
    "ExecLog",
    { ...task, offset: Schema.optional(Schema.Number), count: Schema.optional(Schema.Number) },
    Exec.LogResult,
    [Errors.TaskNotFound, Errors.InvalidInput]
  ),
  request("ExecWrite", { ...task, input: Exec.ExecInput }, Exec.WriteResult, anyTerminalError),
  request("ExecKill", task, Exec.ExecResult, [Errors.TaskNotFound]),
  request("ExecRemove", task, Exec.RemoveResult, [Errors.TaskNotFound]),
  request("ExecList", {}, Schema.Array(Exec.TaskSummary))
) {}
