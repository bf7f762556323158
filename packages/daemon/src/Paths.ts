/**
 * Where the daemon lives on disk. The socket goes under `$XDG_RUNTIME_DIR/agent-terminal/` (a per-user
 * tmpfs, cleared at logout, that a sandboxed session does not see: `/run` is private inside the sandbox),
 * else in the state directory; the registry's database is always in the state directory
 * (`$AGENT_TERMINAL_STATE_DIR`, default `~/.agent-terminal`, which the sandbox masks). Every directory is 0700.
 *
 * @since 0.2.0
 */
import * as os from "node:os"
import * as path from "node:path"

/** The environment the paths are read from. */
type Env = Readonly<Record<string, string | undefined>>

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value === "" ? undefined : value

/**
 * The state directory: `$AGENT_TERMINAL_STATE_DIR`, default `~/.agent-terminal`.
 *
 * @since 0.2.0
 */
export const stateDir = (env: Env = process.env): string =>
  path.resolve(nonEmpty(env.AGENT_TERMINAL_STATE_DIR) ?? path.join(os.homedir(), ".agent-terminal"))

/**
 * The daemon's socket: `$AGENT_TERMINAL_SOCKET`, else `$XDG_RUNTIME_DIR/agent-terminal/agent-terminal.sock`,
 * else `<state dir>/agent-terminal.sock`.
 *
 * @since 0.2.0
 */
export const socketPath = (env: Env = process.env): string => {
  const explicit = nonEmpty(env.AGENT_TERMINAL_SOCKET)
  if (explicit !== undefined) return path.resolve(explicit)
  const runtime = nonEmpty(env.XDG_RUNTIME_DIR)
  return runtime !== undefined
    ? path.join(runtime, "agent-terminal", "agent-terminal.sock")
    : path.join(stateDir(env), "agent-terminal.sock")
}

/**
 * The registry's database: `<state dir>/daemon.db`.
 *
 * @since 0.2.0
 */
export const databasePath = (env: Env = process.env): string => path.join(stateDir(env), "daemon.db")

/**
 * Where recordings are kept: `<state dir>/recordings`.
 *
 * @since 0.2.0
 */
export const recordingsPath = (env: Env = process.env): string => path.join(stateDir(env), "recordings")

/**
 * The audit of an in-process `mcp --http` (its live view): `<state dir>/audit.db`, the registry's schema.
 *
 * @since 0.2.0
 */
export const auditDatabasePath = (env: Env = process.env): string => path.join(stateDir(env), "audit.db")

/**
 * Where owner secrets the daemon issued are kept by the CLI: `<state dir>/owners/<name>.secret` (0600).
 *
 * @since 0.2.0
 */
export const ownerSecretPath = (name: string, env: Env = process.env): string =>
  path.join(stateDir(env), "owners", `${name}.secret`)
