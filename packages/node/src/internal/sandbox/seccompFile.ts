/**
 * The seccomp program bwrap loads, kept as a file the launcher opens as fd 3 (and the empty file masked files
 * are replaced with): in a directory of this user's only (`<tmpdir>/agent-terminal-<uid>`, 0700, checked to be ours and not a symlink), named by its content,
 * written atomically. A directory another user could write would let them swap the filter for a weaker one.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { filterFor } from "./seccomp.js"

const uid = (): number => (typeof process.getuid === "function" ? process.getuid() : -1)

/** Where this user's private directory for the sandbox's files is. */
export const privateDirPath = (base = os.tmpdir()): string => path.join(base, `agent-terminal-${uid()}`)

/** This user's private directory for the sandbox's files, created if missing; fails with the reason. */
export const privateDir = (base = os.tmpdir()): { readonly dir: string } | { readonly failed: string } => {
  const dir = privateDirPath(base)
  try {
    fs.mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return { failed: `cannot create ${dir}: ${error}` }
  }
  let stat: fs.Stats
  try {
    stat = fs.lstatSync(dir)
  } catch (error) {
    return { failed: `cannot read ${dir}: ${error}` }
  }
  if (!stat.isDirectory() || stat.isSymbolicLink()) return { failed: `${dir} is not a directory` }
  if (stat.uid !== uid()) return { failed: `${dir} belongs to uid ${stat.uid}, not to this user` }
  if ((stat.mode & 0o077) !== 0) return { failed: `${dir} is accessible to other users (mode ${stat.mode & 0o777})` }
  return { dir }
}

/** An empty, read-only regular file in the private directory: what a masked file is replaced with. */
export const emptyFile = (): { readonly path: string } | { readonly failed: string } => {
  const where = privateDir()
  if ("failed" in where) return where
  const file = path.join(where.dir, "empty")
  try {
    const stat = fs.lstatSync(file)
    if (stat.isFile() && stat.size === 0 && (stat.mode & 0o222) === 0) return { path: file }
    fs.rmSync(file, { force: true })
  } catch {
    // not made yet
  }
  try {
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`
    fs.writeFileSync(partial, "", { mode: 0o444 })
    fs.renameSync(partial, file)
    return { path: file }
  } catch (error) {
    return { failed: `cannot make the empty file ${file}: ${error}` }
  }
}

/**
 * The path of this host's seccomp program (written when missing or different), or why there is none (an
 * architecture without a filter, an unusable private directory).
 */
export const seccompFile = (
  arch: string = process.arch,
  endianness: "LE" | "BE" = os.endianness()
): { readonly path: string } | { readonly failed: string } => {
  const filter = filterFor(arch, endianness)
  if (filter._tag === "Unsupported") return { failed: filter.reason }
  const where = privateDir()
  if ("failed" in where) return where
  const digest = crypto.createHash("sha256").update(filter.bytes).digest("hex").slice(0, 16)
  const file = path.join(where.dir, `seccomp-${arch}-${digest}.bpf`)
  try {
    const current = fs.readFileSync(file)
    if (Buffer.compare(current, filter.bytes) === 0) return { path: file }
  } catch {
    // not written yet
  }
  try {
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`
    fs.writeFileSync(partial, filter.bytes, { mode: 0o600 })
    fs.renameSync(partial, file)
    return { path: file }
  } catch (error) {
    return { failed: `cannot write the seccomp program to ${file}: ${error}` }
  }
}
