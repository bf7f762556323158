import type { ProcessInspector, PtyBackend } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import {
  handlesTerm,
  identityHolds,
  isGone,
  parseStat,
  type ProcReader,
  type ProcTable,
  readTable,
  type Signaller,
  type TreeSignal
} from "./procTable.js"
import {
  capture,
  deepestFirst,
  type Guard,
  liveMembers,
  makeGuard,
  makeTracker,
  refusal,
  rootOf,
  untouchable
} from "./treeTracker.js"

type ProcessInfo = ProcessInspector.ProcessInfo

/** Where teardown reads processes and sends signals, and who "we" are. */
export interface TreeEnv {
  readonly reader: ProcReader
  readonly signal: Signaller
  readonly selfPid: number
}

/** One scan of a tree: its live members split by what may be done to them. */
export interface TreeView {
  /** Live members other than the root that may be signalled. */
  readonly children: ReadonlyArray<ProcessInfo>
  /** The live root, when it may be signalled. */
  readonly root: ProcessInfo | undefined
  /** Live members (the root included) that must not be signalled (our own group): they count as survivors. */
  readonly refused: ReadonlyArray<number>
}

export interface EngineOptions {
  readonly graceMs: number
  readonly rootGraceMs: number
  readonly includeRoot: boolean
  /** How long KILLed processes get to die before they are reported as survivors. */
  readonly settleMs: number
  /** The atomic end of a contained tree (`cgroup.kill`), run after the TERM phases instead of KILL rounds. */
  readonly finish?: Effect.Effect<void>
}

/** A process as a key: its pid and start time (a recycled pid is another process). */
const identityOf = (info: ProcessInfo): string => `${info.pid}:${info.startTime}`

const POLL_MS = 10
const SETTLE_POLL_MS = 5
const FIRST_SETTLE_POLL_MS = 2

/**
 * The rescans after a KILL: most KILLed processes are gone within a couple of milliseconds, so the first
 * look comes early, then every `SETTLE_POLL_MS`, for at most `settleMs`.
 */
const settleSchedule = (settleMs: number) =>
  Schedule.fromDelay(FIRST_SETTLE_POLL_MS).pipe(
    Schedule.andThen(Schedule.spaced(SETTLE_POLL_MS)),
    Schedule.upTo(settleMs)
  )

/** A guard built from individual stat reads (for scans that do not read the whole table). */
export const guardFromReader = (env: TreeEnv, exclude?: ReadonlyArray<number>): Guard =>
  makeGuard(
    (pid) => {
      const text = env.reader.stat(pid)
      return text === undefined ? undefined : parseStat(text)
    },
    env.selfPid,
    exclude
  )

/**
 * Children first: TERM the children that handle TERM (deepest first) and KILL the rest at once (for them
 * TERM would end the same way, one signal and one rescan later), wait only while one of them handles TERM,
 * KILL what is left (or run `finish`), then the same for the root. Every signal is fenced by the target's
 * identity, and each process gets each signal once.
 */
