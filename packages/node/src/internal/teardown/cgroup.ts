import type { ProcessInspector } from "@agent-terminal/core"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { CgroupRoot, CgroupTerminateOptions, SessionCgroup } from "../../Teardown.js"
import * as limits from "./cgroupLimits.js"
import { isGone, parseStat } from "./procTable.js"
import { guardFromReader, terminateTree, type TreeEnv, type TreeView } from "./sweep.js"
import { refusal, untouchable } from "./treeTracker.js"

type ProcessInfo = ProcessInspector.ProcessInfo

class CgroupSetupFailed extends Data.TaggedError("CgroupSetupFailed")<{
  readonly reason: string
  readonly code?: string
}> {}

/** One line of `/proc/self/mountinfo`. */
export interface Mount {
  readonly root: string
  readonly mountPoint: string
  readonly fsType: string
}

const unescapeOctal = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, code: string) => String.fromCharCode(parseInt(code, 8)))

export const parseMountinfo = (text: string): ReadonlyArray<Mount> =>
  text.split("\n").flatMap((line) => {
    const fields = line.split(" ")
    const separator = fields.indexOf("-")
    if (separator < 6 || fields[separator + 1] === undefined) return []
    return [{ root: unescapeOctal(fields[3]!), mountPoint: unescapeOctal(fields[4]!), fsType: fields[separator + 1]! }]
  })

/** Our cgroup v2 path (the `0::` line of `/proc/self/cgroup`), relative to the hierarchy's root. */
export const parseOwnCgroup = (text: string): string | undefined => {
  const line = text.split("\n").find((l) => l.startsWith("0::"))
  return line === undefined ? undefined : line.slice(3).trim()
}

/** The directory of our own cgroup: the cgroup2 mount whose root contains it, plus the rest of the path. */
export const ownCgroupDir = (mounts: ReadonlyArray<Mount>, own: string): string | undefined => {
  const inside = (mount: Mount) => mount.root === "/" || own === mount.root || own.startsWith(`${mount.root}/`)
  const mount = mounts.find((m) => m.fsType === "cgroup2" && inside(m))
  if (mount === undefined) return undefined
  const dir = path.posix.join(mount.mountPoint, mount.root === "/" ? own : own.slice(mount.root.length))
  return dir.length > 1 && dir.endsWith("/") ? dir.slice(0, -1) : dir
}

/** Makes `$$` (the pid that then execs the program) join the cgroup first: no window outside it. */
export const JOIN_SCRIPT = "echo $$ > \"$0/cgroup.procs\" && exec \"$@\""
const PROBE_SCRIPT = "echo $$ > \"$0/cgroup.procs\""
export const SHELL = "/bin/sh"
const PARENT_PREFIX = "agent-terminal-"
const REMOVE_POLL_MS = 5

const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : String(error)

const attempt = <A>(what: string, f: () => A): Effect.Effect<A, CgroupSetupFailed> =>
  Effect.try({
    try: f,
    catch: (error) => new CgroupSetupFailed({ reason: `${what}: ${errorCode(error)}`, code: errorCode(error) })
  })

const exists = (e: CgroupSetupFailed) => e.code === "EEXIST"

/** The real cgroup files. */
export const nodeCgroupFs: limits.CgroupFs = {
  read: (file) => {
    try {
      return fs.readFileSync(file, "latin1")
    } catch {
      return undefined
    }
  },
  write: (file, value) => {
    try {
      fs.writeFileSync(file, value)
      return undefined
    } catch (error) {
      return errorCode(error)
    }
  }
}

/** Pids listed in `cgroup.procs`; undefined when the cgroup is gone or unreadable. */
export const readProcs = (dir: string): ReadonlyArray<number> | undefined => {
  try {
    return fs.readFileSync(path.join(dir, "cgroup.procs"), "latin1").split("\n").filter((l) => l !== "").map(Number)
  } catch {
    return undefined
  }
}

/** `populated 0` in `cgroup.events` (or the cgroup is gone). */
export const unpopulated = (dir: string): boolean => {
  try {
    return /^populated 0$/m.test(fs.readFileSync(path.join(dir, "cgroup.events"), "latin1"))
  } catch {
    return true
  }
}

/** Writes `1` to `cgroup.kill`: SIGKILL to every process in the cgroup at once, forks in flight included. */
export const killCgroupSync = (dir: string): boolean => {
  try {
    fs.writeFileSync(path.join(dir, "cgroup.kill"), "1")
    return true
  } catch {
    return false
  }
}

