import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Bubblewrap from "../src/Bubblewrap.js"
import type { LauncherView } from "../src/internal/sandboxedProcess.js"
import { search } from "../src/internal/sandboxedProcess.js"

const request = { cwd: "/work/ws/src", file: "bash", args: ["--noprofile", "--norc", "-i"] }

const indexOfPair = (argv: ReadonlyArray<string>, ...pair: ReadonlyArray<string>) =>
  argv.findIndex((_, i) => pair.every((part, j) => argv[i + j] === part))

describe("Bubblewrap.commandLine", () => {
  it("wraps the program once, with --die-with-parent and --unshare-pid, never --new-session", () => {
    const argv = Bubblewrap.commandLine({ mode: "workspace-write", network: false, workspace: "/work/ws" }, request)
    expect(argv).toContain("--die-with-parent")
    expect(argv).toContain("--unshare-pid")
    expect(argv).not.toContain("--new-session")
    expect(argv.filter((arg) => arg === "--").length).toBe(1)
    expect(argv.slice(argv.indexOf("--") + 1)).toEqual(["bash", "--noprofile", "--norc", "-i"])
    expect(indexOfPair(argv, "--chdir", "/work/ws/src")).toBeGreaterThan(0)
    expect(indexOfPair(argv, "--cap-drop", "ALL")).toBeGreaterThanOrEqual(0)
  })

  it("unshares the network unless it is enabled", () => {
    const off = Bubblewrap.commandLine({ mode: "read-only", network: false, workspace: "/work/ws" }, request)
    const on = Bubblewrap.commandLine({ mode: "read-only", network: true, workspace: "/work/ws" }, request)
    expect(off).toContain("--unshare-net")
    expect(on).not.toContain("--unshare-net")
    expect(indexOfPair(off, "--tmpfs", "/run")).toBeGreaterThan(0)
    expect(indexOfPair(on, "--tmpfs", "/run")).toBe(-1)
  })

  it("workspace-write: root read-only, a private /tmp, then the workspace read-write", () => {
    const argv = Bubblewrap.commandLine({ mode: "workspace-write", network: false, workspace: "/tmp/ws" }, request)
    const root = indexOfPair(argv, "--ro-bind", "/", "/")
    const tmp = indexOfPair(argv, "--tmpfs", "/tmp")
    const bind = indexOfPair(argv, "--bind", "/tmp/ws", "/tmp/ws")
    expect(root).toBeGreaterThanOrEqual(0)
    expect(tmp).toBeGreaterThan(root)
    expect(bind).toBeGreaterThan(tmp)
    expect(indexOfPair(argv, "--ro-bind", "/proc/sys", "/proc/sys")).toBeGreaterThan(
      indexOfPair(argv, "--proc", "/proc")
    )
    expect(argv).not.toContain("--remount-ro")
  })

  it("read-only: nothing bound writable; the private directories are remounted read-only", () => {
    const argv = Bubblewrap.commandLine({ mode: "read-only", network: false, workspace: "/tmp/ws" }, request)
    expect(argv).not.toContain("--bind")
    expect(indexOfPair(argv, "--ro-bind", "/tmp/ws", "/tmp/ws")).toBeGreaterThan(indexOfPair(argv, "--tmpfs", "/tmp"))
    for (const dir of ["/dev", "/tmp", "/run"]) expect(indexOfPair(argv, "--remount-ro", dir), dir).toBeGreaterThan(0)
    const outside = Bubblewrap.commandLine({ mode: "read-only", network: true, workspace: "/work/ws" }, request)
    expect(indexOfPair(outside, "--ro-bind", "/work/ws", "/work/ws")).toBe(-1)
  })
})

describe("Bubblewrap.policyOf", () => {
  it("needs a workspace in the confined modes, none in danger-full-access", () => {
    expect(Either.isLeft(Bubblewrap.policyOf({ mode: "read-only" }))).toBe(true)
    expect(Bubblewrap.policyOf({ mode: "danger-full-access" })).toEqual(
      Either.right({ mode: "danger-full-access", network: false })
    )
    expect(Bubblewrap.policyOf({ mode: "workspace-write", workspace: "/", network: true })).toMatchObject({
      _tag: "Left",
      left: { _tag: "InvalidConfig", field: "workspace" }
    })
  })
})

const stat = (pid: number, startTime: number, state = "S") =>
  `${pid} (x) ${state} 1 ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ${startTime} 0 0`

const view = (table: {
  readonly alive: ReadonlyArray<number>
  readonly children: Readonly<Record<number, ReadonlyArray<number>>>
  readonly exe: Readonly<Record<number, string>>
}): LauncherView => ({
  reader: {
    pids: () => table.alive,
    stat: (pid) => table.alive.includes(pid) ? stat(pid, pid * 10) : undefined,
    status: () => undefined
  },
  children: (pid) => table.children[pid] ?? [],
  exe: (pid) => table.exe[pid]
})

describe("finding the program inside the sandbox", () => {
  it("waits while the launcher has not cloned, or the child has not exec'd yet", () => {
    expect(search(view({ alive: [100], children: {}, exe: { 100: "/bin/sh" } }), 100)._tag).toBe("NotYet")
    expect(
      search(view({ alive: [100, 101], children: { 100: [101] }, exe: { 100: "/usr/bin/bwrap" } }), 100)._tag
    ).toBe("NotYet")
    const forked = view({
      alive: [100, 101, 102],
      children: { 100: [101], 101: [102] },
      exe: { 100: "/usr/bin/bwrap", 101: "/usr/bin/bwrap", 102: "/usr/bin/bwrap" }
    })
    expect(search(forked, 100)._tag).toBe("NotYet")
  })

  it("finds the init and the program once the program exec'd", () => {
    const running = view({
      alive: [100, 101, 102],
      children: { 100: [101], 101: [102] },
      exe: { 100: "/usr/bin/bwrap", 101: "/usr/bin/bwrap", 102: "/usr/bin/bash" }
    })
    expect(search(running, 100)).toEqual({
      _tag: "Found",
      processes: { init: { pid: 101, startTime: 1010 }, program: { pid: 102, startTime: 1020 } }
    })
  })

  it("reports a launcher that died (bwrap refused to start)", () => {
    expect(search(view({ alive: [], children: {}, exe: {} }), 100)._tag).toBe("LauncherGone")
  })
})
