/**
 * Ending a session's whole process tree (DESIGN §8): a cgroup v2 per session where that is writable
 * (close ends with `cgroup.kill`, which also catches `setsid` + double-fork daemons), the identity-fenced
 * sweep of the descendants otherwise, and a guard that kills every tracked tree when the host exits.
 * Nothing here ever signals our own process, its ancestors, its process group or pid 1.
 *
 * @since 0.1.0
 */
import type { PtyBackend } from "@agent-terminal/core"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as cgroup from "./internal/teardown/cgroup.js"
import * as hostExit from "./internal/teardown/hostExit.js"
import { identityHolds, nodeProcReader, nodeSignaller, parseStat } from "./internal/teardown/procTable.js"
import * as internalSweep from "./internal/teardown/sweep.js"
import { refusal } from "./internal/teardown/treeTracker.js"

const nodeEnv = (): internalSweep.TreeEnv => ({
  reader: nodeProcReader,
  signal: nodeSignaller,
  selfPid: process.pid
})

/**
 * Options of the sweep.
 *
 * @since 0.1.0
 */
export type SweepOptions = internalSweep.SweepOptions

/**
 * The identity-fenced sweep of `rootPid`'s tree (containment `"sweep"`): capture the descendants by
 * parent links and by the process groups and sessions the tree created (so orphans are found), each with
 * its start time; TERM them children first; wait only while one of them handles TERM; rescan for forks;
 * KILL; verify (zombies count as gone); then the root. Before every signal the target's start time is
 * read again, so a reused pid is never signalled. Non-empty `survivors` is the caller's `CleanupFailed`;
 * calling again retries from a fresh capture.
 *
 * @since 0.1.0
 */
export const sweep = (rootPid: number, options: SweepOptions): Effect.Effect<PtyBackend.TeardownReport> =>
  Effect.suspend(() => internalSweep.sweep(nodeEnv(), rootPid, options)).pipe(
    Effect.withSpan("Teardown.sweep", { attributes: { rootPid } })
  )

/**
 * A process's start time since boot, in clock ticks (`/proc/<pid>/stat` field 22): with the pid, its
 * identity. Take it right after spawning, for `SweepOptions.rootStartTime` and `TrackedTree.startTime`.
 *
 * @since 0.1.0
 */
export const startTimeOf = (pid: number): Effect.Effect<Option.Option<number>> =>
  Effect.sync(() => {
    const text = nodeProcReader.stat(pid)
    return Option.fromNullable(text === undefined ? undefined : parseStat(text)?.startTime)
  })

/**
 * SIGKILL one process, only while `pid` still belongs to the process that started at `startTime` (a
 * recycled pid is never hit), and never ourselves, an ancestor, our own process group or pid 1. True when
 * it was signalled.
 *
 * @since 0.1.0
 */
export const killIfSame = (pid: number, startTime: number): boolean => {
  const env = nodeEnv()
  const text = env.reader.stat(pid)
  const info = text === undefined ? undefined : parseStat(text)
  if (info === undefined || !identityHolds(env.reader, pid, startTime)) return false
  if (refusal(internalSweep.guardFromReader(env), info) !== undefined) return false
  env.signal(pid, "SIGKILL")
  return true
}

/**
 * Options of a graceful cgroup teardown.
 *
 * @since 0.1.0
 */
export interface CgroupTerminateOptions {
  /** How long the members other than the root may take to act on TERM (only while one handles it). */
  readonly graceMs: number
  /** The session's program: TERMed after the others, KILLed with everything by `cgroup.kill`. */
  readonly rootPid?: number | undefined
  /** The root's grace, only used when it handles TERM. Default: `min(graceMs, 500)`. */
  readonly rootGraceMs?: number | undefined
  /** How long after `cgroup.kill` the cgroup may take to empty. Default 2000. */
  readonly settleMs?: number | undefined
}

/**
 * A session's own cgroup v2. Removed (after a kill) when the scope that created it closes.
 *
 * @since 0.1.0
 */
export interface SessionCgroup {
  /** The cgroup's directory, e.g. `/sys/fs/cgroup/unified/agent-terminal-812/bash-1`. */
  readonly path: string
  /** The resource limits written into it (absent: not applied). */
  readonly limits: PtyBackend.ResourceLimits
  /**
   * The argv that runs `file args` inside this cgroup: `/bin/sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"'`.
   * The sh joins the cgroup, then execs the program, so the spawned pid is the program's pid and nothing
   * it forks starts outside; if joining fails the program does not start.
   */
  readonly wrap: (
    file: string,
    args: ReadonlyArray<string>
  ) => { readonly file: string; readonly args: ReadonlyArray<string> }
  /** The pids in the cgroup now (`cgroup.procs`). */
  readonly pids: Effect.Effect<ReadonlyArray<number>>
  /** `cgroup.kill` at once, then wait until it is empty; survivors are the pids still listed. */
  readonly kill: Effect.Effect<PtyBackend.TeardownReport>
  /** Children first: TERM the members (root last) with a grace only while one handles TERM, then `cgroup.kill`. */
  readonly terminate: (options: CgroupTerminateOptions) => Effect.Effect<PtyBackend.TeardownReport>
}

