/**
 * How one session's process tree is held: its own cgroup where cgroup v2 is writable (close ends with
 * `cgroup.kill`), the identity-fenced sweep otherwise; either way tracked by the host-exit guard, and
 * signals only ever reach groups that are not our own.
 *
 * @since 0.1.0
 */
import type { PtyBackend } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as Teardown from "./Teardown.js"

/**
 * A session's containment, before and after its program starts.
 *
 * @since 0.1.0
 */
export interface Container {
  readonly kind: PtyBackend.Containment
  /** The argv that starts the program inside the containment. */
  readonly wrap: (
    file: string,
    args: ReadonlyArray<string>
  ) => { readonly file: string; readonly args: ReadonlyArray<string> }
  /** Track the started program (host-exit guard) and get the teardown of its whole tree. */
  readonly track: (
    pid: number
  ) => Effect.Effect<{ readonly terminate: Effect.Effect<PtyBackend.TeardownReport> }, never, Scope.Scope>
}

/**
 * Set up the containment of a new session: a cgroup when available, the sweep otherwise.
 *
 * @since 0.1.0
 */
export const contain = (
  label: string,
  graceMs: number
): Effect.Effect<Container, never, Teardown.Cgroups | Teardown.HostExit | Scope.Scope> =>
  Effect.gen(function*() {
    const cgroups = yield* Teardown.Cgroups
    const hostExit = yield* Teardown.HostExit
    const root = yield* cgroups.available
    const cgroup = Option.isSome(root) ? yield* root.value.create(label) : Option.none()
    return {
      kind: Option.isSome(cgroup) ? "cgroup" : "sweep",
      wrap: Option.isSome(cgroup) ? cgroup.value.wrap : (file, args) => ({ file, args }),
      track: (pid) =>
        Effect.gen(function*() {
          const startTime = Option.getOrUndefined(yield* Teardown.startTimeOf(pid))
          if (startTime !== undefined) {
            yield* hostExit.track({
              rootPid: pid,
              startTime,
              ...(Option.isSome(cgroup) ? { cgroupPath: cgroup.value.path } : {})
            })
          }
          const terminate = Option.isSome(cgroup)
            ? cgroup.value.terminate({ graceMs, rootPid: pid })
            : Teardown.sweep(pid, { graceMs, includeRoot: true, rootStartTime: startTime })
          return { terminate }
        })
    } satisfies Container
  })

const ownGroup = (): number | undefined => {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "latin1")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])
  } catch {
    return undefined
  }
}

/**
 * Signal a process group. Our own group and pid 1 are never a target; `false` when the group is gone.
 *
 * @since 0.1.0
 */
export const signalGroup = (pgid: number, signal: NodeJS.Signals): Effect.Effect<boolean> =>
  Effect.sync(() => {
    if (pgid <= 1 || pgid === process.pid || pgid === ownGroup()) return false
    try {
      process.kill(-pgid, signal)
      return true
    } catch {
      return false
    }
  })
