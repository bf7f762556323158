/**
 * The terminal service: a registry of sessions, each a scoped resource with its own scope, owned by one
 * owner and checked on every operation; one send at a time per session; every send returns when the
 * readiness race says the program is ready for more input (or must stop waiting).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { HostEnvironment } from "./EnvPolicy.js"
import * as Errors from "./Errors.js"
import {
  type ForeignSession,
  type InvalidConfig,
  InvalidInput,
  type SessionLost,
  type SessionNotFound
} from "./Errors.js"
import { type OwnerId, type SessionId, SessionId as SessionIdSchema } from "./Ids.js"
import type * as internal from "./internal/service.js"
import * as Operation from "./Operation.js"
import { Oversight } from "./Oversight.js"
import type { ProcessInspector } from "./ProcessInspector.js"
import type { PtyBackend } from "./PtyBackend.js"
import * as Sandbox from "./Sandbox.js"
import {
  bounds,
  CloseResult,
  HumanRequest,
  HumanRequestResult,
  inputBytes,
  integerBetween,
  OpenRequest,
  OpenResult,
  ReadRequest,
  ReadResult,
  ResizeRequest,
  ResizeResult,
  ScreenSnapshot,
  SendRequest,
  SendResult,
  SessionInfo,
  SessionStatus,
  SignalName,
  SignalResult
} from "./Session.js"
import type { ShellDialects } from "./ShellDialects.js"
import type { TaskRuntime } from "./TaskRuntime.js"
import * as TerminalConfig from "./TerminalConfig.js"
import * as Validation from "./Validation.js"
import * as Watch from "./Watch.js"

/**
 * Errors of operations on an existing session. `SessionLost` comes only from a daemon that held the session
 * before it restarted (`@agent-terminal/daemon`); an in-process service answers `SessionNotFound`.
 *
 * @since 0.1.0
 */
export type LookupError = SessionNotFound | ForeignSession | SessionLost

/**
 * What `cancel` did.
 *
 * @since 0.1.0
 */
export const CancelResult = Schema.Struct({
  /** A send was in flight and has been stopped. */
  cancelled: Schema.Boolean,
  /** Its input had reached the terminal; `false` when the cancel won before the write (nothing written). */
  written: Schema.Boolean,
  /** Bytes of input no program had read yet, dropped (the flush a real ^C does). */
  discarded: Schema.Number,
  /** The process groups that received `SIGINT`, in order (empty: nothing written, or no group resolvable). */
  signalled: Schema.Array(Schema.Number),
  /** The background task that was killed, when the send in flight was one. */
  taskId: Schema.optionalWith(Schema.String, { exact: true })
})
/** @since 0.1.0 */
export type CancelResult = typeof CancelResult.Type

/**
 * A terminal's screen now (`snapshot`): its rows and cursor, its size, whether a full-screen program holds
 * it (the alternate screen), whether a send or a background task holds the session, and its status.
 *
 * @since 0.4.0
 */
export const SnapshotResult = Schema.Struct({
  screen: ScreenSnapshot,
  cols: Schema.Number,
  rows: Schema.Number,
  alternate: Schema.Boolean,
  busy: Schema.Boolean,
  sessionStatus: SessionStatus
})
/** @since 0.4.0 */
export type SnapshotResult = typeof SnapshotResult.Type

const checkId = (id: unknown): Either.Either<SessionId, InvalidInput> =>
  typeof id === "string" && id.length <= bounds.idLength
    ? Either.right(id as SessionId)
    : Either.left(
      new InvalidInput({
        field: "sessionId",
        reason: `must be an id (a string of at most ${bounds.idLength} characters)`
      })
    )

/**
 * A send of one `text` and nothing else — the common one — is valid by `SendRequest`'s own rules (an
 * optional string without a filter, no rule across fields), so its decode is skipped: ~5 % of a send's
 * allocations. `test/Validation.test.ts` holds the schema to it.
 */
