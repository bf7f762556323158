/**
 * The contract between the service and whatever runs programs on a pseudo-terminal (node-pty on this
 * host; a remote runner elsewhere). A spawned process is a scoped resource: closing the scope ends its
 * whole process tree.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import type { CleanupFailed, InvalidInput, LimitReached, SandboxUnavailable, SpawnFailed } from "./Errors.js"
import type { SignalName } from "./Session.js"

/**
 * A signal the service sends to a process group of a session's terminal: the closed set a session may be sent
 * (DESIGN §8), core's own type (no platform's signal names leak into the contract).
 *
 * @since 0.2.0
 */
export type Signal = SignalName

/**
 * What to run and where.
 *
 * @since 0.1.0
 */
export interface SpawnRequest {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The complete environment of the child (already cleaned by the env policy). */
  readonly env: Readonly<Record<string, string>>
  readonly cols: number
  readonly rows: number
  /** A label for logs and cgroup names. */
  readonly label: string
  /** How long processes that handle SIGTERM get to exit at teardown before SIGKILL. */
  readonly disposeGraceMs: number
  /**
   * The resource limits asked for the session's whole tree (a backend applies what its host allows; 0 or
   * absent: none).
   */
  readonly limits?: ResourceLimits | undefined
}

/**
 * Resource limits of a process tree: processes and threads together, memory in bytes.
 *
 * @since 0.2.0
 */
export interface ResourceLimits {
  readonly pidsMax?: number | undefined
  readonly memoryMaxBytes?: number | undefined
}

/**
 * How the process ended.
 *
 * @since 0.1.0
 */
export interface ExitStatus {
  readonly exitCode: number | null
  readonly signal: string | null
}

/**
 * How a session's process tree is held, and so how close ends it.
 *
 * - `cgroup`: its own cgroup v2; close is `cgroup.kill` (catches detached daemons too).
 * - `sweep`: the identity-fenced sweep of the descendants (a daemon that detached before a scan escapes).
 * - `pid-namespace`: a sandbox's pid namespace; killing its init ends everything inside.
 *
 * @since 0.1.0
 */
export type Containment = "cgroup" | "sweep" | "pid-namespace"

/**
 * What a teardown did.
 *
 * @since 0.1.0
 */
export interface TeardownReport {
  readonly containment: Containment
  /** Processes signalled (besides the root). */
  readonly signalled: number
  /** Pids still alive after the last step; empty on success. */
  readonly survivors: ReadonlyArray<number>
}

/**
 * A running program on a pty.
 *
 * @since 0.1.0
 */
export interface PtyProcess {
  readonly pid: number
  /** The pty slave path (e.g. `/dev/pts/4`), when the backend knows it. */
  readonly ttyPath: string | undefined
  readonly containment: Containment
  /** The resource limits that hold the process tree (absent: none). */
  readonly limits?: ResourceLimits | undefined
  /** Raw output bytes in order; ends (done) once the process exited and its output is drained. */
  readonly output: Mailbox.ReadonlyMailbox<Uint8Array>
  /**
   * Read the output through `sink`, synchronously as it is read, instead of through `output` (optional).
   * Once attached, every chunk is first given to `sink`; a chunk it declines (`false`) goes to `output` as
   * before, so the two never reorder as long as the sink declines while anything it declined is unread.
   * `output` still ends (done) once the process exited and everything is delivered. The service parses a
   * session's output this way in the read callback itself, without a fiber hop per chunk.
   */
  readonly attachSink?: ((sink: (chunk: Uint8Array) => boolean) => void) | undefined
  /**
   * Hand over (through the sink or `output`), now, what the program wrote that the kernel has not delivered yet
   * (optional). A pty's output reaches its reader through deferred work in the kernel (Linux runs it on a
   * worker thread), so under load a program can already be blocked reading its input while the prompt it
   * printed just before is not yet readable on our side; a read of the pty master runs that work first. After
   * it, every byte the program wrote before the call is in `output`, in order. `false` when it could not
   * (reading is paused for flow control, the terminal is gone): the caller waits for the output instead.
   */
  readonly flushOutput?: Effect.Effect<boolean> | undefined
  /** Completes, with how it ended, when the process exits (output may still be draining); may be awaited many times. */
  readonly exited: Effect.Effect<ExitStatus>
  /**
   * Completes once every byte is in the kernel (the pty's input queue), not merely queued: what a cancel
   * waits for before it signals. Writes land whole and in call order; a pty that is gone is not an error
   * (the session's exit reports it).
   */
  readonly write: (data: string | Uint8Array) => Effect.Effect<void>
  /**
   * Drop the input no program has read yet (the flush a real ^C does), so a cancelled line is not read
   * later; the number of bytes dropped.
   */
  readonly discardInput: Effect.Effect<number>
  readonly resize: (cols: number, rows: number) => Effect.Effect<void>
  /** Stop reading from the pty (flow control); the program blocks when the kernel buffer fills. */
  readonly pause: Effect.Effect<void>
  readonly resume: Effect.Effect<void>
  /**
   * Send a signal to a process group of this session's terminal. The backend refuses groups that are not
   * the session's (its own process group, pid 1); `false` when the group no longer exists.
   */
  readonly signalGroup: (pgid: number, signal: Signal) => Effect.Effect<boolean>
  /** End the whole process tree, children first; idempotent, and retryable after a failure. */
  readonly terminate: Effect.Effect<TeardownReport, CleanupFailed>
}

/**
 * @since 0.1.0
 */
export class PtyBackend extends Context.Tag("@agent-terminal/core/PtyBackend")<
  PtyBackend,
  {
    readonly spawn: (
      request: SpawnRequest
    ) => Effect.Effect<PtyProcess, SpawnFailed | SandboxUnavailable | InvalidInput | LimitReached, Scope.Scope>
  }
>() {}
