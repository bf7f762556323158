/**
 * The bearer token every HTTP listener requires (docs/security.md): from `AGENT_TERMINAL_TOKEN`, or from a
 * token file — given (`--token-file` / `AGENT_TERMINAL_TOKEN_FILE`) or the default
 * `$AGENT_TERMINAL_STATE_DIR/token` (state directory `~/.agent-terminal`). A missing file is created with
 * 256 random bits, mode 0600, in a directory created 0700, in one step that never overwrites (two servers
 * starting together read the same token). A file another user could read or write is refused: the token
 * would not be a secret. Where the token is, is said; the token itself never is.
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * Where the token came from.
 *
 * @since 0.2.0
 */
export type Source =
  | { readonly _tag: "Environment"; readonly variable: string }
  | { readonly _tag: "File"; readonly path: string; readonly created: boolean }

/**
 * A loaded token and where it came from.
 *
 * @since 0.2.0
 */
export interface Loaded {
  readonly token: Redacted.Redacted<string>
  readonly source: Source
}

/**
 * The token cannot be loaded or made; `reason` says why (never the token).
 *
 * @since 0.2.0
 */
export class TokenError extends Data.TaggedError("TokenError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/**
 * Where to look.
 *
 * @since 0.2.0
 */
export interface Options {
  /** A token given directly (`AGENT_TERMINAL_TOKEN`). */
  readonly token?: string | undefined
  /** A token file (`--token-file`, `AGENT_TERMINAL_TOKEN_FILE`); created if missing. */
  readonly file?: string | undefined
  /** The state directory of the default file (`AGENT_TERMINAL_STATE_DIR`; default `~/.agent-terminal`). */
  readonly stateDir?: string | undefined
}

/**
 * The name of the environment variable holding a token.
 *
 * @since 0.2.0
 */
export const environmentVariable = "AGENT_TERMINAL_TOKEN"

/**
 * The shortest token accepted from a person (a generated one has 43 characters).
 *
 * @since 0.2.0
 */
export const minLength = 32

/**
 * The state directory: `AGENT_TERMINAL_STATE_DIR`, else `~/.agent-terminal`.
 *
 * @since 0.2.0
 */
export const defaultStateDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.AGENT_TERMINAL_STATE_DIR !== undefined && env.AGENT_TERMINAL_STATE_DIR !== ""
    ? path.resolve(env.AGENT_TERMINAL_STATE_DIR)
    : path.join(os.homedir(), ".agent-terminal")

/**
 * The token file used when none is given: `<state directory>/token`.
 *
 * @since 0.2.0
 */
export const defaultFile = (stateDir: string = defaultStateDir()): string => path.join(stateDir, "token")

/**
 * 256 random bits, base64url (43 characters).
 *
 * @since 0.2.0
 */
export const generate = (): string => crypto.randomBytes(32).toString("base64url")

const checkToken = (token: string, where: string): string | undefined => {
  if (token.length < minLength) return `the token in ${where} is too short: at least ${minLength} characters`
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(token)) return `the token in ${where} holds whitespace or control characters`
  return undefined
}

const ownUid = (): number | undefined => typeof process.getuid === "function" ? process.getuid() : undefined

/** A file or directory another user could use against us: not ours, or open to group/others. */
const looseness = (stat: fs.Stats, mask: number): string | undefined => {
  const uid = ownUid()
  if (uid !== undefined && stat.uid !== uid) return `is owned by uid ${stat.uid}, not by this user (${uid})`
  if ((stat.mode & mask) !== 0) return `is accessible to other users (mode ${(stat.mode & 0o777).toString(8)})`
  return undefined
}

const readTokenFile = (file: string): Either<string> => {
  let stat: fs.Stats
  try {
    stat = fs.lstatSync(file)
  } catch (error) {
    return { error: `cannot read the token file ${file}: ${(error as Error).message}` }
  }
  if (!stat.isFile()) return { error: `the token file ${file} is not a regular file` }
  const loose = looseness(stat, 0o077)
  if (loose !== undefined) {
    return { error: `the token file ${file} ${loose}: chmod 600 it (or remove it to make a new one)` }
  }
  const token = fs.readFileSync(file, "utf8").trim()
  const invalid = checkToken(token, file)
  return invalid !== undefined ? { error: invalid } : { value: token }
}

