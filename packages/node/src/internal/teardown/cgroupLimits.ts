/**
 * Resource limits on session cgroups (cgroup v2 `pids.max`, `memory.max`). A controller can only be enabled
 * for the session cgroups when the server's own cgroup offers it to its children: it is listed in the
 * `cgroup.controllers` of our parent directory (`<own>/agent-terminal-<pid>`) once the own cgroup's
 * `cgroup.subtree_control` has it. We enable what is offered in our parent's `subtree_control`; a controller
 * the own cgroup has but does not offer is asked for once in its `subtree_control`, which the kernel allows
 * only where no process lives in it (the root cgroup is exempt) — it is never forced, and the server is
 * never moved. Every file access goes through `CgroupFs`, so the logic is tested on a fake tree.
 */
import * as path from "node:path"

/** The controllers limits use. */
export type Controller = "pids" | "memory"

export const wanted: ReadonlyArray<Controller> = ["pids", "memory"]

/** File access to a cgroup tree: a read (undefined when it fails), a write (the error code, or undefined). */
export interface CgroupFs {
  readonly read: (file: string) => string | undefined
  readonly write: (file: string, value: string) => string | undefined
}

const listed = (text: string | undefined): ReadonlyArray<string> =>
  (text ?? "").split(/\s+/).filter((word) => word !== "")

const offered = (fs: CgroupFs, dir: string): ReadonlyArray<Controller> => {
  const controllers = listed(fs.read(path.join(dir, "cgroup.controllers")))
  return wanted.filter((controller) => controllers.includes(controller))
}

/** What enabling found: the controllers now enabled for the session cgroups, and why the others are not. */
export interface Enabled {
  readonly controllers: ReadonlyArray<Controller>
  readonly missing: ReadonlyArray<{ readonly controller: Controller; readonly reason: string }>
}

/**
 * Enable `pids` and `memory` for the children of `parentDir` (ours, empty of processes), asking `ownDir`
 * (the server's cgroup, `parentDir`'s parent) once for a controller it has but does not pass down.
 */
export const enable = (fs: CgroupFs, ownDir: string, parentDir: string): Enabled => {
  const ownHas = offered(fs, ownDir)
  for (const controller of wanted) {
    if (ownHas.includes(controller) && !offered(fs, parentDir).includes(controller)) {
      fs.write(path.join(ownDir, "cgroup.subtree_control"), `+${controller}`)
    }
  }
  const available = offered(fs, parentDir)
  const missing: Array<{ controller: Controller; reason: string }> = []
  for (const controller of wanted) {
    if (!available.includes(controller)) {
      missing.push({
        controller,
        reason: ownHas.includes(controller)
          ? `the server's cgroup ${ownDir} has ${controller} but cannot pass it to its children while processes ` +
            "live in it (cgroup v2's no-internal-process rule)"
          : `the server's cgroup ${ownDir} has no ${controller} controller (none delegated here)`
      })
      continue
    }
    const failed = fs.write(path.join(parentDir, "cgroup.subtree_control"), `+${controller}`)
    if (failed !== undefined) missing.push({ controller, reason: `enabling ${controller} in ${parentDir}: ${failed}` })
  }
  const enabledNow = listed(fs.read(path.join(parentDir, "cgroup.subtree_control")))
  return {
    controllers: wanted.filter((controller) => enabledNow.includes(controller)),
    missing
  }
}

/** The limits asked for one session: 0 or absent means none; the memory default is half the host's memory. */
export interface Requested {
  readonly pidsMax?: number | undefined
  readonly memoryMaxBytes?: number | undefined
}

/** The limits written into a session cgroup (absent: not applied). */
export interface Applied {
  readonly pidsMax?: number
  readonly memoryMaxBytes?: number
}

/**
 * Write the requested limits into a new, still empty session cgroup, for the controllers enabled above it;
 * what was written is what applies.
 */
export const apply = (
  fs: CgroupFs,
  sessionDir: string,
  enabled: ReadonlyArray<Controller>,
  requested: Requested,
  defaultMemoryBytes: number
): Applied => {
  const pids = requested.pidsMax ?? 0
  const memory = requested.memoryMaxBytes ?? defaultMemoryBytes
  const pidsApplied = enabled.includes("pids") && pids > 0 &&
    fs.write(path.join(sessionDir, "pids.max"), String(pids)) === undefined
  const memoryApplied = enabled.includes("memory") && memory > 0 &&
    fs.write(path.join(sessionDir, "memory.max"), String(memory)) === undefined
  return {
    ...(pidsApplied ? { pidsMax: pids } : {}),
    ...(memoryApplied ? { memoryMaxBytes: memory } : {})
  }
}
