/**
 * What the sandbox looks up on the host before a session starts, on real temporary trees: the masks of the
 * deny-read list, the binds of the workspace's git metadata, the name-resolution files under `/run`, the
 * network tool; and the launcher scripts parse as POSIX sh.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { expand, gitBinds, masksFor, nameResolutionFiles } from "../src/internal/sandbox/hostPaths.js"
import { ISOLATED_SCRIPT, launch, PLAIN_SCRIPT } from "../src/internal/sandbox/launcher.js"
import { resolveNetworkTool } from "../src/internal/sandbox/networkTool.js"

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "at-hostpaths-")))
fs.mkdirSync(path.join(process.cwd(), "build"), { recursive: true })
const visible = fs.realpathSync(fs.mkdtempSync(path.join(process.cwd(), "build", "at-hostpaths-")))
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
  fs.rmSync(visible, { recursive: true, force: true })
})
const root = tmp
const make = (relative: string, content?: string, base = root) => {
  const file = path.join(base, relative)
  fs.mkdirSync(content === undefined ? file : path.dirname(file), { recursive: true })
  if (content !== undefined) fs.writeFileSync(file, content)
  return file
}

describe("the deny-read masks", () => {
  it("expands ~/ to every home, keeps absolute paths, ignores anything else", () => {
    expect(expand("~/.ssh", ["/home/a", "/root"])).toEqual(["/home/a/.ssh", "/root/.ssh"])
    expect(expand("/etc/secret/../secret", ["/home/a"])).toEqual(["/etc/secret"])
    expect(expand("relative/path", ["/home/a"])).toEqual([])
  })

  it("masks what exists, by real path and kind; a symlink masks its target; the workspace's ancestors are left alone", () => {
    const home = make("home", undefined, visible)
    make("home/.ssh/id_ed25519", "key", visible)
    make("home/.npmrc", "token", visible)
    const real = make("elsewhere/aws", undefined, visible)
    fs.symlinkSync(real, path.join(home, ".aws"))
    const workspace = make("home/project", undefined, visible)
    const masks = masksFor({
      entries: ["~/.ssh", "~/.npmrc", "~/.aws", "~/.kube", "~", path.join(visible, "home", "project", "..")],
      homes: [home],
      workspace
    })
    expect(masks).toEqual([
      { path: path.join(home, ".ssh"), kind: "dir" },
      { path: path.join(home, ".npmrc"), kind: "file" },
      { path: real, kind: "dir" }
    ])
  })

  it("a path under a private directory (/tmp) is invisible inside anyway, unless the workspace holds it", () => {
    const home = make("tmp-home")
    make("tmp-home/.ssh/id_ed25519", "key")
    expect(masksFor({ entries: ["~/.ssh"], homes: [home], workspace: make("ws-elsewhere", undefined, visible) }))
      .toEqual([])
    expect(masksFor({ entries: ["~/.ssh"], homes: [home], workspace: home })).toEqual([
      { path: path.join(home, ".ssh"), kind: "dir" }
    ])
  })
})

describe("the git metadata binds", () => {
  it("a .git directory: a mount point, config read-only, hooks read-only (or an empty read-only one)", () => {
    const ws = make("repo")
    make("repo/.git/config", "[core]\n")
    make("repo/.git/HEAD", "ref: refs/heads/main\n")
    expect(gitBinds(ws)).toEqual([
      { path: path.join(ws, ".git"), kind: "mountpoint" },
      { path: path.join(ws, ".git", "config"), kind: "read-only" },
      { path: path.join(ws, ".git", "hooks"), kind: "empty-read-only" }
    ])
    make("repo/.git/hooks")
    make("repo/.git/modules/libs/sub/HEAD", "x")
    make("repo/.git/modules/libs/sub/config", "[core]\n")
    expect(gitBinds(ws)).toEqual([
      { path: path.join(ws, ".git"), kind: "mountpoint" },
      { path: path.join(ws, ".git", "config"), kind: "read-only" },
      { path: path.join(ws, ".git", "hooks"), kind: "read-only" },
      { path: path.join(ws, ".git", "modules", "libs", "sub"), kind: "mountpoint" },
      { path: path.join(ws, ".git", "modules", "libs", "sub", "config"), kind: "read-only" },
      { path: path.join(ws, ".git", "modules", "libs", "sub", "hooks"), kind: "empty-read-only" }
    ])
  })

  it("a .git file: the file read-only, and the git directory it points to when it is in the workspace", () => {
    const ws = make("worktree")
    make("worktree/.gitdir/config", "[core]\n")
    make("worktree/.git", "gitdir: .gitdir\n")
    expect(gitBinds(ws)).toEqual([
      { path: path.join(ws, ".git"), kind: "read-only" },
      { path: path.join(ws, ".gitdir"), kind: "mountpoint" },
      { path: path.join(ws, ".gitdir", "config"), kind: "read-only" },
      { path: path.join(ws, ".gitdir", "hooks"), kind: "empty-read-only" }
    ])
    const outside = make("linked")
    make("linked/.git", `gitdir: ${make("main/.git/worktrees/linked")}\n`)
    expect(gitBinds(outside)).toEqual([{ path: path.join(outside, ".git"), kind: "read-only" }])
  })

  it("no repository: nothing", () => {
    expect(gitBinds(make("plain"))).toEqual([])
  })
})

describe("name resolution under /run", () => {
  it("binds every hop of /etc/resolv.conf's symlink chain that lies under /run, nothing else", () => {
    const plain = make("etc/resolv.conf", "nameserver 192.0.2.53\n")
    expect(nameResolutionFiles(plain)).toEqual([])
    const linked = path.join(root, "etc", "resolv-linked.conf")
    fs.symlinkSync("/run/systemd/resolve/stub-resolv.conf", linked)
    expect(nameResolutionFiles(linked)).toEqual(["/run/systemd/resolve/stub-resolv.conf"])
  })
})

describe("the network tool", () => {
  it("pasta first, else slirp4netns, on PATH; a configured one by name or path; neither is a clear refusal", () => {
    const bin = make("bin")
    for (const name of ["pasta", "slirp4netns"]) {
      fs.writeFileSync(path.join(bin, name), "#!/bin/sh\n", { mode: 0o755 })
    }
    expect(resolveNetworkTool(undefined, bin)).toEqual({
      _tag: "Found",
      tool: { kind: "pasta", path: path.join(bin, "pasta") }
    })
    expect(resolveNetworkTool("slirp4netns", bin)).toEqual({
      _tag: "Found",
      tool: { kind: "slirp4netns", path: path.join(bin, "slirp4netns") }
    })
    const missing = resolveNetworkTool(undefined, make("empty-bin"))
    expect(missing._tag).toBe("Missing")
    expect(missing._tag === "Missing" && missing.reason).toContain(
      "--network isolated needs pasta (Debian package passt) or slirp4netns"
    )
  })
})

describe("the launcher", () => {
  it("both scripts parse as POSIX sh; the tool, its kind and the uid ride as arguments, never in the script", () => {
    for (const script of [PLAIN_SCRIPT, ISOLATED_SCRIPT]) {
      expect(() => childProcess.execFileSync("/bin/sh", ["-n", "-c", script])).not.toThrow()
    }
    const isolated = launch({
      bwrap: "/usr/bin/bwrap",
      bwrapArgs: ["--", "bash"],
      seccompFile: "/tmp/f.bpf",
      tool: { kind: "pasta", path: "/usr/bin/pasta" },
      root: false
    })
    expect(isolated.args.slice(0, 2)).toEqual(["-c", ISOLATED_SCRIPT])
    expect(isolated.args.slice(2)).toEqual([
      "/tmp/f.bpf",
      "pasta",
      "/usr/bin/pasta",
      "user",
      "/usr/bin/bwrap",
      "--",
      "bash"
    ])
    expect(launch({ bwrap: "/b", bwrapArgs: ["x"], seccompFile: "/f", root: true }).args).toEqual([
      "-c",
      PLAIN_SCRIPT,
      "/f",
      "/b",
      "x"
    ])
  })
})
