/**
 * What a confined session's command line binds from the host, found on the host just before it starts: the
 * masks of the deny-read list, the workspace's git metadata made read-only, and the name-resolution files
 * that live under the private `/run`. Symlinks are resolved first, so a mask or a bind lands on the file that
 * would be read.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { GitBind, Mask } from "./bwrapArgs.js"
import { hiddenDirs, isWithin } from "./bwrapArgs.js"

/**
 * Where credentials live, masked by default in the confined modes (relative to each home directory). Scrubbing
 * the environment does not help while these can be read. `~/.Xauthority` is here too: with the host's
 * network the X server's abstract socket is reachable, and the cookie is what it asks for.
 */
export const defaultDenyRead: ReadonlyArray<string> = [
  "~/.ssh",
  "~/.aws",
  "~/.azure",
  "~/.config/gcloud",
  "~/.config/gh",
  "~/.kube",
  "~/.docker",
  "~/.gnupg",
  "~/.npmrc",
  "~/.pypirc",
  "~/.netrc",
  "~/.git-credentials",
  "~/.password-store",
  "~/.1password",
  "~/.Xauthority"
]

/** The home directories `~/` expands to: the process's `HOME`, the account's, and root's. */
export const homes = (): ReadonlyArray<string> => {
  const out = new Set<string>([os.homedir(), "/root"])
  try {
    out.add(os.userInfo().homedir)
  } catch {
    // no passwd entry
  }
  return [...out].filter((home) => home.startsWith("/"))
}

/** The project's state directory (the HTTP token, later the daemon's database): masked like a credential. */
export const stateDirOf = (env: Readonly<Record<string, string | undefined>>): string =>
  env.AGENT_TERMINAL_STATE_DIR !== undefined && env.AGENT_TERMINAL_STATE_DIR.startsWith("/")
    ? env.AGENT_TERMINAL_STATE_DIR
    : path.join(os.homedir(), ".agent-terminal")

const realKind = (candidate: string): Mask | undefined => {
  try {
    const real = fs.realpathSync(candidate)
    return { path: real, kind: fs.statSync(real).isDirectory() ? "dir" : "file" }
  } catch {
    return undefined
  }
}

/** `~/x` for every home, an absolute path as it is; anything else is not a path and is ignored. */
export const expand = (entry: string, homeDirs: ReadonlyArray<string>): ReadonlyArray<string> =>
  entry === "~" || entry.startsWith("~/")
    ? homeDirs.map((home) => path.join(home, entry.slice(1)))
    : entry.startsWith("/")
    ? [path.normalize(entry)]
    : []

/**
 * The masks of `entries` (plus `stateDir`) that exist here, by their real paths. A path the workspace lies in
 * is left alone (masking it would hide the workspace); one under a private directory is invisible anyway.
 */
export const masksFor = (options: {
  readonly entries: ReadonlyArray<string>
  readonly homes: ReadonlyArray<string>
  readonly workspace: string
}): ReadonlyArray<Mask> => {
  const found = new Map<string, Mask>()
  for (const entry of options.entries) {
    for (const candidate of expand(entry, options.homes)) {
      const mask = realKind(candidate)
      if (mask === undefined || found.has(mask.path)) continue
      if (isWithin(mask.path, options.workspace)) continue
      if (hiddenDirs.some((dir) => isWithin(dir, mask.path)) && !isWithin(options.workspace, mask.path)) continue
      found.set(mask.path, mask)
    }
  }
  return [...found.values()]
}

const exists = (candidate: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(candidate)
  } catch {
    return undefined
  }
}

const readText = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

/** A git directory's files whose content runs code in the user's next git command: read-only. */
const protectGitDir = (gitDir: string): ReadonlyArray<GitBind> => {
  const binds: Array<GitBind> = [{ path: gitDir, kind: "mountpoint" }]
  for (const name of ["config", "config.worktree"]) {
    if (exists(path.join(gitDir, name))?.isFile()) binds.push({ path: path.join(gitDir, name), kind: "read-only" })
  }
  const hooks = path.join(gitDir, "hooks")
  binds.push({ path: hooks, kind: exists(hooks)?.isDirectory() ? "read-only" : "empty-read-only" })
  return binds
}

