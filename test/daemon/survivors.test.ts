import { afterEach, describe, expect, it } from "@effect/vitest"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import {
  built,
  cgroupsOf,
  connectMcp,
  type Daemon,
  type Identity,
  killIdentities,
  makeHome,
  sleep,
  startDaemon,
  startTimeOf,
  stillAlive,
  taggedProcesses,
  waitUntil
} from "./support.js"

/** The three survivors of a plain kill: a nohup'd sleep, a TERM/HUP-ignoring child, a setsid double-fork. */
const survivors = (tag: string) =>
  `export TAG=${tag}; nohup sleep 300 >/dev/null 2>&1 & sh -c 'trap "" TERM HUP; sleep 300' & ` +
  `setsid sh -c '(sleep 300 &)'`

type Mcp = Awaited<ReturnType<typeof connectMcp>>

/** Two sessions, each holding the three survivors; their processes by identity (the shells included). */
const holdSurvivors = async (mcp: Mcp) => {
  const tag = randomUUID()
  const shells: Array<Identity> = []
  for (let i = 0; i < 2; i++) {
    const opened = await mcp.call("terminal_open", {})
    expect(opened.isError, JSON.stringify(opened)).toBe(false)
    shells.push({ pid: opened.pid, startTime: startTimeOf(opened.pid)!, comm: "shell" })
    const sent = await mcp.call("terminal_send", { sessionId: opened.sessionId, text: survivors(tag) })
    expect(sent.waitReason).toBe("prompt")
  }
  // per session: nohup sleep, sh + its sleep, the setsid daemon's sleep (its sh is gone at once)
  expect(await waitUntil(() => taggedProcesses(tag).filter((p) => p.comm === "sleep").length >= 6)).toBe(true)
  return { tag, processes: [...taggedProcesses(tag), ...shells] }
}

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe.runIf(built)("nothing left behind when the owner of terminals is killed (42)", () => {
  it("kill -9 of the daemon: no process of its sessions is alive 1 s later, no cgroup after the next start", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    const daemon = await startDaemon(home.env)
    cleanups.push(() => daemon.stop())
    const mcp = await connectMcp(home.env, ["--daemon", "--owner", "reaped"])
    cleanups.push(() => mcp.client.close())
    const { processes, tag } = await holdSurvivors(mcp)
    cleanups.push(() => killIdentities(taggedProcesses(tag)))
    expect(processes.filter(stillAlive).length).toBeGreaterThanOrEqual(8)
    expect(cgroupsOf(daemon.pid).length).toBeLessThanOrEqual(1)

    process.kill(daemon.pid, "SIGKILL")
    await sleep(1_000)
    expect(processes.filter(stillAlive)).toEqual([])

    const next: Daemon = await startDaemon(home.env)
    cleanups.push(() => next.stop())
    expect(cgroupsOf(daemon.pid)).toEqual([])
  })

  it("kill -9 of an in-process agent-terminal mcp: no process of its sessions is alive 1 s later", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    const mcp = await connectMcp(home.env, [])
    cleanups.push(() => mcp.client.close())
    const { processes, tag } = await holdSurvivors(mcp)
    cleanups.push(() => killIdentities(taggedProcesses(tag)))

    process.kill(mcp.pid, "SIGKILL")
    await sleep(1_000)
    expect(processes.filter(stillAlive)).toEqual([])

    // the next in-process start leaves no cgroup of the dead one behind either
    const again = await connectMcp(home.env, [])
    cleanups.push(() => again.client.close())
    await again.call("terminal_list")
    expect(cgroupsOf(mcp.pid)).toEqual([])
  })

  it("the next start reaps what a dead owner left when its reaper could not (killed with it)", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    const mcp = await connectMcp(home.env, [])
    cleanups.push(() => mcp.client.close())
    const { processes, tag } = await holdSurvivors(mcp)
    cleanups.push(() => killIdentities(taggedProcesses(tag)))
    const reapers = taggedReapers(mcp.pid)
    expect(reapers.length).toBe(1)
    // a reaper killed while its owner lives is replaced
    killIdentities(reapers)
    expect(await waitUntil(() => taggedReapers(mcp.pid).some((r) => r.pid !== reapers[0]!.pid))).toBe(true)
    // now one that cannot act: stopped, then killed after its owner (as a kill of everything at once would)
    const [replacement] = taggedReapers(mcp.pid)
    process.kill(replacement!.pid, "SIGSTOP")
    process.kill(mcp.pid, "SIGKILL")
    await sleep(500)
    killIdentities([replacement!])
    await sleep(300)
    // Every start on this host reaps what dead owners left (their marker is host-wide, not per state
    // directory): in the full suite another file's server may start in this window and reap them first. Then
    // the guarantee held already; the next start below must leave nothing either way.
    const left = processes.filter(stillAlive)

    const next = await connectMcp(home.env, [])
    cleanups.push(() => next.client.close())
    await next.call("terminal_list")
    expect(processes.filter(stillAlive)).toEqual([])
    if (left.length > 0) {
      // logged before the server answers, on stderr: a pipe of its own, which may be read after stdout's answer
      const said = /reaper: ended what dead owners left: \d+ process/
      await waitUntil(() => said.test(next.stderr()))
      expect(next.stderr()).toMatch(said)
    }
  })
})

/** The reaper processes of an owner pid (the native helper, or the Node fallback; their argv ends with it). */
const taggedReapers = (ownerPid: number): Array<Identity> => {
  const found: Array<Identity> = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    let cmdline = ""
    try {
      cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "latin1")
    } catch {
      continue
    }
    const argv = cmdline.split("\0").filter((arg) => arg !== "")
    const reaper = argv.some((arg) => arg.endsWith("reaperMain.js") || arg.endsWith("/agent-terminal-reaper"))
    if (reaper && argv[argv.length - 1] === String(ownerPid)) {
      const startTime = startTimeOf(Number(name))
      if (startTime !== undefined) found.push({ pid: Number(name), startTime, comm: "reaper" })
    }
  }
  return found
}