const isTextOnly = (request: unknown): request is { readonly text: string } => {
  if (typeof request !== "object" || request === null || Object.getPrototypeOf(request) !== Object.prototype) {
    return false
  }
  const keys = Object.keys(request)
  return keys.length === 1 && keys[0] === "text" && typeof (request as { readonly text?: unknown }).text === "string"
}

const decodeSend = Validation.decoder(SendRequest, { root: "request" })

/** The session an operation is on: any string within the id bound (the lookup says whether it exists). */
const sessionId = Operation.arg("sessionId", SessionIdSchema, { check: checkId })
const lookup = [Errors.SessionNotFound, Errors.ForeignSession, Errors.SessionLost] as const

/**
 * The operations of the terminal service, one declaration each: the service's type, its entry checks
 * (`checked`), the daemon's protocol and its remote client are derived from these.
 *
 * @since 0.4.0
 * @category operations
 */
export const operations = {
  /**
   * Start a session; settles when the shell shows its prompt (or the command is ready). Refused with
   * `LimitReached` when the owner holds `maxTerminalsPerOwner` sessions. Interrupted, it leaves nothing
   * behind (no entry, no name taken, no process).
   */
  open: Operation.make("Open", {
    args: [Operation.arg("request", OpenRequest)],
    success: OpenResult,
    errors: [
      Errors.SpawnFailed,
      Errors.SandboxUnavailable,
      Errors.InvalidInput,
      Errors.DuplicateName,
      Errors.LimitReached
    ]
  }),
  /**
   * Write input and wait until the program is ready for more (or the send must stop waiting). A background
   * send is refused with `LimitReached` (nothing written) when the owner holds `maxTasksPerOwner` live tasks.
   * A send of a `signal` delivers it to the foreground group instead of input (refused as `signal` refuses
   * it: `SignalRefused`), then waits the same way.
   */
  send: Operation.make("Send", {
    args: [
      sessionId,
      Operation.arg("request", SendRequest, {
        check: (request) => isTextOnly(request) ? Either.right<SendRequest>(request) : decodeSend(request)
      })
    ],
    success: SendResult,
    errors: [
      ...lookup,
      Errors.SendActive,
      Errors.SessionExited,
      Errors.InvalidInput,
      Errors.LimitReached,
      Errors.HumanInControl,
      Errors.SignalRefused
    ],
    detached: true
  }),
  /** A page of the session's transcript. */
  read: Operation.make("Read", {
    args: [sessionId, Operation.arg("request", ReadRequest)],
    success: ReadResult,
    errors: [...lookup, Errors.InvalidInput]
  }),
  /** Send a signal to the terminal's foreground process group, resolved now. */
  signal: Operation.make("Signal", {
    args: [sessionId, Operation.arg("signal", SignalName)],
    success: SignalResult,
    errors: [...lookup, Errors.SignalRefused, Errors.SessionExited, Errors.InvalidInput, Errors.HumanInControl]
  }),
  /**
   * Stop the session's send in flight (as if the fiber that runs it were interrupted): a cancel that wins
   * before the write means the input is never written; otherwise the write lands, unread input is
   * dropped, and the terminal's foreground group gets a real `SIGINT` (not `\x03`: programs that turned
   * `ISIG` off stop too). Returns once the signal is delivered and the session's send slot is free. The
   * cancelled send ends interrupted. A background send is killed through the task runtime.
   */
  cancel: Operation.make("Cancel", { args: [sessionId], success: CancelResult, errors: lookup, checked: false }),
  /** End the session and its whole process tree; a close that failed or was interrupted can be retried. */
  close: Operation.make("Close", {
    args: [sessionId],
    success: CloseResult,
    errors: [...lookup, Errors.CleanupFailed],
    checked: false
  }),
  /** The owner's sessions. */
  list: Operation.make("List", { args: [], success: Schema.Array(SessionInfo) }),
  /** Close every session of an owner (its connection ended). */
  closeOwner: Operation.make("CloseOwner", { args: [], success: Schema.Void }),
  /**
   * Set the sandbox policy of an owner's next sessions — a decision of the embedding application, never
   * of the model (no tool reaches it). Refused with `SandboxInUse` while the owner has open or opening
   * sessions under another policy: a session keeps the confinement it was opened with, so the owner's
   * policy and its sessions' never disagree. Setting the policy in force is a no-op.
   */
  configureSandbox: Operation.make("ConfigureSandbox", {
    args: [Operation.arg("policy", Sandbox.Policy)],
    success: Schema.Void,
    errors: [Sandbox.SandboxInUse, Errors.InvalidConfig],
    checked: false
  }),
  /** The sandbox policy an owner's sessions are opened with now. */
  sandboxOf: Operation.make("SandboxOf", { args: [], success: Sandbox.Policy }),
  /**
   * Resize the terminal (the pty, the emulator, every watcher and the recording, between two pieces of
   * output). Refused with `HumanInControl` while a person holds the control.
   */
  resize: Operation.make("Resize", {
    args: [sessionId, Operation.arg("request", ResizeRequest)],
    success: ResizeResult,
    errors: [...lookup, Errors.SessionExited, Errors.InvalidInput, Errors.HumanInControl]
  }),
  /**
   * The terminal's screen now, as a person sees it: nothing is sent, nothing waited for, and a send in
   * flight is not disturbed (the send slot is not taken). An exited session shows its last screen.
   */
  snapshot: Operation.make("Snapshot", { args: [sessionId], success: SnapshotResult, errors: lookup, checked: false }),
  /**
   * Ask for a person (shown in the live view): a task of kind `human` that completes, with what the person
   * did, at the next hand-back of the control. With `wait`, block for it up to `timeoutMs`; `task_output`
   * with `wait: true` blocks on it later the same way, `task_kill` withdraws the request.
   */
  requestHuman: Operation.make("RequestHuman", {
    args: [sessionId, Operation.arg("request", HumanRequest)],
    success: HumanRequestResult,
    errors: [...lookup, Errors.SessionExited, Errors.InvalidInput, Errors.LimitReached],
    detached: true
  })
}