/** Git directories under `dir` (submodules' `.git/modules/<name>`, names with slashes, nested), to a bounded depth. */
const gitDirsUnder = (dir: string, depth: number): ReadonlyArray<string> => {
  if (depth === 0) return []
  let names: Array<string>
  try {
    names = fs.readdirSync(dir)
  } catch {
    return []
  }
  return names.flatMap((name) => {
    const sub = path.join(dir, name)
    if (!exists(sub)?.isDirectory()) return []
    return exists(path.join(sub, "HEAD")) !== undefined
      ? [sub, ...gitDirsUnder(path.join(sub, "modules"), depth - 1)]
      : gitDirsUnder(sub, depth - 1)
  })
}

const gitDirOf = (dotGitFile: string): string | undefined => {
  const line = readText(dotGitFile)?.split("\n").find((l) => l.startsWith("gitdir:"))
  if (line === undefined) return undefined
  try {
    return fs.realpathSync(path.resolve(path.dirname(dotGitFile), line.slice("gitdir:".length).trim()))
  } catch {
    return undefined
  }
}

/**
 * The binds that keep the workspace's git metadata from running code at the user's next git command
 * (`core.fsmonitor`, `core.hooksPath`, hooks), while commits still work: `.git` becomes a mount point (it
 * cannot be renamed away and replaced), its `config` and `hooks` read-only — also in submodules' git
 * directories, and for a `.git` file (a linked worktree) the file itself and the git directories it points
 * to, where those lie in the writable workspace.
 */
export const gitBinds = (workspace: string): ReadonlyArray<GitBind> => {
  const dotGit = path.join(workspace, ".git")
  const stat = exists(dotGit)
  if (stat === undefined) return []
  const binds: Array<GitBind> = []
  const seen = new Set<string>()
  const protect = (gitDir: string) => {
    if (seen.has(gitDir) || !isWithin(workspace, gitDir)) return
    seen.add(gitDir)
    binds.push(...protectGitDir(gitDir))
    for (const module of gitDirsUnder(path.join(gitDir, "modules"), 4)) protect(module)
  }
  if (stat.isDirectory()) {
    protect(dotGit)
  } else if (stat.isFile()) {
    binds.push({ path: dotGit, kind: "read-only" })
    const gitDir = gitDirOf(dotGit)
    if (gitDir !== undefined) {
      protect(gitDir)
      const common = readText(path.join(gitDir, "commondir"))?.trim()
      if (common !== undefined && common !== "") {
        try {
          protect(fs.realpathSync(path.resolve(gitDir, common)))
        } catch {
          // a dangling commondir: git itself fails there
        }
      }
    }
  } else if (stat.isSymbolicLink()) {
    try {
      const real = fs.realpathSync(dotGit)
      if (fs.statSync(real).isDirectory()) protect(real)
    } catch {
      // dangling
    }
  }
  return binds
}

/**
 * The files under `/run` that `/etc/resolv.conf` leads to (systemd-resolved's `stub-resolv.conf`,
 * resolvconf's, NetworkManager's): the private `/run` would otherwise break name resolution. Every hop of
 * the symlink chain that lies under `/run` is bound (with the final file's content).
 */
export const nameResolutionFiles = (resolvConf = "/etc/resolv.conf"): ReadonlyArray<string> => {
  const out: Array<string> = []
  let current = resolvConf
  for (let hop = 0; hop < 8; hop++) {
    if (isWithin("/run", current)) out.push(current)
    const stat = exists(current)
    if (stat === undefined || !stat.isSymbolicLink()) break
    try {
      current = path.resolve(path.dirname(current), fs.readlinkSync(current))
    } catch {
      break
    }
  }
  return out
}