/** Removes the directory; true when it is gone (or was never there). */
export const removeCgroupSync = (dir: string): boolean => {
  try {
    fs.rmdirSync(dir)
    return true
  } catch (error) {
    return errorCode(error) === "ENOENT"
  }
}

/** Removes the parents of dead hosts (`agent-terminal-<pid>` whose pid is gone), when they are empty. */
const removeStaleParents = (ownDir: string, selfPid: number) =>
  Effect.gen(function*() {
    const names = yield* attempt(`list ${ownDir}`, () => fs.readdirSync(ownDir)).pipe(
      Effect.orElseSucceed((): ReadonlyArray<string> => [])
    )
    for (const name of names) {
      const pid = Number(name.slice(PARENT_PREFIX.length))
      if (!name.startsWith(PARENT_PREFIX) || !Number.isInteger(pid) || pid === selfPid) continue
      if (fs.existsSync(`/proc/${pid}`)) continue
      const parent = path.join(ownDir, name)
      const children = yield* attempt("list", () => fs.readdirSync(parent, { withFileTypes: true })).pipe(
        Effect.orElseSucceed(() => [])
      )
      for (const child of children) if (child.isDirectory()) removeCgroupSync(path.join(parent, child.name))
      const removed = removeCgroupSync(parent)
      yield* Effect.logDebug(`cgroup: stale ${parent} ${removed ? "removed" : "left (still populated)"}`)
    }
  })

