/**
 * The isolated launcher against real bwrap, at the moment nothing else watches: bwrap killed while its
 * network helper still waits for the tool (the server died and the terminal hung up) must not leave bwrap's
 * child — blocked on its block fd, with no parent-death signal yet — behind.
 */
import { afterAll, expect, it } from "@effect/vitest"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { launcherFdArgs, processArgs } from "../src/internal/sandbox/bwrapArgs.js"
import { launch } from "../src/internal/sandbox/launcher.js"
import { seccompFile } from "../src/internal/sandbox/seccompFile.js"

const hasBwrap = ["/usr/bin/bwrap", "/bin/bwrap"].some((file) => fs.existsSync(file))
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "at-launcher-")))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

const waitFor = async (check: () => boolean, ms: number) => {
  const deadline = Date.now() + ms
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  return check()
}

it.skipIf(!hasBwrap)(
  `bwrap killed while the helper waits for a slow network tool: its blocked child is killed, not released${
    hasBwrap ? "" : " (skipped: no bwrap)"
  }`,
  async () => {
    const record = path.join(dir, "slow-tool.log")
    const tool = path.join(dir, "slirp4netns-slow")
    fs.writeFileSync(
      tool,
      `#!/bin/sh\necho "$@" | awk '{print $(NF-1)}' > ${record}\nsleep 1\necho 1 >&9\nexec sleep 30\n`,
      { mode: 0o755 }
    )
    const filter = seccompFile()
    if ("failed" in filter) throw new Error(filter.failed)
    const root = process.getuid?.() === 0
    const spawned = launch({
      bwrap: fs.existsSync("/usr/bin/bwrap") ? "/usr/bin/bwrap" : "/bin/bwrap",
      bwrapArgs: [
        ...processArgs("isolated", root),
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        ...launcherFdArgs("isolated"),
        "--",
        "/bin/sh",
        "-c",
        "echo RAN > " + path.join(dir, "ran")
      ],
      seccompFile: filter.path,
      tool: { kind: "slirp4netns", path: tool },
      root
    })
    const launcher = childProcess.spawn(spawned.file, [...spawned.args], { stdio: "ignore" })
    expect(await waitFor(() => fs.existsSync(record) && fs.readFileSync(record, "utf8").trim() !== "", 5000)).toBe(
      true
    )
    const child = Number(fs.readFileSync(record, "utf8").trim())
    expect(alive(child)).toBe(true)
    launcher.kill("SIGKILL")
    expect(await waitFor(() => !alive(child), 5000)).toBe(true)
    expect(fs.existsSync(path.join(dir, "ran"))).toBe(false)
    const tools = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).filter((name) => {
      try {
        return fs.readFileSync(`/proc/${name}/cmdline`, "latin1").includes(tool)
      } catch {
        return false
      }
    })
    expect(await waitFor(() => tools.every((pid) => !alive(Number(pid))), 5000)).toBe(true)
  }
)
