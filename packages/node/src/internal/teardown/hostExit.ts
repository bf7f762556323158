import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { TrackedTree } from "../../Teardown.js"
import { killCgroupSync, readProcs, removeCgroupSync, unpopulated } from "./cgroup.js"
import { identityHolds, readTable } from "./procTable.js"
import type { TreeEnv } from "./sweep.js"
import { capture, liveMembers, makeGuard, makeTracker, refusal, rootOf, untouchable } from "./treeTracker.js"

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * The wall clock, for the synchronous spins (`sleepSync`) of exit handlers and the reaper: they block the event
 * loop, so no other clock (a `TestClock`) could advance while they wait on it.
 */
export const wallClockMs = (): number => Date.now()

const KILL_ROUNDS_MS = 100
const CGROUP_EMPTY_MS = 100

/**
 * SIGKILL to whole trees, synchronously (for `exit` handlers, where nothing asynchronous runs any more):
 * `cgroup.kill` for every tree that has a cgroup, then KILL rounds over the captured descendants and roots
 * (identity-fenced, one `/proc` scan per round for all trees) until none is alive or ~100 ms passed, then
 * the emptied cgroups are removed. Returns the pids signalled, roots included.
 */
export const killTreesSync = (
  env: TreeEnv,
  trees: ReadonlyArray<TrackedTree>,
  killRoundsMs: number = KILL_ROUNDS_MS
): ReadonlyArray<number> => {
  const first = readTable(env.reader)
  const guard = makeGuard((pid) => first.get(pid), env.selfPid)
  const holdsUs = (dir: string) => (readProcs(dir) ?? []).some((pid) => untouchable(guard, pid))
  const cgroups = trees.flatMap((tree) =>
    tree.cgroupPath !== undefined && !holdsUs(tree.cgroupPath) && killCgroupSync(tree.cgroupPath)
      ? [tree.cgroupPath]
      : []
  )
  const trackers = trees.filter((tree) => !untouchable(guard, tree.rootPid))
    .map((tree) => makeTracker(first, guard, tree.rootPid, tree.startTime))
  const signalled = new Set<number>()
  const deadline = wallClockMs() + killRoundsMs
  for (let table = first;; table = readTable(env.reader)) {
    const targets = trackers.flatMap((tracker) => {
      capture(tracker, table, guard)
      const root = rootOf(tracker, table)
      return root === undefined ? liveMembers(tracker, table) : [...liveMembers(tracker, table), root]
    }).filter((info) => refusal(guard, info) === undefined && identityHolds(env.reader, info.pid, info.startTime))
    if (targets.length === 0) break
    for (const info of targets) {
      env.signal(info.pid, "SIGKILL")
      signalled.add(info.pid)
    }
    // The deadline bounds the rescans for forks, never the first round: a host descheduled for longer than
    // the deadline (a loaded machine) must still kill what it found.
    if (wallClockMs() >= deadline) break
    sleepSync(2)
  }
  const emptyBy = wallClockMs() + CGROUP_EMPTY_MS
  for (const dir of cgroups) {
    while (!unpopulated(dir) && wallClockMs() < emptyBy) sleepSync(2)
    removeCgroupSync(dir)
  }
  return [...signalled]
}

/** The events the guard listens to. */
export type HostEvent = "exit" | HostSignal

/** The signals whose default action ends the host without an `exit` event. */
export type HostSignal = "SIGINT" | "SIGTERM" | "SIGHUP"

const SIGNALS: ReadonlyArray<HostSignal> = ["SIGINT", "SIGTERM", "SIGHUP"]

/** The part of `process` the guard uses (a fake in unit tests). */
export interface HostProcess {
  readonly pid: number
  readonly on: (event: HostEvent, listener: (signal: HostSignal) => void) => void
  readonly off: (event: HostEvent, listener: (signal: HostSignal) => void) => void
  readonly listenerCount: (event: HostEvent) => number
  readonly kill: (pid: number, signal: HostSignal) => void
}

export const nodeHost: HostProcess = {
  get pid() {
    return process.pid
  },
  on: (event, listener) => {
    process.on(event, listener)
  },
  off: (event, listener) => {
    process.off(event, listener)
  },
  listenerCount: (event) => process.listenerCount(event),
  kill: (pid, signal) => {
    process.kill(pid, signal)
  }
}

/** The registry of live trees behind `HostExit`. */
export interface Registry {
  readonly track: (tree: TrackedTree) => Effect.Effect<void, never, Scope.Scope>
  readonly size: () => number
}

/**
 * Kills every tracked tree when the host exits. Listeners exist only while something is tracked. On a
 * signal our listeners step aside first; if no other listener is left the signal is raised again, so its
 * default action (ending the host) still happens.
 */
export const makeRegistry = (
  host: HostProcess,
  killTrees: (trees: ReadonlyArray<TrackedTree>) => void,
  // false: the program ends its trees itself on a signal (the daemon closes them gracefully); `exit` still kills
  options: { readonly signals?: boolean } = {}
): Registry => {
  const trees = new Set<{ readonly tree: TrackedTree }>()
  let onExitInstalled = false
  let onSignalInstalled = false
  const killAll = () => {
    try {
      killTrees([...trees].map((entry) => entry.tree))
    } catch {
      // nothing may escape an exit handler
    }
  }
  const onExit = () => killAll()
  const onSignal = (signal: HostSignal) => {
    killAll()
    removeSignalListeners()
    if (host.listenerCount(signal) === 0) {
      removeExitListener()
      host.kill(host.pid, signal)
    }
  }
  const removeSignalListeners = () => {
    if (!onSignalInstalled) return
    onSignalInstalled = false
    for (const signal of SIGNALS) host.off(signal, onSignal)
  }
  const removeExitListener = () => {
    if (!onExitInstalled) return
    onExitInstalled = false
    host.off("exit", onExit)
  }
  const install = () => {
    if (!onExitInstalled) {
      onExitInstalled = true
      host.on("exit", onExit)
    }
    if (!onSignalInstalled && options.signals !== false) {
      onSignalInstalled = true
      for (const signal of SIGNALS) host.on(signal, onSignal)
    }
  }
  return {
    track: (tree) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const entry = { tree }
          trees.add(entry)
          install()
          return entry
        }),
        (entry) =>
          Effect.sync(() => {
            trees.delete(entry)
            if (trees.size > 0) return
            removeSignalListeners()
            removeExitListener()
          })
      ).pipe(Effect.asVoid),
    size: () => trees.size
  }
}