/**
 * Options of a watch, as a Schema (the daemon's `Watch` takes them).
 *
 * @since 0.4.0
 */
export const WatchOptionsSchema = Schema.Struct({
  // bounded (a watcher's backlog is memory of whoever serves it): 1 byte to 1 GiB
  maxBufferedBytes: Schema.optional(integerBetween(1, 1 << 30, " of bytes"))
})

/**
 * The streams of the terminal service: `watch` (its method is declared on the service, since its success
 * is a snapshot and a stream rather than one value).
 *
 * @since 0.4.0
 * @category operations
 */
export const streams = {
  /**
   * Watch a session (the live view): atomically, a snapshot a browser terminal can be initialised from and
   * every later chunk of raw output, with no gap and no duplicate, then its exit.
   */
  watch: Operation.make("Watch", {
    args: [Operation.arg("sessionId", SessionIdSchema), Operation.optionalArg("options", WatchOptionsSchema)],
    success: Schema.Union(Watch.Snapshot, Watch.WatchEvent),
    errors: lookup
  })
}

/**
 * @since 0.1.0
 */
export class PtyService extends Context.Tag("@agent-terminal/core/PtyService")<
  PtyService,
  Operation.ServiceOf<typeof operations> & {
    /**
     * Watch a session (the live view): atomically, a snapshot a browser terminal can be initialised from and
     * every later chunk of raw output, with no gap and no duplicate, then its exit. Bounded: a watcher that
     * falls `maxBufferedBytes` behind is dropped (its stream says so and ends); the session never waits for
     * it. Optional: a service without it (a fake) cannot be watched. The watch ends with the scope.
     */
    readonly watch?: (
      owner: OwnerId,
      sessionId: SessionId,
      options?: Watch.WatchOptions
    ) => Effect.Effect<Watch.Watch, LookupError, Scope.Scope>
  }
