/**
 * The resource-limit logic of session cgroups on a fake cgroup v2 tree that keeps the kernel's rules: a
 * cgroup's `cgroup.controllers` is its parent's `cgroup.subtree_control`; a controller can be enabled in
 * `subtree_control` only when available, and not in a non-root cgroup that holds processes (the
 * no-internal-process rule); `pids.max` / `memory.max` exist only where the parent enabled the controller.
 * The real tree of this host is used by test/security/limits.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
import type { CgroupFs } from "../src/internal/teardown/cgroupLimits.js"
import { apply, enable } from "../src/internal/teardown/cgroupLimits.js"

interface Node {
  readonly subtree: Set<string>
  readonly procs: Array<number>
  readonly files: Map<string, string>
}

const fakeTree = (options: {
  readonly own: string
  readonly rootControllers: ReadonlyArray<string>
  readonly ownIsRoot?: boolean
  readonly ownSubtree?: ReadonlyArray<string>
  readonly parentOfOwnSubtree?: ReadonlyArray<string>
}) => {
  const nodes = new Map<string, Node>()
  const node = (dir: string): Node => {
    let found = nodes.get(dir)
    if (found === undefined) {
      found = { subtree: new Set(), procs: [], files: new Map() }
      nodes.set(dir, found)
    }
    return found
  }
  const own = node(options.own)
  own.procs.push(4242)
  for (const c of options.ownSubtree ?? []) own.subtree.add(c)
  const above = path.dirname(options.own)
  for (const c of options.parentOfOwnSubtree ?? options.rootControllers) node(above).subtree.add(c)
  const available = (dir: string): ReadonlyArray<string> =>
    options.ownIsRoot === true && dir === options.own ? options.rootControllers : [...node(path.dirname(dir)).subtree]
  const isRoot = (dir: string) => options.ownIsRoot === true && dir === options.own
  const writes: Array<string> = []
  const fs: CgroupFs = {
    read: (file) => {
      const dir = path.dirname(file)
      switch (path.basename(file)) {
        case "cgroup.controllers":
          return available(dir).join(" ") + "\n"
        case "cgroup.subtree_control":
          return [...node(dir).subtree].join(" ") + "\n"
        default:
          return node(dir).files.get(path.basename(file))
      }
    },
    write: (file, value) => {
      writes.push(`${file}=${value}`)
      const dir = path.dirname(file)
      const name = path.basename(file)
      if (name === "cgroup.subtree_control") {
        const controller = value.replace(/^\+/, "")
        if (!available(dir).includes(controller)) return "ENOENT"
        if (node(dir).procs.length > 0 && !isRoot(dir)) return "EBUSY"
        node(dir).subtree.add(controller)
        return undefined
      }
      const controller = name.split(".")[0]!
      if (!node(path.dirname(dir)).subtree.has(controller)) return "ENOENT"
      node(dir).files.set(name, value)
      return undefined
    }
  }
  return { fs, node, writes }
}

const own = "/sys/fs/cgroup/user.slice/server.scope"
const parent = `${own}/agent-terminal-4242`
const session = `${parent}/bash-1`

describe("enabling the controllers for session cgroups", () => {
  it("in the root cgroup (a VM or CI runner as root), both are enabled on the way down and limits apply", () => {
    const tree = fakeTree({ own: "/sys/fs/cgroup", rootControllers: ["cpu", "memory", "pids"], ownIsRoot: true })
    const enabled = enable(tree.fs, "/sys/fs/cgroup", "/sys/fs/cgroup/agent-terminal-4242")
    expect(enabled).toEqual({ controllers: ["pids", "memory"], missing: [] })
    const applied = apply(tree.fs, "/sys/fs/cgroup/agent-terminal-4242/bash-1", enabled.controllers, {
      pidsMax: 64,
      memoryMaxBytes: 1 << 30
    }, 999)
    expect(applied).toEqual({ pidsMax: 64, memoryMaxBytes: 1 << 30 })
    expect(tree.node("/sys/fs/cgroup/agent-terminal-4242/bash-1").files.get("pids.max")).toBe("64")
  })

  it("a server cgroup that holds the server cannot pass controllers down (EBUSY): nothing applies, and why", () => {
    const tree = fakeTree({ own, rootControllers: ["memory", "pids"] })
    const enabled = enable(tree.fs, own, parent)
    expect(enabled.controllers).toEqual([])
    expect(enabled.missing.map((m) => m.controller)).toEqual(["pids", "memory"])
    expect(enabled.missing[0]!.reason).toContain("while processes live in it")
    expect(tree.writes).toContain(`${own}/cgroup.subtree_control=+pids`)
    expect(apply(tree.fs, session, enabled.controllers, { pidsMax: 64 }, 1 << 30)).toEqual({})
  })

  it("what the server's cgroup already passes down is used: pids without memory", () => {
    const tree = fakeTree({ own, rootControllers: ["pids"], ownSubtree: ["pids"] })
    const enabled = enable(tree.fs, own, parent)
    expect(enabled.controllers).toEqual(["pids"])
    expect(enabled.missing).toEqual([
      { controller: "memory", reason: `the server's cgroup ${own} has no memory controller (none delegated here)` }
    ])
    expect(apply(tree.fs, session, enabled.controllers, { pidsMax: 128, memoryMaxBytes: 1 << 30 }, 1)).toEqual({
      pidsMax: 128
    })
    expect(tree.node(session).files.has("memory.max")).toBe(false)
  })

  it("a hierarchy without the controllers (this host: v2 holds only hugetlb) gives no limits", () => {
    const tree = fakeTree({ own: "/sys/fs/cgroup/unified", rootControllers: ["hugetlb"], ownIsRoot: true })
    const enabled = enable(tree.fs, "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/agent-terminal-4242")
    expect(enabled.controllers).toEqual([])
    expect(enabled.missing.map((m) => m.reason)).toEqual([
      "the server's cgroup /sys/fs/cgroup/unified has no pids controller (none delegated here)",
      "the server's cgroup /sys/fs/cgroup/unified has no memory controller (none delegated here)"
    ])
  })
})

describe("writing the limits of one session", () => {
  const tree = fakeTree({ own, rootControllers: ["memory", "pids"], ownSubtree: ["memory", "pids"] })
  const enabled = enable(tree.fs, own, parent)

  it("0 turns a limit off; an absent memory limit takes the default (half the host's memory)", () => {
    expect(enabled.controllers).toEqual(["pids", "memory"])
    expect(apply(tree.fs, `${parent}/a`, enabled.controllers, { pidsMax: 0, memoryMaxBytes: 0 }, 1 << 30)).toEqual({})
    expect(apply(tree.fs, `${parent}/b`, enabled.controllers, { pidsMax: 10 }, 1 << 30)).toEqual({
      pidsMax: 10,
      memoryMaxBytes: 1 << 30
    })
    expect(tree.node(`${parent}/b`).files.get("memory.max")).toBe(String(1 << 30))
  })

  it("a write the kernel refuses is not reported as applied", () => {
    const refusing: CgroupFs = { read: tree.fs.read, write: () => "EACCES" }
    expect(apply(refusing, `${parent}/c`, enabled.controllers, { pidsMax: 10, memoryMaxBytes: 5 }, 1)).toEqual({})
  })
})
