/**
 * The files and directories a server keeps in its state directory (`~/.agent-terminal`: the token, the
 * registry's and the audit's databases, recordings, owner secrets), opened without following links. A
 * symbolic link there would make the server write, or chmod, whatever it points at — `audit.db` → a file of
 * root's made that file 0600, `recordings` → a shared directory got the recordings. So a link among them is
 * an error at startup (`linkedEntries`), a directory is checked with `lstat` after it is made
 * (`privateDirectory`), and a file is opened with `O_NOFOLLOW` and checked on its descriptor
 * (`openPrivate`): a regular file of ours with one name, made 0600 through that descriptor only.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The names a server creates or opens for writing in its state directory (the databases with SQLite's
 * companions: SQLite opens those by name too).
 *
 * @since 0.3.0
 */
export const entries: ReadonlyArray<string> = [
  "token",
  ...["daemon.db", "audit.db"].flatMap((db) => [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]),
  "recordings",
  "owners"
]

const uid = () => (typeof process.getuid === "function" ? process.getuid() : undefined)

/**
 * Which of the state directory's entries are symbolic links (none: `[]`).
 *
 * @since 0.3.0
 */
export const linkedEntries = (stateDir: string): ReadonlyArray<string> =>
  entries.map((name) => path.join(stateDir, name)).filter((file) => {
    try {
      return fs.lstatSync(file).isSymbolicLink()
    } catch {
      return false
    }
  })

/**
 * Why the state directory cannot be used (its links named), or `undefined`.
 *
 * @since 0.3.0
 */
export const problem = (stateDir: string): string | undefined => {
  const linked = linkedEntries(stateDir)
  return linked.length === 0
    ? undefined
    : `${linked.join(", ")} ${linked.length === 1 ? "is a symbolic link" : "are symbolic links"}: ` +
      "the state directory's files are never followed through links (remove them, or use another " +
      "AGENT_TERMINAL_STATE_DIR)"
}

/**
 * `dir` and its missing parents, each made with one plain `mkdir` from the top (`mode` for each made here; an
 * existing directory is kept as it is). Node's own `mkdir` with `recursive: true` loops forever under a file
 * system that answers `ENOENT` for a directory it cannot hold (`/proc/x/y` spins a core, and the event loop
 * with it): here that `ENOENT` is the error thrown, as for any other refusal.
 *
 * @since 0.4.0
 */
export const makeDirectory = (dir: string, mode?: number): void => {
  if (isDirectory(dir)) return
  const parent = path.dirname(dir)
  if (parent !== dir) makeDirectory(parent, mode)
  try {
    fs.mkdirSync(dir, { mode })
  } catch (error) {
    // made meanwhile by another process: that is as good
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !isDirectory(dir)) throw error
  }
}

const isDirectory = (dir: string) => fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true

/**
 * A directory of ours: created 0700 if missing, else it must be a directory (not a link) of this user.
 * Throws an `Error` with the reason.
 *
 * @since 0.3.0
 */
export const privateDirectory = (dir: string): void => {
  makeDirectory(dir, 0o700)
  const stat = fs.lstatSync(dir)
  if (stat.isSymbolicLink()) throw new Error(`${dir} is a symbolic link`)
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`)
  const me = uid()
  if (me !== undefined && stat.uid !== me) throw new Error(`${dir} belongs to uid ${stat.uid}, not to us`)
}

/**
 * Open `file` for writing without following a link (`O_NOFOLLOW`; `flags` add `O_CREAT`, `O_APPEND`,
 * `O_EXCL`…), and check what was opened: a regular file of ours with no other name (a hard link to a file
 * elsewhere is refused too), made 0600 through the descriptor. The descriptor, or an `Error` thrown.
 *
 * @since 0.3.0
 */
export const openPrivate = (file: string, flags: number): number => {
  const fd = fs.openSync(file, flags | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW, 0o600)
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw new Error(`${file} is not a regular file`)
    const me = uid()
    if (me !== undefined && stat.uid !== me) throw new Error(`${file} belongs to uid ${stat.uid}, not to us`)
    if (stat.nlink > 1) throw new Error(`${file} has other names (hard links): it is refused`)
    if ((stat.mode & 0o777) !== 0o600) fs.fchmodSync(fd, 0o600)
    return fd
  } catch (error) {
    fs.closeSync(fd)
    throw error
  }
}