export const terminateTree = (
  env: TreeEnv,
  scan: () => TreeView,
  containment: PtyBackend.Containment,
  options: EngineOptions
): Effect.Effect<PtyBackend.TeardownReport> =>
  Effect.gen(function*() {
    const signalled = new Set<number>()
    const sent = new Set<string>()
    const handlers = new Map<string, boolean>()
    /** Whether it is worth waiting for this process to act on TERM (read once per process). */
    const handles = (info: ProcessInfo): boolean => {
      const key = identityOf(info)
      let known = handlers.get(key)
      if (known === undefined) {
        known = handlesTerm(env.reader, info.pid)
        handlers.set(key, known)
      }
      return known
    }
    const send = (info: ProcessInfo, signal: TreeSignal, isRoot: boolean) => {
      const key = `${identityOf(info)}:${signal}`
      if (sent.has(key)) return
      sent.add(key)
      if (!identityHolds(env.reader, info.pid, info.startTime)) return
      env.signal(info.pid, signal)
      if (!isRoot) signalled.add(info.pid)
    }
    const term = (infos: ReadonlyArray<ProcessInfo>, isRoot: boolean) => {
      for (const info of deepestFirst(infos)) {
        if (!handles(info)) {
          // With no finish step (cgroup.kill) to come, the KILL is due now; otherwise the finish ends it.
          if (options.finish === undefined) send(info, "SIGKILL", isRoot)
          continue
        }
        send(info, "SIGTERM", isRoot)
        if (info.state === "T") send(info, "SIGCONT", isRoot)
      }
    }
    const targets = (view: TreeView, withRoot: boolean): ReadonlyArray<ProcessInfo> =>
      withRoot && view.root !== undefined ? [...view.children, view.root] : view.children
    // A phase may start from the view the previous phase ended with (a scan of the whole table is the
    // expensive part); every phase still ends on a fresh scan, so forks made meanwhile are found.
    const settle = (withRoot: boolean, from?: TreeView) =>
      Effect.suspend(() => {
        let fresh: TreeView | undefined = from ?? scan()
        const look = Effect.sync(() => {
          const view = fresh ?? scan()
          fresh = undefined
          return view
        })
        // KILL what each look finds, look again after each pause of the schedule, until nothing is left or
        // `settleMs` has passed (what the last look found is then a survivor).
        const kill = (view: TreeView) =>
          Effect.sync(() => {
            for (const info of targets(view, withRoot)) send(info, "SIGKILL", info === view.root)
          })
        return Effect.repeat(look, {
          schedule: Schedule.passthrough(settleSchedule(options.settleMs).pipe(Schedule.tapInput(kill))),
          until: (view) => targets(view, withRoot).length === 0
        })
      })
    const graceWhile = (
      graceMs: number,
      waiting: (view: TreeView) => boolean,
      onScan: (view: TreeView) => void,
      from?: TreeView
    ) =>
      Effect.suspend(() => {
        let first = true
        const look = Effect.sync(() => {
          const view = first && from !== undefined ? from : scan()
          first = false
          onScan(view)
          return view
        })
        return Effect.repeat(look, {
          schedule: Schedule.passthrough<number, TreeView, never>(
            Schedule.spaced(POLL_MS).pipe(Schedule.upTo(graceMs))
          ),
          until: (view) => !waiting(view)
        })
      })

    let view: TreeView | undefined
    if (options.graceMs > 0) {
      view = yield* graceWhile(
        options.graceMs,
        (current) => current.children.some(handles),
        (current) => term(current.children, false)
      )
    }
    if (options.finish === undefined) {
      // A root that would not act on TERM gets its KILL right after its descendants' (still children first),
      // and one rescan verifies them all.
      const rootNext = view ?? scan()
      const rootToo = options.includeRoot && rootNext.root !== undefined && !handles(rootNext.root)
      view = yield* settle(rootToo, rootNext)
    }
    if (options.includeRoot && options.rootGraceMs > 0) {
      view = yield* graceWhile(
        options.rootGraceMs,
        (current) => current.root !== undefined && handles(current.root),
        (current) => {
          term(current.children, false)
          if (current.root !== undefined) term([current.root], true)
        },
        view
      )
    }
    if (options.finish !== undefined) {
      for (const info of (view ?? scan()).children) signalled.add(info.pid)
      yield* options.finish
      view = undefined
    }
    const last = yield* settle(options.includeRoot || options.finish !== undefined, view)
    const survivors = [...targets(last, options.includeRoot).map((info) => info.pid), ...last.refused]
    return { containment, signalled: signalled.size, survivors: [...new Set(survivors)].sort((a, b) => a - b) }
  })

