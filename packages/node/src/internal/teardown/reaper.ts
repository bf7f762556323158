/**
 * What the reaper does, synchronously: end the trees of an owner that is gone, and find what dead owners
 * left behind. Everything is fenced by identity (pid + start time), and never touches the calling process,
 * its ancestors, its process group or pid 1.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { TrackedTree } from "../../Teardown.js"
import {
  killCgroupSync,
  ownCgroupDir,
  parseMountinfo,
  parseOwnCgroup,
  readProcs,
  removeCgroupSync,
  unpopulated
} from "./cgroup.js"
import { killTreesSync, wallClockMs } from "./hostExit.js"
import { identityHolds, isGone, parseStat, readTable } from "./procTable.js"
import type { TreeEnv } from "./sweep.js"
import { makeGuard, refusal } from "./treeTracker.js"

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

const ROUNDS_MS = 300

/**
 * SIGKILL every live process whose environment holds one of `entries` (`NAME=value`), in rounds until none
 * is left or ~300 ms passed (a process forking meanwhile is caught by the next round). Returns the pids.
 */
export const killMarkedSync = (
  env: TreeEnv,
  matches: (environ: ReadonlyArray<string>) => boolean
): ReadonlyArray<number> => {
  const environ = env.reader.environ
  if (environ === undefined) return []
  const killed = new Set<number>()
  const deadline = wallClockMs() + ROUNDS_MS
  for (;;) {
    const table = readTable(env.reader)
    const guard = makeGuard((pid) => table.get(pid), env.selfPid)
    const targets = [...table.values()].filter((info) =>
      !isGone(info) && refusal(guard, info) === undefined && matches((environ(info.pid) ?? "").split("\0"))
    )
    if (targets.length === 0) break
    for (const info of targets) {
      if (!identityHolds(env.reader, info.pid, info.startTime)) continue
      env.signal(info.pid, "SIGKILL")
      killed.add(info.pid)
    }
    // The deadline bounds the rescans, never the first round (as in killTreesSync).
    if (wallClockMs() >= deadline) break
    sleepSync(2)
  }
  return [...killed]
}

/** End an owner's trees: `cgroup.kill` and KILL rounds over each tree, then everything carrying a marker. */
export const reapTrees = (env: TreeEnv, trees: ReadonlyArray<TrackedTree>): ReadonlyArray<number> => {
  const signalled = new Set(killTreesSync(env, trees))
  const markers = new Set(trees.flatMap((tree) => tree.marker === undefined ? [] : [tree.marker]))
  if (markers.size > 0) {
    for (const pid of killMarkedSync(env, (entries) => entries.some((entry) => markers.has(entry)))) signalled.add(pid)
  }
  return [...signalled]
}

/** `<pid>:<start time>` of an owner, as its trees carry it. */
const parseOwner = (value: string): { readonly pid: number; readonly startTime: number } | undefined => {
  const match = /^(\d+):(\d+)$/.exec(value)
  return match === null ? undefined : { pid: Number(match[1]), startTime: Number(match[2]) }
}

/** Whether the owner named by a marker is still the live process it was (its pid not reused). */
const ownerAlive = (env: TreeEnv, owner: { readonly pid: number; readonly startTime: number }): boolean => {
  const text = env.reader.stat(owner.pid)
  const info = text === undefined ? undefined : parseStat(text)
  return info !== undefined && info.startTime === owner.startTime && !isGone(info)
}

/** What a start found of dead owners and ended. */
export interface Leftovers {
  /** Processes killed, with the owner whose tree they were (`pid:start`). */
  readonly processes: ReadonlyArray<{ readonly pid: number; readonly comm: string; readonly owner: string }>
  /** Session cgroups emptied and removed. */
  readonly cgroups: ReadonlyArray<string>
}

/**
 * Find and end what owners that are gone left behind: live processes whose owner marker (`name=pid:start`)
 * names a process that no longer exists, or whose pid now belongs to another process; and the session
 * cgroups under `agent-terminal-<pid>` of hosts whose pid is gone (killed, then removed).
 */
export const reapLeftovers = (env: TreeEnv, ownerMarker: string): Leftovers => {
  const environ = env.reader.environ
  const processes: Array<{ pid: number; comm: string; owner: string }> = []
  if (environ !== undefined) {
    const prefix = `${ownerMarker}=`
    const deadOwners = new Map<string, boolean>()
    const ownerOf = (entries: ReadonlyArray<string>): string | undefined => {
      const entry = entries.find((item) => item.startsWith(prefix))
      if (entry === undefined) return undefined
      const value = entry.slice(prefix.length)
      let dead = deadOwners.get(value)
      if (dead === undefined) {
        const owner = parseOwner(value)
        dead = owner !== undefined && owner.pid !== env.selfPid && !ownerAlive(env, owner)
        deadOwners.set(value, dead)
      }
      return dead ? value : undefined
    }
    const table = readTable(env.reader)
    const owners = new Map<number, string>()
    for (const info of table.values()) {
      if (isGone(info)) continue
      const owner = ownerOf((environ(info.pid) ?? "").split("\0"))
      if (owner !== undefined) owners.set(info.pid, owner)
    }
    for (const pid of killMarkedSync(env, (entries) => ownerOf(entries) !== undefined)) {
      processes.push({ pid, comm: table.get(pid)?.comm ?? "?", owner: owners.get(pid) ?? "?" })
    }
  }
  return { processes, cgroups: reapDeadHostCgroups(env) }
}

/** The session cgroups of hosts that are gone: `cgroup.kill`, wait until empty, remove (and their parent). */
const reapDeadHostCgroups = (env: TreeEnv): ReadonlyArray<string> => {
  let ownDir: string | undefined
  try {
    const own = parseOwnCgroup(fs.readFileSync("/proc/self/cgroup", "utf8"))
    ownDir = own === undefined
      ? undefined
      : ownCgroupDir(parseMountinfo(fs.readFileSync("/proc/self/mountinfo", "utf8")), own)
  } catch {
    return []
  }
  if (ownDir === undefined) return []
  let names: Array<string>
  try {
    names = fs.readdirSync(ownDir)
  } catch {
    return []
  }
  const removed: Array<string> = []
  for (const name of names) {
    const match = /^agent-terminal-(\d+)$/.exec(name)
    if (match === null) continue
    const hostPid = Number(match[1])
    if (hostPid === env.selfPid || env.reader.stat(hostPid) !== undefined) continue
    const parent = path.join(ownDir, name)
    let children: Array<fs.Dirent>
    try {
      children = fs.readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory())
    } catch {
      continue
    }
    for (const child of children) {
      const dir = path.join(parent, child.name)
      if ((readProcs(dir) ?? []).includes(env.selfPid)) continue
      killCgroupSync(dir)
      const until = wallClockMs() + 500
      while (!unpopulated(dir) && wallClockMs() < until) sleepSync(2)
      if (removeCgroupSync(dir)) removed.push(dir)
    }
    removeCgroupSync(parent)
  }
  return removed
}