/**
 * The directory under which this host creates session cgroups (`<own cgroup>/agent-terminal-<pid>`).
 *
 * @since 0.1.0
 */
export interface CgroupRoot {
  readonly path: string
  /** The controllers enabled for the session cgroups (`pids`, `memory`), where the host delegates them. */
  readonly controllers: ReadonlyArray<"pids" | "memory">
  /**
   * A new empty session cgroup, with the requested limits written where the controllers allow; `None`
   * (reason logged at debug) if it cannot be created: use the sweep.
   */
  readonly create: (
    label: string,
    limits?: PtyBackend.ResourceLimits
  ) => Effect.Effect<Option.Option<SessionCgroup>, never, Scope.Scope>
}

/**
 * Whether sessions can get their own cgroup here. `available` probes once (the cgroup2 mount, our own
 * cgroup, a writable child with `cgroup.kill`, a process moved into it) and caches the answer; `None`
 * (reason logged at debug: no cgroup2, EACCES, EROFS, Linux < 5.14) means: use the sweep.
 *
 * @since 0.1.0
 */
export class Cgroups extends Context.Tag("@agent-terminal/node/Cgroups")<
  Cgroups,
  { readonly available: Effect.Effect<Option.Option<CgroupRoot>> }
>() {}

/**
 * The real probe; the parent directory it created is removed when the layer is released.
 *
 * @since 0.1.0
 */
export const layerCgroups: Layer.Layer<Cgroups> = Layer.scoped(
  Cgroups,
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const probed = yield* Deferred.make<Option.Option<CgroupRoot>>()
    let started = false
    yield* Effect.addFinalizer(() =>
      Deferred.poll(probed).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.void,
          onSome: Effect.flatMap(Option.match({
            onNone: () => Effect.void,
            onSome: (root) => Effect.sync(() => cgroup.removeCgroupSync(root.path))
          }))
        }))
      )
    )
    // The probe runs once, in a fiber of its own: a first caller interrupted while it runs (an open under a
    // caller's timeout) stops waiting, and the probe still completes for everyone (a memoized effect run in
    // the caller's fiber, `Effect.cached`, keeps that caller's interruption as its result for good).
    const start = Effect.suspend(() => {
      if (started) return Effect.void
      started = true
      return Effect.asVoid(Effect.forkIn(Effect.intoDeferred(cgroup.probe(nodeEnv()), probed), scope))
    })
    return Cgroups.of({ available: Effect.zipRight(Effect.uninterruptible(start), Deferred.await(probed)) })
  })
)

/**
 * Never a cgroup: every session uses the sweep.
 *
 * @since 0.1.0
 */
export const layerCgroupsDisabled: Layer.Layer<Cgroups> = Layer.succeed(
  Cgroups,
  Cgroups.of({ available: Effect.succeed(Option.none()) })
)

/**
 * A tree the host-exit guard kills: its root by identity, and its cgroup if it has one.
 *
 * @since 0.1.0
 */
export interface TrackedTree {
  readonly rootPid: number
  /** The root's `startTimeOf`, taken at spawn. */
  readonly startTime: number
  readonly cgroupPath?: string | undefined
  /** The tree's environment marker (`NAME=value`, see `TREE_MARKER`): finds what left it (the reaper). */
  readonly marker?: string | undefined
}

/**
 * SIGKILL a tree synchronously (what the host-exit guard runs): `cgroup.kill` when it has a cgroup, and
 * KILL rounds over its identity-checked descendants and root for at most ~100 ms. Returns the pids signalled.
 *
 * @since 0.1.0
 */
export const killTreeSync = (tree: TrackedTree): ReadonlyArray<number> => hostExit.killTreesSync(nodeEnv(), [tree])

/**
 * Kills every tracked tree when the host exits (`exit`, uncaught exception, SIGINT, SIGTERM, SIGHUP). The
 * process listeners exist only while a tree is tracked; after a signal, if no other listener is left, the
 * signal is raised again so the host still ends the default way.
 *
 * @since 0.1.0
 */
export class HostExit extends Context.Tag("@agent-terminal/node/HostExit")<
  HostExit,
  {
    /** Tracked until the scope closes. */
    readonly track: (tree: TrackedTree) => Effect.Effect<void, never, Scope.Scope>
  }
>() {}

/**
 * The guard on the real `process`.
 *
 * @since 0.1.0
 */
export const layerHostExit: Layer.Layer<HostExit> = Layer.sync(HostExit, () => {
  const registry = hostExit.makeRegistry(hostExit.nodeHost, (trees) => {
    hostExit.killTreesSync(nodeEnv(), trees)
  })
  return HostExit.of({ track: registry.track })
})

