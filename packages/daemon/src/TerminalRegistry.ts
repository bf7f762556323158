/**
 * What the daemon remembers beyond its own life: its runs, the owners and their hashed credentials, every
 * terminal and task with its owner, name and status and when and how it ended, and the audit of control
 * changes (for the live view). A restarted daemon reads it to answer an id it held before with
 * `SessionLost`. Behind a Tag: SQLite here (`layerSqlite`), in memory for tests (`layerMemory`), Postgres
 * when terminals spread over machines. The data path never waits on it for more than a write.
 *
 * @since 0.2.0
 */
import { Audit } from "@agent-terminal/core"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type { SecretHash } from "./Credentials.js"
import * as auditWriter from "./internal/auditWriter.js"
import * as memory from "./internal/memoryRegistry.js"
import * as sqlite from "./internal/sqliteRegistry.js"

/**
 * The registry could not be read or written.
 *
 * @since 0.2.0
 */
export class RegistryError extends Data.TaggedError("RegistryError")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message() {
    return `registry ${this.operation} failed: ${String(this.cause)}`
  }
}

/**
 * How a terminal (or task) ended.
 *
 * - `closed`: closed on request; `owner-gone`: its anonymous owner disconnected; `detached-ttl`: its named
 *   owner stayed away longer than the detached TTL; `daemon-stopped` / `daemon-died`: its daemon ended.
 *
 * @since 0.2.0
 */
export type EndReason = "closed" | "owner-gone" | "detached-ttl" | "daemon-stopped" | "daemon-died"

/**
 * A run of the daemon: one process, from its start to its stop (or its death, seen by the next run).
 *
 * @since 0.2.0
 */
export interface RunRecord {
  readonly runId: number
  readonly pid: number
  readonly startedAt: number
  /** The last heartbeat: when it was last known alive. */
  readonly lastSeenAt: number
  readonly endedAt: number | undefined
  readonly ended: "stopped" | "died" | undefined
}

/**
 * A terminal as the registry remembers it.
 *
 * @since 0.2.0
 */
export interface TerminalRecord {
  readonly sessionId: string
  readonly owner: string
  readonly name: string
  readonly type: string
  readonly pid: number
  readonly runId: number
  readonly openedAt: number
  readonly endedAt: number | undefined
  readonly endReason: EndReason | undefined
  readonly exitCode: number | undefined
  readonly signal: string | undefined
}

/**
 * A task (a background send or a one-shot run) as the registry remembers it.
 *
 * @since 0.2.0
 */
export interface TaskRecord {
  readonly taskId: string
  readonly owner: string
  readonly kind: string
  readonly label: string
  readonly sessionId: string | undefined
  readonly runId: number
  readonly startedAt: number
  readonly endedAt: number | undefined
  /** The task's final status (`completed`, `failed`, `killed`…) or how the daemon ended it. */
  readonly status: string | undefined
}

/**
 * A named owner and its credential.
 *
 * @since 0.2.0
 */
export interface OwnerRecord {
  readonly name: string
  readonly secret: SecretHash
  readonly createdAt: number
  readonly lastSeenAt: number
}

/**
 * One change of who controls a terminal (the live view's control lease), for the audit.
 *
 * @since 0.2.0
 */
export interface ControlChange {
  readonly sessionId: string
  readonly at: number
  /** Who did it: an owner, or a person of the live view. */
  readonly actor: string
  readonly action: string
  readonly detail?: string | undefined
}

/**
 * @since 0.2.0
 */
export class TerminalRegistry extends Context.Tag("@agent-terminal/daemon/TerminalRegistry")<
  TerminalRegistry,
  {
    /**
     * Begin a run. Runs that never ended (their daemon died) are ended as `died` at their last heartbeat,
     * and so are their open terminals (`daemon-died`) and running tasks.
     */
    readonly startRun: (pid: number, at: number) => Effect.Effect<{
      readonly runId: number
      readonly died: ReadonlyArray<RunRecord>
    }, RegistryError>
    readonly heartbeat: (runId: number, at: number) => Effect.Effect<void, RegistryError>
    /** End a run on a graceful stop: its open terminals and running tasks end as `daemon-stopped`. */
    readonly stopRun: (runId: number, at: number) => Effect.Effect<void, RegistryError>
    readonly owner: (name: string) => Effect.Effect<Option.Option<OwnerRecord>, RegistryError>
    /** Register a new named owner; `false` when the name was taken meanwhile. */
    readonly addOwner: (record: OwnerRecord) => Effect.Effect<boolean, RegistryError>
    readonly ownerSeen: (name: string, at: number) => Effect.Effect<void, RegistryError>
    readonly terminalOpened: (
      record: Omit<TerminalRecord, "endedAt" | "endReason" | "exitCode" | "signal">
    ) => Effect.Effect<void, RegistryError>
    readonly terminalEnded: (
      sessionId: string,
      end: {
        readonly at: number
        readonly reason: EndReason
        readonly exitCode?: number | undefined
        readonly signal?: string | undefined
      }
    ) => Effect.Effect<void, RegistryError>
    readonly terminal: (sessionId: string) => Effect.Effect<Option.Option<TerminalRecord>, RegistryError>
    readonly terminals: (owner: string) => Effect.Effect<ReadonlyArray<TerminalRecord>, RegistryError>
    readonly taskStarted: (
      record: Omit<TaskRecord, "endedAt" | "status">
    ) => Effect.Effect<void, RegistryError>
    readonly taskEnded: (taskId: string, at: number, status: string) => Effect.Effect<void, RegistryError>
    readonly task: (taskId: string) => Effect.Effect<Option.Option<TaskRecord>, RegistryError>
    readonly run: (runId: number) => Effect.Effect<Option.Option<RunRecord>, RegistryError>
    /** Record changes of control and writes to terminals (the live view's audit), in one write. */
    readonly audit: (changes: ReadonlyArray<ControlChange>) => Effect.Effect<void, RegistryError>
    /** A session's audit, oldest first: the newest `limit` entries (default 1000). */
    readonly auditOf: (sessionId: string, limit?: number) => Effect.Effect<ReadonlyArray<ControlChange>, RegistryError>
  }
>() {}

/**
 * The registry in memory: for tests, and for a daemon that needs to remember nothing past its life.
 *
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<TerminalRegistry> = Layer.sync(TerminalRegistry, memory.make)

/**
 * The registry in an SQLite database at `filename` (created and migrated by `@effect/sql`'s migrator;
 * WAL mode).
 *
 * @since 0.2.0
 */
export const layerSqlite = (options: { readonly filename: string }): Layer.Layer<TerminalRegistry, RegistryError> =>
  Layer.effect(TerminalRegistry, sqlite.make).pipe(Layer.provide(sqlite.clientLayer(options)))

/**
 * The audit of the live view (`Audit` of `@agent-terminal/core`) kept in this registry's `control_audit`
 * table: what the daemon's service records when it is built with it. Entries are written behind, in
 * batches, at most ~20 ms after they happen (off the path of the send or the keystroke they record); reading
 * a session's audit writes what is pending first, and the layer's release writes the rest. A failed write is
 * logged; the terminal work goes on.
 *
 * @since 0.2.0
 */
export const auditLayer: Layer.Layer<Audit.Audit, never, TerminalRegistry> = Layer.scoped(
  Audit.Audit,
  Effect.flatMap(TerminalRegistry, (registry) => auditWriter.make(registry))
)
