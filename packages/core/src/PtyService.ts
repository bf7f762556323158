/**
 * The terminal service: a registry of sessions, each a scoped resource with its own scope, owned by one
 * owner and checked on every operation; one send at a time per session; every send returns when the
 * readiness race says the program is ready for more input (or must stop waiting).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { HostEnvironment } from "./EnvPolicy.js"
import type {
  CleanupFailed,
  DuplicateName,
  ForeignSession,
  InvalidConfig,
  InvalidInput,
  SandboxUnavailable,
  SendActive,
  SessionExited,
  SessionLost,
  SessionNotFound,
  SignalRefused,
  SpawnFailed
} from "./Errors.js"
import type { OwnerId, SessionId } from "./Ids.js"
import * as service from "./internal/service.js"
import type { ProcessInspector } from "./ProcessInspector.js"
import type { PtyBackend } from "./PtyBackend.js"
import type * as Sandbox from "./Sandbox.js"
import type {
  CloseResult,
  OpenRequest,
  OpenResult,
  ReadRequest,
  ReadResult,
  SendRequest,
  SendResult,
  SessionInfo,
  SignalName,
  SignalResult
} from "./Session.js"
import type { ShellDialect } from "./ShellDialect.js"
import type { TaskRuntime } from "./TaskRuntime.js"
import * as TerminalConfig from "./TerminalConfig.js"
import type { Watch, WatchOptions } from "./Watch.js"

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
export interface CancelResult {
  /** A send was in flight and has been stopped. */
  readonly cancelled: boolean
  /** Its input had reached the terminal; `false` when the cancel won before the write (nothing written). */
  readonly written: boolean
  /** Bytes of input no program had read yet, dropped (the flush a real ^C does). */
  readonly discarded: number
  /** The process groups that received `SIGINT`, in order (empty: nothing written, or no group resolvable). */
  readonly signalled: ReadonlyArray<number>
  /** The background task that was killed, when the send in flight was one. */
  readonly taskId?: string
}

/**
 * @since 0.1.0
 */
export class PtyService extends Context.Tag("@agent-terminal/core/PtyService")<
  PtyService,
  {
    /** Start a session; settles when the shell shows its prompt (or the command is ready). */
    readonly open: (
      owner: OwnerId,
      request: OpenRequest
    ) => Effect.Effect<OpenResult, SpawnFailed | SandboxUnavailable | InvalidInput | DuplicateName>
    /** Write input and wait until the program is ready for more (or the send must stop waiting). */
    readonly send: (
      owner: OwnerId,
      sessionId: SessionId,
      request: SendRequest
    ) => Effect.Effect<SendResult, LookupError | SendActive | SessionExited | InvalidInput>
    /** A page of the session's transcript. */
    readonly read: (
      owner: OwnerId,
      sessionId: SessionId,
      request: ReadRequest
    ) => Effect.Effect<ReadResult, LookupError | InvalidInput>
    /** Send a signal to the terminal's foreground process group, resolved now. */
    readonly signal: (
      owner: OwnerId,
      sessionId: SessionId,
      signal: SignalName
    ) => Effect.Effect<SignalResult, LookupError | SignalRefused | SessionExited>
    /**
     * Stop the session's send in flight (as if the fiber that runs it were interrupted): a cancel that wins
     * before the write means the input is never written; otherwise the write lands, unread input is
     * dropped, and the terminal's foreground group gets a real `SIGINT` (not `\x03`: programs that turned
     * `ISIG` off stop too). Returns once the signal is delivered and the session's send slot is free. The
     * cancelled send ends interrupted. A background send is killed through the task runtime.
     */
    readonly cancel: (owner: OwnerId, sessionId: SessionId) => Effect.Effect<CancelResult, LookupError>
    /** End the session and its whole process tree. */
    readonly close: (
      owner: OwnerId,
      sessionId: SessionId
    ) => Effect.Effect<CloseResult, LookupError | CleanupFailed>
    /** The owner's sessions. */
    readonly list: (owner: OwnerId) => Effect.Effect<ReadonlyArray<SessionInfo>>
    /** Close every session of an owner (its connection ended). */
    readonly closeOwner: (owner: OwnerId) => Effect.Effect<void>
    /**
     * Set the sandbox policy of an owner's next sessions — a decision of the embedding application, never
     * of the model (no tool reaches it). Refused with `SandboxInUse` while the owner has open or opening
     * sessions under another policy: a session keeps the confinement it was opened with, so the owner's
     * policy and its sessions' never disagree. Setting the policy in force is a no-op.
     */
    readonly configureSandbox: (
      owner: OwnerId,
      policy: Sandbox.Policy
    ) => Effect.Effect<void, Sandbox.SandboxInUse | InvalidConfig>
    /** The sandbox policy an owner's sessions are opened with now. */
    readonly sandboxOf: (owner: OwnerId) => Effect.Effect<Sandbox.Policy>
    /**
     * Watch a session (the live view): atomically, a snapshot a browser terminal can be initialised from and
     * every later chunk of raw output, with no gap and no duplicate, then its exit. Bounded: a watcher that
     * falls `maxBufferedBytes` behind is dropped (its stream says so and ends); the session never waits for
     * it. Optional: a service without it (a fake) cannot be watched. The watch ends with the scope.
     */
    readonly watch?: (
      owner: OwnerId,
      sessionId: SessionId,
      options?: WatchOptions
    ) => Effect.Effect<Watch, LookupError, Scope.Scope>
  }
>() {}

/**
 * Build the service in a scope; closing the scope closes every session.
 *
 * @since 0.1.0
 */
export const make = service.make

/**
 * The service, over whatever backend, inspector, dialect, environment and sandbox are provided.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<
  PtyService,
  never,
  | PtyBackend
  | ProcessInspector
  | ShellDialect
  | HostEnvironment
  | TaskRuntime
  | Sandbox.Sandbox
  | TerminalConfig.TerminalSettings
> = Layer.scoped(PtyService, service.make)

/**
 * The service with its settings validated from `config` (fails with `InvalidConfig`).
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: TerminalConfig.TerminalConfigInput
): Layer.Layer<
  PtyService,
  InvalidConfig,
  PtyBackend | ProcessInspector | ShellDialect | HostEnvironment | TaskRuntime | Sandbox.Sandbox
> => layer.pipe(Layer.provide(TerminalConfig.layer(config)))