/** Options of the sweep (re-exported as `Teardown.SweepOptions`). */
export interface SweepOptions {
  /** How long the descendants may take to act on TERM; the wait ends early once none handles TERM. 0: KILL at once. */
  readonly graceMs: number
  /** Also end the root (after its descendants). */
  readonly includeRoot: boolean
  /** Pids never to signal (and not reported as survivors). */
  readonly exclude?: ReadonlyArray<number> | undefined
  /**
   * The root's start time (`startTimeOf`) taken when it was spawned: if the pid now belongs to another
   * process, the tree is long gone and nothing is signalled. Default: whatever holds the pid now.
   */
  readonly rootStartTime?: number | undefined
  /** The root's grace, only used when it handles TERM. Default: `min(graceMs, 500)`. */
  readonly rootGraceMs?: number | undefined
  /** How long KILLed processes get to disappear before they count as survivors. Default 2000. */
  readonly settleMs?: number | undefined
  /**
   * An environment entry (`NAME=value`) that every process the tree started inherited: a process still
   * carrying it belongs to the tree wherever it went (a `setsid` + double-fork daemon that left before any
   * scan). Only a process that scrubbed its environment escapes.
   */
  readonly marker?: string | undefined
}

/** The identity-fenced sweep of `rootPid`'s tree; a fresh capture each call, so a retry starts over. */
export const sweep = (env: TreeEnv, rootPid: number, options: SweepOptions): Effect.Effect<PtyBackend.TeardownReport> =>
  Effect.suspend(() => {
    const first = readTable(env.reader)
    const guard = makeGuard((pid) => first.get(pid), env.selfPid, options.exclude)
    if (untouchable(guard, rootPid)) {
      return Effect.logWarning(`teardown: refusing to sweep pid ${rootPid} (ourselves, an ancestor or init)`).pipe(
        Effect.as<PtyBackend.TeardownReport>({ containment: "sweep", signalled: 0, survivors: [] })
      )
    }
    const tracker = makeTracker(first, guard, rootPid, options.rootStartTime)
    // A process's environment does not change after its exec: each one is read once per close, not per scan.
    const unmarked = new Set<string>()
    const marked = (table: ProcTable): boolean => {
      const environ = env.reader.environ
      if (options.marker === undefined || environ === undefined) return false
      let found = false
      for (const info of table.values()) {
        if (info.pid === rootPid || isGone(info) || untouchable(guard, info.pid)) continue
        if (tracker.members.get(info.pid) === info.startTime) continue
        const identity = identityOf(info)
        if (unmarked.has(identity)) continue
        if (!(environ(info.pid) ?? "").split("\0").includes(options.marker)) {
          unmarked.add(identity)
          continue
        }
        tracker.members.set(info.pid, info.startTime)
        if (refusal(guard, info) === undefined) tracker.owners.set(info.pid, info.startTime)
        found = true
      }
      return found
    }
    // The table read to build the guard is fresh enough for the first scan (a full read is the costly part).
    let fresh: ProcTable | undefined = first
    const scan = (): TreeView => {
      const table = fresh ?? readTable(env.reader)
      fresh = undefined
      capture(tracker, table, guard)
      if (marked(table)) capture(tracker, table, guard)
      const children: Array<ProcessInfo> = []
      const refused: Array<number> = []
      for (const info of liveMembers(tracker, table)) {
        const why = refusal(guard, info)
        if (why === undefined) children.push(info)
        else if (why !== "excluded") refused.push(info.pid)
      }
      const root = rootOf(tracker, table)
      const liveRoot = root === undefined || root.state === "Z" || root.state === "X" ? undefined : root
      const rootWhy = liveRoot === undefined ? undefined : refusal(guard, liveRoot)
      if (options.includeRoot && liveRoot !== undefined && rootWhy === "own-group") refused.push(liveRoot.pid)
      return { children, refused, root: rootWhy === undefined ? liveRoot : undefined }
    }
    return terminateTree(env, scan, "sweep", {
      graceMs: options.graceMs,
      rootGraceMs: options.rootGraceMs ?? Math.min(options.graceMs, 500),
      includeRoot: options.includeRoot,
      settleMs: options.settleMs ?? 2_000
    })
  })
