import { StateFiles } from "@agent-terminal/node"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EndReason, OwnerRecord, RunRecord, TaskRecord, TerminalRecord } from "../TerminalRegistry.js"
import { RegistryError, type TerminalRegistry } from "../TerminalRegistry.js"

type Service = TerminalRegistry["Type"]

/** Ended terminals and tasks older than this are forgotten at the next start. */
const RETENTION_MS = 30 * 24 * 3600 * 1000
/** Five values a row: well under SQLite's bound on a statement's parameters. */
const AUDIT_ROWS_PER_INSERT = 500

/** The schema, one migration per change; `@effect/sql`'s migrator records which ran. */
export const migrations = {
  "0001_registry": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE runs (
      run_id INTEGER PRIMARY KEY AUTOINCREMENT,
      pid INTEGER NOT NULL,
      started_at INTEGER NOT NULL,
      last_seen_at INTEGER NOT NULL,
      ended_at INTEGER,
      ended TEXT
    )`
    yield* sql`CREATE TABLE owners (
      name TEXT PRIMARY KEY,
      secret_scheme TEXT NOT NULL,
      secret_salt TEXT NOT NULL,
      secret_hash TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_seen_at INTEGER NOT NULL
    )`
    yield* sql`CREATE TABLE terminals (
      session_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      name TEXT NOT NULL,
      type TEXT NOT NULL,
      pid INTEGER NOT NULL,
      run_id INTEGER NOT NULL REFERENCES runs(run_id),
      opened_at INTEGER NOT NULL,
      ended_at INTEGER,
      end_reason TEXT,
      exit_code INTEGER,
      signal TEXT
    )`
    yield* sql`CREATE INDEX terminals_by_owner ON terminals(owner)`
    yield* sql`CREATE INDEX terminals_open ON terminals(run_id) WHERE ended_at IS NULL`
    yield* sql`CREATE TABLE tasks (
      task_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      kind TEXT NOT NULL,
      label TEXT NOT NULL,
      session_id TEXT,
      run_id INTEGER NOT NULL REFERENCES runs(run_id),
      started_at INTEGER NOT NULL,
      ended_at INTEGER,
      status TEXT
    )`
    yield* sql`CREATE INDEX tasks_open ON tasks(run_id) WHERE ended_at IS NULL`
    yield* sql`CREATE TABLE control_audit (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      at INTEGER NOT NULL,
      actor TEXT NOT NULL,
      action TEXT NOT NULL,
      detail TEXT
    )`
    yield* sql`CREATE INDEX control_audit_by_session ON control_audit(session_id, at)`
  })
}

const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "registry_migrations" })

/** The SQLite client over `filename` (its directory created 0700 if missing). */
export const clientLayer = (options: { readonly filename: string }): Layer.Layer<SqlClient.SqlClient, RegistryError> =>
  Layer.unwrapEffect(
    Effect.try({
      try: () => {
        StateFiles.makeDirectory(path.dirname(options.filename), 0o700)
        // 0600 before SQLite opens it (its -wal and -shm files take the database's mode): it holds the
        // owners' secret hashes. Opened without following a link, and SQLite's companions, which it opens by
        // name, checked for links too: a link here made the server chmod (and write) whatever it pointed at.
        fs.closeSync(StateFiles.openPrivate(options.filename, fs.constants.O_CREAT | fs.constants.O_APPEND))
        for (const suffix of ["-wal", "-shm", "-journal"]) {
          if (isLink(options.filename + suffix)) throw new Error(`${options.filename}${suffix} is a symbolic link`)
        }
        return SqliteClient.layer({ filename: options.filename })
      },
      catch: (cause) => new RegistryError({ operation: `open ${options.filename}`, cause })
    })
  ).pipe(Layer.catchAllCause((cause) =>
    Layer.fail(
      Option.filter(Cause.failureOption(cause), (failure) => failure instanceof RegistryError).pipe(
        // SQLite's own refusal: its error, not the cause's print with its stacks
        Option.getOrElse(() => new RegistryError({ operation: `open ${options.filename}`, cause: Cause.squash(cause) }))
      )
    )
  ))

const isLink = (file: string): boolean => {
  try {
    return fs.lstatSync(file).isSymbolicLink()
  } catch {
    return false
  }
}

const optional = <A>(value: A | null | undefined): A | undefined => value ?? undefined

const runOf = (row: any): RunRecord => ({
  runId: Number(row.run_id),
  pid: Number(row.pid),
  startedAt: Number(row.started_at),
  lastSeenAt: Number(row.last_seen_at),
  endedAt: optional(row.ended_at) === undefined ? undefined : Number(row.ended_at),
  ended: optional(row.ended)
})

const terminalOf = (row: any): TerminalRecord => ({
  sessionId: row.session_id,
  owner: row.owner,
  name: row.name,
  type: row.type,
  pid: Number(row.pid),
  runId: Number(row.run_id),
  openedAt: Number(row.opened_at),
  endedAt: optional(row.ended_at) === undefined ? undefined : Number(row.ended_at),
  endReason: optional(row.end_reason) as EndReason | undefined,
  exitCode: optional(row.exit_code) === undefined ? undefined : Number(row.exit_code),
  signal: optional(row.signal)
})

const taskOf = (row: any): TaskRecord => ({
  taskId: row.task_id,
  owner: row.owner,
  kind: row.kind,
  label: row.label,
  sessionId: optional(row.session_id),
  runId: Number(row.run_id),
  startedAt: Number(row.started_at),
  endedAt: optional(row.ended_at) === undefined ? undefined : Number(row.ended_at),
  status: optional(row.status)
})

const ownerOf = (row: any): OwnerRecord => ({
  name: row.name,
  secret: { scheme: row.secret_scheme, salt: row.secret_salt, hash: row.secret_hash },
  createdAt: Number(row.created_at),
  lastSeenAt: Number(row.last_seen_at)
})

/** The registry over the SQL client in context, migrated first. */
export const make: Effect.Effect<Service, RegistryError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* migrate.pipe(Effect.mapError((cause) => new RegistryError({ operation: "migrate", cause })))

  const wrap = (operation: string) => <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, RegistryError> =>
    Effect.mapError(effect, (cause) => new RegistryError({ operation, cause }))

  const endRun = (runId: number, at: number, how: "stopped" | "died") =>
    sql.withTransaction(Effect.gen(function*() {
      const reason = how === "stopped" ? "daemon-stopped" : "daemon-died"
      yield* sql`UPDATE runs SET ended_at = ${at}, ended = ${how} WHERE run_id = ${runId} AND ended IS NULL`
      yield* sql`UPDATE terminals SET ended_at = ${at}, end_reason = ${reason}
        WHERE run_id = ${runId} AND ended_at IS NULL`
      yield* sql`UPDATE tasks SET ended_at = ${at}, status = ${reason} WHERE run_id = ${runId} AND ended_at IS NULL`
    }))

  const service: Service = {
    startRun: (pid, at) =>
      sql.withTransaction(Effect.gen(function*() {
        const open = (yield* sql`SELECT * FROM runs WHERE ended IS NULL`).map(runOf)
        for (const run of open) yield* endRun(run.runId, run.lastSeenAt, "died")
        yield* sql`DELETE FROM terminals WHERE ended_at IS NOT NULL AND ended_at < ${at - RETENTION_MS}`
        yield* sql`DELETE FROM tasks WHERE ended_at IS NOT NULL AND ended_at < ${at - RETENTION_MS}`
        const inserted = yield* sql`INSERT INTO runs (pid, started_at, last_seen_at) VALUES (${pid}, ${at}, ${at})
          RETURNING run_id`
        const died = open.length === 0
          ? []
          : (yield* sql`SELECT * FROM runs WHERE run_id IN ${sql.in(open.map((run) => run.runId))}`).map(runOf)
        return { runId: Number(inserted[0]!.run_id), died }
      })).pipe(wrap("startRun")),
    heartbeat: (runId, at) =>
      sql`UPDATE runs SET last_seen_at = ${at} WHERE run_id = ${runId}`.pipe(
        Effect.asVoid,
        wrap("heartbeat")
      ),
    stopRun: (runId, at) => endRun(runId, at, "stopped").pipe(wrap("stopRun")),
    owner: (name) =>
      sql`SELECT * FROM owners WHERE name = ${name}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), ownerOf)),
        wrap("owner")
      ),
    addOwner: (record) =>
      sql`INSERT INTO owners (name, secret_scheme, secret_salt, secret_hash, created_at, last_seen_at)
        VALUES (${record.name}, ${record.secret.scheme}, ${record.secret.salt}, ${record.secret.hash},
          ${record.createdAt}, ${record.lastSeenAt})
        ON CONFLICT (name) DO NOTHING RETURNING name`.pipe(
        Effect.map((rows) => rows.length === 1),
        wrap("addOwner")
      ),
    ownerSeen: (name, at) =>
      sql`UPDATE owners SET last_seen_at = ${at} WHERE name = ${name}`.pipe(Effect.asVoid, wrap("ownerSeen")),
    terminalOpened: (record) =>
      sql`INSERT INTO terminals (session_id, owner, name, type, pid, run_id, opened_at)
        VALUES (${record.sessionId}, ${record.owner}, ${record.name}, ${record.type}, ${record.pid},
          ${record.runId}, ${record.openedAt})`.pipe(Effect.asVoid, wrap("terminalOpened")),
    terminalEnded: (sessionId, end) =>
      sql`UPDATE terminals SET ended_at = ${end.at}, end_reason = ${end.reason},
          exit_code = ${end.exitCode ?? null}, signal = ${end.signal ?? null}
        WHERE session_id = ${sessionId} AND ended_at IS NULL`.pipe(Effect.asVoid, wrap("terminalEnded")),
    terminal: (sessionId) =>
      sql`SELECT * FROM terminals WHERE session_id = ${sessionId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), terminalOf)),
        wrap("terminal")
      ),
    terminals: (owner) =>
      sql`SELECT * FROM terminals WHERE owner = ${owner} ORDER BY opened_at`.pipe(
        Effect.map((rows) => rows.map(terminalOf)),
        wrap("terminals")
      ),
    taskStarted: (record) =>
      sql`INSERT INTO tasks (task_id, owner, kind, label, session_id, run_id, started_at)
        VALUES (${record.taskId}, ${record.owner}, ${record.kind}, ${record.label}, ${record.sessionId ?? null},
          ${record.runId}, ${record.startedAt})
        ON CONFLICT (task_id) DO NOTHING`.pipe(Effect.asVoid, wrap("taskStarted")),
    taskEnded: (taskId, at, status) =>
      sql`UPDATE tasks SET ended_at = ${at}, status = ${status} WHERE task_id = ${taskId} AND ended_at IS NULL`.pipe(
        Effect.asVoid,
        wrap("taskEnded")
      ),
    task: (taskId) =>
      sql`SELECT * FROM tasks WHERE task_id = ${taskId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), taskOf)),
        wrap("task")
      ),
    run: (runId) =>
      sql`SELECT * FROM runs WHERE run_id = ${runId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), runOf)),
        wrap("run")
      ),
    audit: (changes) =>
      sql.withTransaction(Effect.forEach(
        Arr.chunksOf(changes, AUDIT_ROWS_PER_INSERT),
        (rows) =>
          sql`INSERT INTO control_audit ${
            sql.insert(rows.map((change) => ({
              session_id: change.sessionId,
              at: change.at,
              actor: change.actor,
              action: change.action,
              detail: change.detail ?? null
            })))
          }`,
        { discard: true }
      )).pipe(wrap("audit")),
    auditOf: (sessionId, limit = 1000) =>
      sql`SELECT * FROM control_audit WHERE session_id = ${sessionId} ORDER BY at DESC, id DESC LIMIT ${limit}`.pipe(
        Effect.map((rows) =>
          [...rows].reverse().map((row: any) => ({
            sessionId: row.session_id,
            at: Number(row.at),
            actor: row.actor,
            action: row.action,
            ...(row.detail === null ? {} : { detail: row.detail })
          }))
        ),
        wrap("auditOf")
      )
  }
  return service
})
