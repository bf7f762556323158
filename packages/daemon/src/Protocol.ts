/**
 * The daemon's wire protocol: the operations of `PtyService`, `TaskRuntime` and `Exec` as one `@effect/rpc`
 * `RpcGroup`, with the session Schemas as payloads and successes and the typed errors as failures, a
 * handshake (`Hello`) that carries the protocol version and binds the connection to its owner, and streams
 * for watching a terminal and for task completions. docs/protocol.md describes every RPC.
 *
 * @since 0.2.0
 */
import { Exec, Operation, PtyService, TaskRuntime } from "@agent-terminal/core"
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as Schema from "effect/Schema"

/**
 * The protocol's version: a client and a daemon talk only when theirs are equal.
 *
 * @since 0.2.0
 */
export const PROTOCOL_VERSION = 3

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
 * A call for an owner other than the one its connection is bound to: a connection acts as one owner only.
 *
 * @since 0.4.0
 */
export class OwnerMismatch extends Schema.TaggedError<OwnerMismatch>("@agent-terminal/OwnerMismatch")(
  "OwnerMismatch",
  { connection: Schema.String, call: Schema.String }
) {
  override get message() {
    return `this connection acts as owner ${JSON.stringify(this.connection)}, and a call came for owner ` +
      `${JSON.stringify(this.call)}: connect as that owner to act as it`
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
 * What a watch streams: the snapshot first, then the events.
 *
 * @since 0.2.0
 */
export const WatchItem = PtyService.streams.watch.success
/** @since 0.2.0 */
export type WatchItem = typeof WatchItem.Type

type Simplify<A> = { [K in keyof A]: A[K] } & {}

/** The payload fields of a declaration's arguments: one field per argument, under its name. */
type FieldsOf<Args> = Args extends readonly [infer H, ...infer T]
  ? H extends Operation.Arg<infer N, infer S, infer O>
    ? { readonly [K in N]: O extends true ? Schema.optional<S> : S } & FieldsOf<T>
  : never
  : {}

/**
 * The RPC of a declaration: its arguments as the payload's fields, its success, and its errors with
 * `HandshakeRequired`.
 *
 * @since 0.4.0
 * @category derivations
 */
export type RpcOf<Op> = Op extends Operation.Operation<infer Tag, infer Args, infer S, infer E> ? Rpc.Rpc<
    Tag,
    Schema.Struct<Extract<Simplify<FieldsOf<Args>>, Schema.Struct.Fields>>,
    S,
    Schema.Union<[typeof HandshakeRequired, ...E]>
  >
  : never

/**
 * The RPCs of a table of declarations.
 *
 * @since 0.4.0
 * @category derivations
 */
export type RpcsOf<Ops extends Operation.Table> = { [K in keyof Ops]: RpcOf<Ops[K]> }[keyof Ops]

/** A declaration's arguments as payload fields. */
const fieldsOf = (operation: Operation.Any): Schema.Struct.Fields =>
  Object.fromEntries(
    operation.args.map((
      argument
    ) => [argument.name, argument.optional ? Schema.optional(argument.schema) : argument.schema])
  )

/**
 * The RPC of a declaration (a request and its response; `stream` for a stream of successes).
 *
 * @since 0.4.0
 * @category derivations
 */
export const rpcOf = (operation: Operation.Any, options: { readonly stream?: boolean } = {}) =>
  Rpc.make(operation.tag, {
    payload: fieldsOf(operation),
    success: operation.success,
    error: Schema.Union(HandshakeRequired, ...operation.errors),
    stream: options.stream ?? false
  })

/**
 * Every operation served: the terminal service's, the task operations clients use, and the one-shot
 * supervisor's, in this order.
 *
 * @since 0.4.0
 * @category operations
 */
export const operations = {
  terminal: PtyService.operations,
  tasks: TaskRuntime.operations,
  exec: Exec.operations
} as const

const Hello = Rpc.make("Hello", {
  payload: {
    protocolVersion: Schema.Number,
    owner: Schema.optional(OwnerCredential),
    client: Schema.optional(Schema.String)
  },
  success: HelloResult,
  error: Schema.Union(ProtocolMismatch, OwnerRejected)
})

type Watch = typeof PtyService.streams.watch
const Watch = Rpc.make("Watch", {
  payload: fieldsOf(PtyService.streams.watch) as Simplify<FieldsOf<Watch["args"]>>,
  success: PtyService.streams.watch.success,
  error: Schema.Union(HandshakeRequired, ...PtyService.streams.watch.errors),
  stream: true
})
const TaskCompletions = Rpc.make("TaskCompletions", {
  success: TaskRuntime.TaskEvent,
  error: HandshakeRequired,
  stream: true
})

type Rpcs =
  | typeof Hello
  | RpcsOf<typeof PtyService.operations>
  | RpcsOf<typeof TaskRuntime.operations>
  | RpcsOf<typeof Exec.operations>
  | typeof Watch
  | typeof TaskCompletions

const group: RpcGroup.RpcGroup<Rpcs> = RpcGroup.make(
  Hello,
  ...Object.values(operations).flatMap((table) => Object.values(table).map((operation) => rpcOf(operation))),
  Watch,
  TaskCompletions
) as unknown as RpcGroup.RpcGroup<Rpcs>

/**
 * Every operation of the protocol: `Hello`, then one RPC per declaration of `operations`, and the two
 * streams (`Watch`, `TaskCompletions`).
 *
 * @since 0.2.0
 */
export class DaemonRpcs extends group {}
