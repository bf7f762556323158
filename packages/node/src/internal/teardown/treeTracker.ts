import type { ProcessInspector } from "@agent-terminal/core"
import { isGone, type ProcTable } from "./procTable.js"

type ProcessInfo = ProcessInspector.ProcessInfo

/**
 * What must never be signalled: our own process, its ancestors and pid 1 (never captured at all), members
 * of our own process group (captured, so their children are found, but never signalled), and the pids
 * the caller excludes.
 */
export interface Guard {
  readonly selfPid: number
  /** Undefined when our own stat could not be read: then nothing is signalled. */
  readonly selfPgid: number | undefined
  readonly selfSid: number | undefined
  /** Our pid and every ancestor of it. */
  readonly lineage: ReadonlySet<number>
  readonly exclude: ReadonlySet<number>
}

export const makeGuard = (
  lookup: (pid: number) => ProcessInfo | undefined,
  selfPid: number,
  exclude: ReadonlyArray<number> = []
): Guard => {
  const self = lookup(selfPid)
  const lineage = new Set<number>([selfPid])
  let current = self
  while (current !== undefined && current.ppid > 1 && !lineage.has(current.ppid)) {
    lineage.add(current.ppid)
    current = lookup(current.ppid)
  }
  return { selfPid, selfPgid: self?.pgid, selfSid: self?.sid, lineage, exclude: new Set(exclude) }
}

/** Never part of any tree: pid 1 (and the kernel's 0), ourselves, our ancestors. */
export const untouchable = (guard: Guard, pid: number): boolean => pid <= 1 || guard.lineage.has(pid)

/** Why a member must not be signalled, or undefined when it may be. */
export const refusal = (guard: Guard, info: ProcessInfo): "own" | "own-group" | "excluded" | undefined => {
  if (untouchable(guard, info.pid)) return "own"
  if (guard.selfPgid === undefined || info.pgid === guard.selfPgid) return "own-group"
  return guard.exclude.has(info.pid) ? "excluded" : undefined
}

/**
 * The processes of one tree, each by identity (pid + start time), gathered over repeated scans:
 *
 * - a process whose parent is a member (or the root) by identity;
 * - a process in a process group or session created by a member or the root (that id is the creator's
 *   pid, and the kernel does not reuse a pid while a group or session still carries it), so orphans
 *   reparented to init are still found while their group lives; never our own group or session.
 */
export interface Tracker {
  readonly rootPid: number
  /** The root's start time; undefined when the root was already gone at the first scan. */
  readonly rootStartTime: number | undefined
  readonly members: Map<number, number>
  /** Group and session ids created by the tree, with their creator's start time. */
  readonly owners: Map<number, number | undefined>
}

export const makeTracker = (
  table: ProcTable,
  guard: Guard,
  rootPid: number,
  rootStartTime?: number
): Tracker => {
  const rootStart = rootStartTime ?? table.get(rootPid)?.startTime
  const owners = new Map<number, number | undefined>()
  if (!untouchable(guard, rootPid)) owners.set(rootPid, rootStart)
  return { rootPid, rootStartTime: rootStart, members: new Map(), owners }
}

/** The root, when the pid is still held by the same process (zombie or not). */
export const rootOf = (tracker: Tracker, table: ProcTable): ProcessInfo | undefined => {
  const root = table.get(tracker.rootPid)
  return root !== undefined && root.startTime === tracker.rootStartTime ? root : undefined
}

const ownedId = (tracker: Tracker, table: ProcTable, guard: Guard, id: number): boolean => {
  if (id === guard.selfPgid || id === guard.selfSid || !tracker.owners.has(id)) return false
  const holder = table.get(id)
  return holder === undefined || holder.startTime === tracker.owners.get(id)
}

const childOfTree = (tracker: Tracker, table: ProcTable, info: ProcessInfo): boolean => {
  if (info.ppid === tracker.rootPid) return rootOf(tracker, table) !== undefined
  const start = tracker.members.get(info.ppid)
  return start !== undefined && table.get(info.ppid)?.startTime === start
}

/** Adds every process of `table` that belongs to the tree (to a fixed point); returns the new members. */
export const capture = (tracker: Tracker, table: ProcTable, guard: Guard): ReadonlyArray<ProcessInfo> => {
  const added: Array<ProcessInfo> = []
  let changed = true
  while (changed) {
    changed = false
    for (const info of table.values()) {
      if (info.pid === tracker.rootPid || isGone(info) || untouchable(guard, info.pid)) continue
      if (tracker.members.get(info.pid) === info.startTime) continue
      const belongs = childOfTree(tracker, table, info) ||
        ownedId(tracker, table, guard, info.pgid) ||
        ownedId(tracker, table, guard, info.sid)
      if (!belongs) continue
      tracker.members.set(info.pid, info.startTime)
      if (refusal(guard, info) === undefined) tracker.owners.set(info.pid, info.startTime)
      added.push(info)
      changed = true
    }
  }
  return added
}

/** Members (not the root) still alive with the identity they were captured with. */
export const liveMembers = (tracker: Tracker, table: ProcTable): ReadonlyArray<ProcessInfo> => {
  const live: Array<ProcessInfo> = []
  for (const [pid, start] of tracker.members) {
    const info = table.get(pid)
    if (info !== undefined && info.startTime === start && !isGone(info)) live.push(info)
  }
  return live
}

/** Children before their parents: by depth below the topmost member of each chain, deepest first. */
export const deepestFirst = (infos: ReadonlyArray<ProcessInfo>): ReadonlyArray<ProcessInfo> => {
  const byPid = new Map(infos.map((info) => [info.pid, info]))
  const depth = (info: ProcessInfo): number => {
    let d = 0
    const seen = new Set<number>([info.pid])
    let parent = byPid.get(info.ppid)
    while (parent !== undefined && !seen.has(parent.pid)) {
      seen.add(parent.pid)
      d++
      parent = byPid.get(parent.ppid)
    }
    return d
  }
  return infos.map((info) => [depth(info), info] as const).sort((a, b) => b[0] - a[0]).map(([, info]) => info)
}