>() {}

const checkInputSize = (request: SendRequest, maxInputBytes: number): InvalidInput | undefined => {
  const inputs: Array<readonly [string, Pick<SendRequest, "text" | "paste">]> = [["", request]]
  for (const [index, step] of (request.steps ?? []).entries()) inputs.push([`steps.${index}.`, step])
  let total = 0
  for (const [prefix, input] of inputs) {
    for (const field of ["text", "paste"] as const) {
      const value = input[field]
      if (value === undefined) continue
      total += value.length > maxInputBytes ? value.length : inputBytes(value)
      if (value.length > maxInputBytes || total > maxInputBytes) {
        return new InvalidInput({
          field: `${prefix}${field}`,
          reason: `must be at most ${maxInputBytes} bytes (UTF-8; maxInputBytes${
            prefix === "" ? "" : ", all steps together"
          })`
        })
      }
    }
  }
  return undefined
}

/**
 * The service with every request checked at its entry, so Effect callers get the same `InvalidInput`
 * (the field named, the value never echoed) the tools give: the bounds of `Session.bounds`, unknown fields
 * refused, `text`/`paste` within `maxInputBytes`.
 *
 * @since 0.2.0
 */
export const checked = (service: PtyService["Type"], settings: TerminalConfig.TerminalConfig): PtyService["Type"] =>
  Operation.checked(operations, service, {
    send: (_id, request) => checkInputSize(request as SendRequest, settings.maxInputBytes)
  })

/**
 * The engine behind the service (sessions, the emulator, the readiness race), loaded when a service is built:
 * a program that only holds the Tag — a client of the daemon's service — never loads it.
 */
const implementation: Effect.Effect<typeof internal> = Effect.promise(() => import("./internal/service.js"))

/**
 * Build the service in a scope; closing the scope closes every session.
 *
 * @since 0.1.0
 */
export const make = Effect.gen(function*() {
  const { pty } = yield* implementation.pipe(Effect.flatMap((service) => service.makeWithOversight))
  return checked(pty, yield* TerminalConfig.TerminalSettings)
})

/**
 * Build the service and its `Oversight` (the same sessions, for the live view) in a scope.
 *
 * @since 0.2.0
 */
export const makeWithOversight = Effect.gen(function*() {
  const { oversight, pty } = yield* implementation.pipe(Effect.flatMap((service) => service.makeWithOversight))
  return { pty: checked(pty, yield* TerminalConfig.TerminalSettings), oversight }
})

/**
 * The service and its `Oversight`, over whatever backend, inspector, shell dialects, environment and
 * sandbox are provided (and the `Audit` and `Recordings` store, when there are: otherwise the audit is
 * kept in memory and nothing is recorded).
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<
  PtyService | Oversight | Sandbox.OwnerPolicies,
  never,
  | PtyBackend
  | ProcessInspector
  | ShellDialects
  | HostEnvironment
  | TaskRuntime
  | Sandbox.Sandbox
  | TerminalConfig.TerminalSettings
> = Layer.scopedContext(
  Effect.map(
    makeWithOversight,
    ({ oversight, pty }) =>
      Context.make(PtyService, pty).pipe(
        Context.add(Oversight, oversight),
        Context.add(Sandbox.OwnerPolicies, { policyOf: (owner) => pty.sandboxOf(owner) })
      )
  )
)

/**
 * The service with its settings validated from `config` (fails with `InvalidConfig`).
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: TerminalConfig.TerminalConfigInput
): Layer.Layer<
  PtyService | Oversight | Sandbox.OwnerPolicies,
  InvalidConfig,
  PtyBackend | ProcessInspector | ShellDialects | HostEnvironment | TaskRuntime | Sandbox.Sandbox
> => layer.pipe(Layer.provide(TerminalConfig.layer(config)))
