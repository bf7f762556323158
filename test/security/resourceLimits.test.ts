/**
 * Resource limits on the session's cgroup, for real (issue #15, Resources): the open result says which
 * limits apply, and where the host delegates the pids controller a fork bomb inside a session stays within
 * `pids.max` while the server and other sessions go on. Hosts that do not delegate it (this machine: cgroup
 * v2 holds only hugetlb, pids and memory are on v1) report no limits, and the bomb is not run.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { testConfig } from "../support/terminal.js"
import { makeWorkspace, openAs } from "./support.js"

const workspace = makeWorkspace("limits")

/** Whether the server's cgroup can hand the pids controller to the session cgroups it creates. */
const pidsDelegated = (): boolean => {
  try {
    const own = fs.readFileSync("/proc/self/cgroup", "utf8").split("\n").find((l) => l.startsWith("0::"))?.slice(3)
    const mount = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")).find(
      (fields) => fields[fields.indexOf("-") + 1] === "cgroup2"
    )
    if (own === undefined || mount === undefined) return false
    const dir = path.join(mount[4]!, own)
    const subtree = fs.readFileSync(path.join(dir, "cgroup.subtree_control"), "utf8")
    const controllers = fs.readFileSync(path.join(dir, "cgroup.controllers"), "utf8")
    return /\bpids\b/.test(subtree) || (own === "/" && /\bpids\b/.test(controllers))
  } catch {
    return false
  }
}

const delegated = pidsDelegated()

/** The session cgroup's file, found from the host through the shell's `/proc/<pid>/cgroup`. */
const cgroupFile = (pid: number, name: string): string | undefined => {
  const own = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n").find((l) => l.startsWith("0::"))?.slice(3)
  const mount = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")).find(
    (fields) => fields[fields.indexOf("-") + 1] === "cgroup2"
  )
  if (own === undefined || mount === undefined) return undefined
  try {
    return fs.readFileSync(path.join(mount[4]!, own, name), "utf8").trim()
  } catch {
    return undefined
  }
}

layer(NodeTerminal.layer({ ...testConfig, pidsMax: 64, memoryMaxBytes: 256 * 1024 * 1024 }), {
  excludeTestServices: true
})("limits reported by the open", (it) => {
  it.scoped("the open result says which limits apply: both where delegated, none where not", () =>
    Effect.gen(function*() {
      const { opened } = yield* openAs(Ids.OwnerId.make("limits-report"))
      if (delegated) {
        expect(opened.limits.pidsMax).toBe(64)
        expect(cgroupFile(opened.pid, "pids.max")).toBe("64")
      } else {
        expect(opened.limits).toEqual({})
      }
    }))
})

layer(NodeTerminal.layer({ ...testConfig, pidsMax: 256 }, { sandbox: { mode: "workspace-write", workspace } }), {
  excludeTestServices: true
})(
  "a fork bomb",
  (it) => {
    it.scoped.skipIf(!delegated)(
      `inside a session with pids.max stays within it; the server and another session go on${
        delegated ? "" : " (skipped: this host's cgroup v2 does not delegate the pids controller to the server)"
      }`,
      () =>
        Effect.gen(function*() {
          const service = yield* PtyService.PtyService
          const bomber = Ids.OwnerId.make("bomber")
          const { opened, send } = yield* openAs(bomber)
          expect(opened.limits.pidsMax).toBe(256)
          const bystander = yield* openAs(Ids.OwnerId.make("bystander"))
          const max = Number(cgroupFile(opened.pid, "pids.max"))
          expect(max).toBe(256)
          const bomb = yield* send("timeout 5 bash -c 'b() { b | b & }; b' 2>/dev/null; sleep 1; echo after", {
            timeoutMs: 20_000
          })
          const peak = Number(cgroupFile(opened.pid, "pids.peak") ?? cgroupFile(opened.pid, "pids.current"))
          expect(peak).toBeLessThanOrEqual(max)
          expect(Number(cgroupFile(opened.pid, "pids.events")?.match(/max (\d+)/)?.[1])).toBeGreaterThan(0)
          expect(bomb.output).toContain("after")
          expect((yield* bystander.send("echo alive")).output).toBe("alive")
          const closed = yield* service.close(bomber, Ids.SessionId.make(opened.sessionId))
          expect(closed.survivors).toEqual([])
        })
    )
  }
)
