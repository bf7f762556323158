import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Bubblewrap from "../src/Bubblewrap.js"
import type { LauncherView } from "../src/internal/sandbox/sandboxedProcess.js"
import { search } from "../src/internal/sandbox/sandboxedProcess.js"

const request = { cwd: "/work/ws/src", file: "bash", args: ["--noprofile", "--norc", "-i"] }

const indexOfPair = (argv: ReadonlyArray<string>, ...pair: ReadonlyArray<string>) =>
  argv.findIndex((_, i) => pair.every((part, j) => argv[i + j] === part))

describe("Bubblewrap.commandLine", () => {
  it("wraps the program once, with --die-with-parent and --unshare-pid, never --new-session", () => {
    const argv = Bubblewrap.commandLine({ mode: "workspace-write", network: "off", workspace: "/work/ws" }, request)
    expect(argv).toContain("--die-with-parent")
    expect(argv).toContain("--unshare-pid")
    expect(argv).not.toContain("--new-session")
    expect(argv.filter((arg) => arg === "--").length).toBe(1)
    expect(argv.slice(argv.indexOf("--") + 1)).toEqual(["bash", "--noprofile", "--norc", "-i"])
    expect(indexOfPair(argv, "--chdir", "/work/ws/src")).toBeGreaterThan(0)
    expect(indexOfPair(argv, "--cap-drop", "ALL")).toBeGreaterThanOrEqual(0)
  })

  it("network: off and isolated unshare it, host shares it; isolated hands bwrap the launcher's three fds", () => {
    const ws = { mode: "read-only", workspace: "/work/ws" } as const
    const off = Bubblewrap.commandLine({ ...ws, network: "off" }, request)
    const isolated = Bubblewrap.commandLine({ ...ws, network: "isolated" }, request)
    const host = Bubblewrap.commandLine({ ...ws, network: "host" }, request)
    expect(off).toContain("--unshare-net")
    expect(isolated).toContain("--unshare-net")
    expect(host).not.toContain("--unshare-net")
    expect(Bubblewrap.commandLine({ ...ws, network: false }, request)).toEqual(off)
    expect(Bubblewrap.commandLine({ ...ws, network: true }, request)).toEqual(host)
    for (const argv of [off, isolated, host]) {
      expect(indexOfPair(argv, "--seccomp", "3")).toBeGreaterThan(0)
      for (const flag of ["--unshare-uts", "--unshare-cgroup-try", "--unshare-ipc"]) expect(argv).toContain(flag)
    }
    expect(indexOfPair(isolated, "--info-fd", "4")).toBeGreaterThan(0)
    expect(indexOfPair(isolated, "--block-fd", "5")).toBeGreaterThan(0)
    expect(indexOfPair(isolated, "--sync-fd", "6")).toBeGreaterThan(0)
    expect(off).not.toContain("--block-fd")
    expect(host).not.toContain("--info-fd")
  })

  it("isolated as an unprivileged user maps it to 0 in one user namespace (the network tool must enter it)", () => {
    const ws = { mode: "workspace-write", workspace: "/work/ws" } as const
    const user = Bubblewrap.commandLine({ ...ws, network: "isolated", asRoot: false }, request)
    expect(indexOfPair(user, "--unshare-user", "--uid", "0", "--gid", "0")).toBe(0)
    expect(Bubblewrap.commandLine({ ...ws, network: "isolated", asRoot: true }, request)).not.toContain(
      "--unshare-user"
    )
    expect(Bubblewrap.commandLine({ ...ws, network: "off", asRoot: false }, request)).not.toContain("--unshare-user")
  })

  it("/tmp, /var/tmp and /run are private in every network mode; only name resolution is bound back", () => {
    for (const network of ["off", "isolated", "host"] as const) {
      const argv = Bubblewrap.commandLine({ mode: "workspace-write", network, workspace: "/work/ws" }, request, {
        nameResolution: ["/run/systemd/resolve/stub-resolv.conf"]
      })
      for (const dir of ["/tmp", "/var/tmp", "/run"]) expect(indexOfPair(argv, "--tmpfs", dir), dir).toBeGreaterThan(0)
      const resolv = indexOfPair(
        argv,
        "--ro-bind-try",
        "/run/systemd/resolve/stub-resolv.conf",
        "/run/systemd/resolve/stub-resolv.conf"
      )
      expect(resolv).toBeGreaterThan(indexOfPair(argv, "--tmpfs", "/run"))
    }
  })

  it("/proc/sys, sysrq-trigger, irq, bus and fs are bound read-only over the namespace's /proc", () => {
    const argv = Bubblewrap.commandLine({ mode: "workspace-write", network: "off", workspace: "/work/ws" }, request)
    for (const dir of ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"]) {
      expect(indexOfPair(argv, "--ro-bind-try", dir, dir), dir).toBeGreaterThan(indexOfPair(argv, "--proc", "/proc"))
    }
  })

  it("workspace-write: root read-only, private /tmp, the workspace read-write, then git metadata, then the masks", () => {
    const argv = Bubblewrap.commandLine(
      { mode: "workspace-write", network: "off", workspace: "/tmp/ws" },
      request,
      {
        git: [
          { path: "/tmp/ws/.git", kind: "mountpoint" },
          { path: "/tmp/ws/.git/config", kind: "read-only" },
          { path: "/tmp/ws/.git/hooks", kind: "empty-read-only" }
        ],
        masks: [{ path: "/tmp/ws/home/.ssh", kind: "dir" }, { path: "/root/.npmrc", kind: "file" }],
        emptyFile: "/tmp/agent-terminal-0/empty"
      }
    )
    const root = indexOfPair(argv, "--ro-bind", "/", "/")
    const tmp = indexOfPair(argv, "--tmpfs", "/tmp")
    const bind = indexOfPair(argv, "--bind", "/tmp/ws", "/tmp/ws")
    const gitDir = indexOfPair(argv, "--bind", "/tmp/ws/.git", "/tmp/ws/.git")
    const config = indexOfPair(argv, "--ro-bind", "/tmp/ws/.git/config", "/tmp/ws/.git/config")
    const hooks = indexOfPair(argv, "--tmpfs", "/tmp/ws/.git/hooks", "--remount-ro", "/tmp/ws/.git/hooks")
    const ssh = indexOfPair(argv, "--tmpfs", "/tmp/ws/home/.ssh", "--remount-ro", "/tmp/ws/home/.ssh")
    const npmrc = indexOfPair(argv, "--ro-bind", "/tmp/agent-terminal-0/empty", "/root/.npmrc")
    expect(root).toBeGreaterThanOrEqual(0)
    expect(tmp).toBeGreaterThan(root)
    expect(bind).toBeGreaterThan(tmp)
    expect(gitDir).toBeGreaterThan(bind)
    expect(config).toBeGreaterThan(gitDir)
    expect(hooks).toBeGreaterThan(gitDir)
    expect(ssh).toBeGreaterThan(hooks)
    expect(npmrc).toBeGreaterThan(bind)
    expect(indexOfPair(argv, "--remount-ro", "/tmp")).toBe(-1)
  })

  it("read-only: no git binds are needed (nothing is writable)", () => {
    const argv = Bubblewrap.commandLine({ mode: "read-only", network: "off", workspace: "/work/ws" }, request, {
      git: [{ path: "/work/ws/.git", kind: "mountpoint" }]
    })
    expect(indexOfPair(argv, "--bind", "/work/ws/.git", "/work/ws/.git")).toBe(-1)
  })

  it("read-only: nothing bound writable; the private directories are remounted read-only", () => {
    const argv = Bubblewrap.commandLine({ mode: "read-only", network: "off", workspace: "/tmp/ws" }, request)
    expect(argv).not.toContain("--bind")
    expect(indexOfPair(argv, "--ro-bind", "/tmp/ws", "/tmp/ws")).toBeGreaterThan(indexOfPair(argv, "--tmpfs", "/tmp"))
    for (const dir of ["/dev", "/tmp", "/var/tmp", "/run"]) {
      expect(indexOfPair(argv, "--remount-ro", dir), dir).toBeGreaterThan(0)
    }
    const outside = Bubblewrap.commandLine({ mode: "read-only", network: "host", workspace: "/work/ws" }, request)
    expect(indexOfPair(outside, "--ro-bind", "/work/ws", "/work/ws")).toBe(-1)
  })
})