type Either<A> = { readonly value: A; readonly error?: undefined } | {
  readonly error: string
  readonly value?: undefined
}

/**
 * `dir` and its missing parents, 0700, each with one plain `mkdir`: Node's `recursive: true` loops forever where
 * a file system answers `ENOENT` for a directory it cannot hold (`/proc/x/y`). (`StateFiles.makeDirectory` of
 * `@agent-terminal/node` is the same walk; this package does not depend on that one, which brings node-pty.)
 */
const makeDirectory = (dir: string): void => {
  const isDirectory = () => fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true
  if (isDirectory()) return
  if (path.dirname(dir) !== dir) makeDirectory(path.dirname(dir))
  try {
    fs.mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !isDirectory()) throw error
  }
}

/** Create the file with a new token, atomically and without following or replacing anything. */
const createTokenFile = (file: string): Either<string> => {
  const dir = path.dirname(file)
  try {
    makeDirectory(dir)
  } catch (error) {
    return { error: `cannot create the state directory ${dir}: ${(error as Error).message}` }
  }
  const dirStat = fs.statSync(dir)
  const loose = looseness(dirStat, 0o022)
  if (loose !== undefined) return { error: `the directory of the token file, ${dir}, ${loose}` }
  const token = generate()
  const temporary = path.join(dir, `.token-${process.pid}-${crypto.randomBytes(6).toString("hex")}`)
  try {
    const fd = fs.openSync(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600)
    try {
      fs.writeSync(fd, `${token}\n`)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    // link() never replaces: a token another server made meanwhile wins, and is read back
    fs.linkSync(temporary, file)
    return { value: token }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readTokenFile(file)
    return { error: `cannot create the token file ${file}: ${(error as Error).message}` }
  } finally {
    fs.rmSync(temporary, { force: true })
  }
}

/**
 * Load the token: the one given, else the file's (created if missing). Giving both a token and a file is
 * refused: one of them would be silently ignored.
 *
 * @since 0.2.0
 */
export const load = (options: Options = {}): Effect.Effect<Loaded, TokenError> =>
  Effect.suspend((): Effect.Effect<Loaded, TokenError> => {
    if (options.token !== undefined && options.token !== "") {
      if (options.file !== undefined) {
        return Effect.fail(
          new TokenError({ reason: `give the token (${environmentVariable}) or a token file, not both` })
        )
      }
      const invalid = checkToken(options.token, environmentVariable)
      return invalid !== undefined
        ? Effect.fail(new TokenError({ reason: invalid }))
        : Effect.succeed({
          token: Redacted.make(options.token),
          source: { _tag: "Environment", variable: environmentVariable }
        })
    }
    const file = path.resolve(options.file ?? defaultFile(options.stateDir ?? defaultStateDir()))
    const existing = fs.existsSync(file) || isDanglingLink(file)
    const loaded = existing ? readTokenFile(file) : createTokenFile(file)
    if (loaded.error !== undefined) return Effect.fail(new TokenError({ reason: loaded.error }))
    return Effect.succeed({
      token: Redacted.make(loaded.value),
      source: { _tag: "File", path: file, created: !existing }
    })
  })

const isDanglingLink = (file: string) => {
  try {
    return fs.lstatSync(file).isSymbolicLink()
  } catch {
    return false
  }
}

/**
 * A line for stderr saying where the token is (never the token).
 *
 * @since 0.2.0
 */
export const describe = (source: Source): string =>
  source._tag === "Environment"
    ? `the bearer token is the one in ${source.variable}`
    : source.created
    ? `a new bearer token was written to ${source.path} (mode 0600): clients send "Authorization: Bearer <its contents>"`
    : `the bearer token is in ${source.path}`