/**
 * Tracks nothing (tests that must not touch `process` listeners).
 *
 * @since 0.1.0
 */
export const layerHostExitNoop: Layer.Layer<HostExit> = Layer.succeed(
  HostExit,
  HostExit.of({ track: () => Effect.void })
)

/**
 * Both real services.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Cgroups | HostExit> = Layer.merge(layerCgroups, layerHostExit)

/**
 * A spawned program under its containment: `terminate` ends its whole tree (children first), retryable.
 *
 * @since 0.1.0
 */
export interface ContainedProcess {
  readonly terminate: Effect.Effect<PtyBackend.TeardownReport>
}

/**
 * How one session is held, chosen before it is spawned: its own cgroup where available, else the sweep.
 * Spawn `wrap(file, args)`, then `track(pid)`: the tree is guarded against the host's exit until the scope
 * closes.
 *
 * @since 0.1.0
 */
export interface SessionContainment {
  readonly kind: "cgroup" | "sweep"
  /** The resource limits that hold the tree (only with a cgroup that has the controllers). */
  readonly limits: PtyBackend.ResourceLimits | undefined
  /**
   * Variables the program must be started with: a per-tree marker every descendant inherits, so the sweep
   * also finds a daemon that left the tree before any scan.
   */
  readonly env: Readonly<Record<string, string>>
  readonly cgroup: Option.Option<SessionCgroup>
  readonly wrap: (
    file: string,
    args: ReadonlyArray<string>
  ) => { readonly file: string; readonly args: ReadonlyArray<string> }
  readonly track: (pid: number) => Effect.Effect<ContainedProcess, never, Scope.Scope>
}

/**
 * The name of the per-tree marker in a contained program's environment.
 *
 * @since 0.1.0
 */
export const TREE_MARKER = "AGENT_TERMINAL_TREE"

/**
 * The name of the owner marker in a contained program's environment: `<pid>:<start time>` of the process
 * that owns the tree, inherited by every descendant, so the next start can find (and reap) what an owner
 * that died left behind, fenced by the owner's identity (a reused pid is another process).
 *
 * @since 0.2.0
 */
export const OWNER_MARKER = "AGENT_TERMINAL_OWNER"

/**
 * This process as an owner: `<pid>:<start time>`, the value of `OWNER_MARKER` in its trees.
 *
 * @since 0.2.0
 */
export const ownerMark = (): string => {
  const text = nodeProcReader.stat(process.pid)
  return `${process.pid}:${(text === undefined ? undefined : parseStat(text)?.startTime) ?? 0}`
}

const treeMarker = (): string => {
  const bytes = new Uint8Array(12)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
}

/**
 * The glue a pty backend needs: a session cgroup if possible (removed when the scope closes) with the
 * requested `limits` where the host delegates the controllers, the host-exit guard, and a `terminate` that
 * uses the cgroup or the sweep with `graceMs` for TERM handlers.
 *
 * @since 0.1.0
 */
export const contain = (
  label: string,
  options: { readonly graceMs: number; readonly limits?: PtyBackend.ResourceLimits | undefined }
): Effect.Effect<SessionContainment, never, Cgroups | HostExit | Scope.Scope> =>
  Effect.gen(function*() {
    const guard = yield* HostExit
    const root = yield* Effect.flatMap(Cgroups, (cgroups) => cgroups.available)
    const session = Option.isSome(root)
      ? yield* root.value.create(label, options.limits ?? {})
      : Option.none<SessionCgroup>()
    const marker = treeMarker()
    const track = (pid: number) =>
      Effect.gen(function*() {
        const startTime = yield* startTimeOf(pid)
        if (Option.isSome(startTime)) {
          yield* guard.track({
            rootPid: pid,
            startTime: startTime.value,
            cgroupPath: Option.getOrUndefined(Option.map(session, (s) => s.path)),
            marker: `${TREE_MARKER}=${marker}`
          })
        }
        const terminate = Option.match(session, {
          onNone: () =>
            sweep(pid, {
              graceMs: options.graceMs,
              includeRoot: true,
              rootStartTime: Option.getOrUndefined(startTime),
              marker: `${TREE_MARKER}=${marker}`
            }),
          onSome: (s) => s.terminate({ graceMs: options.graceMs, rootPid: pid })
        })
        return { terminate }
      })
    return {
      kind: Option.isSome(session) ? "cgroup" : "sweep",
      limits: Option.getOrUndefined(Option.map(session, (s) => s.limits)),
      env: { [TREE_MARKER]: marker, [OWNER_MARKER]: ownerMark() },
      cgroup: session,
      wrap: Option.match(session, {
        onNone: () => (file: string, args: ReadonlyArray<string>) => ({ file, args }),
        onSome: (s) => s.wrap
      }),
      track
    } satisfies SessionContainment
  })