describe("Bubblewrap.policyOf", () => {
  it("needs a workspace in the confined modes, none in danger-full-access", () => {
    expect(Either.isLeft(Bubblewrap.policyOf({ mode: "read-only" }))).toBe(true)
    expect(Bubblewrap.policyOf({ mode: "danger-full-access" })).toEqual(
      Either.right({ mode: "danger-full-access", network: "off" })
    )
    expect(Bubblewrap.policyOf({ mode: "workspace-write", workspace: "/", network: "host" })).toMatchObject({
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

  it("with --network isolated, skips the launcher's network helper and finds bwrap's init", () => {
    const isolated = view({
      alive: [100, 101, 102, 103, 104],
      children: { 100: [101, 102], 101: [103], 102: [104] },
      exe: {
        100: "/usr/bin/bwrap",
        101: "/usr/bin/dash",
        102: "/usr/bin/bwrap",
        103: "/usr/bin/passt",
        104: "/usr/bin/bash"
      }
    })
    expect(search(isolated, 100, "/usr/bin/bwrap")).toEqual({
      _tag: "Found",
      processes: { init: { pid: 102, startTime: 1020 }, program: { pid: 104, startTime: 1040 } }
    })
  })

  it("waits while the launcher is still the shell that execs bwrap (its helper already forked)", () => {
    const early = view({
      alive: [100, 101, 103],
      children: { 100: [101], 101: [103] },
      exe: { 100: "/usr/bin/dash", 101: "/usr/bin/dash", 103: "/usr/bin/mktemp" }
    })
    expect(search(early, 100, "/usr/bin/bwrap")._tag).toBe("NotYet")
  })

  it("reports a launcher that died (bwrap refused to start)", () => {
    expect(search(view({ alive: [], children: {}, exe: {} }), 100)._tag).toBe("LauncherGone")
  })
})