const runProbe = (dir: string) =>
  Effect.async<number | null, CgroupSetupFailed>((resume) => {
    const child = spawn(SHELL, ["-c", PROBE_SCRIPT, dir], { stdio: "ignore" })
    child.once("error", (error) => resume(Effect.fail(new CgroupSetupFailed({ reason: `spawn ${SHELL}: ${error}` }))))
    child.once("exit", (code) => resume(Effect.succeed(code)))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** Remove the cgroup once it is empty: tried every `REMOVE_POLL_MS` for at most `waitMs`; true once removed. */
const removeWhenEmpty = (dir: string, waitMs: number): Effect.Effect<boolean> =>
  Effect.repeat(Effect.sync(() => removeCgroupSync(dir)), {
    schedule: Schedule.passthrough<number, boolean, never>(Schedule.spaced(REMOVE_POLL_MS).pipe(Schedule.upTo(waitMs))),
    until: (removed) => removed
  })

/**
 * Finds our cgroup v2 directory and proves that a child cgroup works here: creates
 * `<own>/agent-terminal-<pid>`, needs `cgroup.kill` (Linux 5.14+), and moves a probe `sh` into a child.
 */
export const probe = (env: TreeEnv): Effect.Effect<Option.Option<CgroupRoot>> =>
  Effect.gen(function*() {
    const mountinfo = yield* attempt("read /proc/self/mountinfo", () => fs.readFileSync("/proc/self/mountinfo", "utf8"))
    const cgroupFile = yield* attempt("read /proc/self/cgroup", () => fs.readFileSync("/proc/self/cgroup", "utf8"))
    const own = parseOwnCgroup(cgroupFile)
    if (own === undefined) return yield* new CgroupSetupFailed({ reason: "no cgroup v2 entry in /proc/self/cgroup" })
    const ownDir = ownCgroupDir(parseMountinfo(mountinfo), own)
    if (ownDir === undefined) return yield* new CgroupSetupFailed({ reason: `no cgroup2 mount holds ${own}` })
    yield* removeStaleParents(ownDir, env.selfPid)
    const parent = path.join(ownDir, `${PARENT_PREFIX}${env.selfPid}`)
    yield* attempt(`mkdir ${parent}`, () => fs.mkdirSync(parent)).pipe(
      Effect.catchIf(exists, () => Effect.void)
    )
    const checked = Effect.gen(function*() {
      if (!fs.existsSync(path.join(parent, "cgroup.kill"))) {
        return yield* new CgroupSetupFailed({ reason: "no cgroup.kill (Linux < 5.14)" })
      }
      // a fresh name for each probe (randomness, not the time: nothing is measured here)
      const probeDir = path.join(parent, `probe-${randomUUID().slice(0, 8)}`)
      yield* attempt(`mkdir ${probeDir}`, () => fs.mkdirSync(probeDir))
      const code = yield* runProbe(probeDir).pipe(Effect.ensuring(removeWhenEmpty(probeDir, 1_000)))
      if (code !== 0) return yield* new CgroupSetupFailed({ reason: `cannot move a process into ${probeDir}` })
    })
    yield* checked.pipe(Effect.tapError(() => Effect.sync(() => removeCgroupSync(parent))))
    yield* Effect.logDebug(`teardown: each session gets its own cgroup under ${parent} (close = cgroup.kill)`)
    const enabled = limits.enable(nodeCgroupFs, ownDir, parent)
    for (const { controller, reason } of enabled.missing) {
      yield* Effect.logDebug(`cgroup: no ${controller} limit for sessions: ${reason}`)
    }
    return Option.some(makeRoot(env, parent, enabled.controllers))
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logDebug(`teardown: no cgroup v2 here (${error.reason}); sessions use the identity-fenced sweep`).pipe(
        Effect.as(Option.none())
      )
    )
  )

const sanitize = (label: string): string => label.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 48) || "session"

const makeRoot = (env: TreeEnv, parent: string, controllers: ReadonlyArray<limits.Controller>): CgroupRoot => {
  let counter = 0
  const mkdirUnique = (label: string) =>
    Effect.gen(function*() {
      for (let tries = 0; tries < 16; tries++) {
        const dir = path.join(parent, `${sanitize(label)}-${++counter}`)
        const created = yield* attempt(`mkdir ${dir}`, () => fs.mkdirSync(dir)).pipe(
          Effect.as(true),
          Effect.catchIf(exists, () => Effect.succeed(false))
        )
        if (created) return dir
      }
      return yield* new CgroupSetupFailed({ reason: `no free cgroup name for ${label}` })
    })
  return {
    path: parent,
    controllers,
    create: (label, requested = {}) =>
      Effect.acquireRelease(
        mkdirUnique(label).pipe(
          Effect.map((dir) =>
            Option.some(
              makeSession(
                env,
                dir,
                limits.apply(nodeCgroupFs, dir, controllers, requested, Math.floor(os.totalmem() / 2))
              )
            )
          ),
          Effect.catchAll((error) =>
            Effect.logDebug(`cgroup: no session cgroup (${error.reason})`).pipe(
              Effect.as(Option.none<SessionCgroup>())
            )
          )
        ),
        Option.match({ onNone: () => Effect.void, onSome: release })
      )
  }
}

const release = (session: SessionCgroup) =>
  Effect.gen(function*() {
    const report = yield* session.kill
    if (report.survivors.length > 0) {
      yield* Effect.logWarning(`cgroup: ${session.path} still holds ${report.survivors.join(", ")} after cgroup.kill`)
    }
    const removed = yield* removeWhenEmpty(session.path, 2_000)
    if (!removed) yield* Effect.logWarning(`cgroup: could not remove ${session.path}`)
  })

const makeSession = (env: TreeEnv, dir: string, applied: limits.Applied): SessionCgroup => {
  const guard = guardFromReader(env)
  const scan = (rootPid: number | undefined) => (): TreeView => {
    const children: Array<ProcessInfo> = []
    const refused: Array<number> = []
    let root: ProcessInfo | undefined
    for (const pid of readProcs(dir) ?? []) {
      const text = env.reader.stat(pid)
      const info = text === undefined ? undefined : parseStat(text)
      if (info === undefined || isGone(info)) continue
      if (refusal(guard, info) !== undefined) refused.push(pid)
      else if (pid === rootPid) root = info
      else children.push(info)
    }
    return { children, refused, root }
  }
  const finish = Effect.suspend(() => {
    const ours = (readProcs(dir) ?? []).filter((pid) => untouchable(guard, pid))
    if (ours.length > 0) return Effect.logWarning(`cgroup: not killing ${dir}: it holds our own ${ours.join(", ")}`)
    return killCgroupSync(dir) ? Effect.void : Effect.logWarning(`cgroup: write to ${dir}/cgroup.kill failed`)
  })
  const terminate = (options: CgroupTerminateOptions) =>
    terminateTree(env, scan(options.rootPid), "cgroup", {
      graceMs: options.graceMs,
      rootGraceMs: options.rootGraceMs ?? Math.min(options.graceMs, 500),
      includeRoot: true,
      settleMs: options.settleMs ?? 2_000,
      finish
    })
  return {
    path: dir,
    limits: applied,
    wrap: (file, args) => ({ file: SHELL, args: ["-c", JOIN_SCRIPT, dir, file, ...args] }),
    pids: Effect.sync(() => readProcs(dir) ?? []),
    kill: terminate({ graceMs: 0, rootGraceMs: 0 }),
    terminate
  }
}
