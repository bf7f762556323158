import { Doctor, Reaper, Teardown } from "@agent-terminal/node"
import { describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const startTimeOf = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19])
  } catch {
    return undefined
  }
}

const comm = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "latin1").trim()
  } catch {
    return undefined
  }
}

const alive = (pid: number, startTime: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(fields[19]) === startTime && fields[0] !== "Z" && fields[0] !== "X"
  } catch {
    return false
  }
}

/** Every live process whose environment holds `entry`, by identity. */
const carrying = (entry: string) =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      if (!fs.readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(entry)) return []
    } catch {
      return []
    }
    const startTime = startTimeOf(Number(name))
    return startTime === undefined ? [] : [{ pid: Number(name), startTime }]
  })

/**
 * A tree as a session leaves one: a root with a child, and a double-forked orphan in a session of its own
 * (reparented to init: only the marker finds it). Every process carries `marker`.
 */
const tree = async (marker: string) => {
  const root = spawn("bash", ["-c", "sleep 300 & (setsid sleep 301 &); exec sleep 302"], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, [marker.split("=")[0]!]: marker.split("=")[1]! }
  })
  root.unref()
  // settled when the three sleeps are all there and nothing else is (the subshell that forks the orphan is gone)
  const sleeps = () => carrying(marker).filter((p) => comm(p.pid) === "sleep")
  for (let i = 0; i < 300 && (sleeps().length < 3 || carrying(marker).length > 3); i++) await sleep(10)
  const processes = carrying(marker)
  expect(processes.length).toBe(3)
  return { rootPid: root.pid!, startTime: startTimeOf(root.pid!)!, processes }
}

const kill = (processes: ReadonlyArray<{ pid: number; startTime: number }>) => {
  for (const p of processes) if (alive(p.pid, p.startTime)) process.kill(p.pid, "SIGKILL")
}

/** The reaper `program` started as `Reaper` starts it: detached, its stdin a pipe from us. */
const startReaper = (program: ReadonlyArray<string>) => {
  const child: ChildProcess = spawn(program[0]!, [...program.slice(1), String(process.pid)], {
    detached: true,
    stdio: ["pipe", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    send: (line: string) => child.stdin!.write(line),
    /** The pipe ends: for the reaper, its owner is gone. */
    end: async () => {
      child.stdin!.end()
      await exited
      return stderr
    }
  }
}

const nodeFallback = path.resolve(__dirname, "../dist/reaperMain.js")

const programs: ReadonlyArray<readonly [string, ReadonlyArray<string> | undefined]> = [
  ["the native helper", Reaper.nativeReaper() === undefined ? undefined : [Reaper.nativeReaper()!]],
  ["the Node fallback", fs.existsSync(nodeFallback) ? [process.execPath, nodeFallback] : undefined]
]

describe.runIf(process.platform === "linux")("the reaper's programs", () => {
  it("the native helper is built (at install, and by pnpm build)", () => {
    expect(Reaper.nativeReaper()).toMatch(/\/build\/native\/agent-terminal-reaper$/)
  })

  it("the doctor lists the reaper only when its helper is missing: then the reaper runs in Node, said loudly", () => {
    expect(Doctor.reaperFinding("/x/build/native/agent-terminal-reaper")).toEqual([])
    const [finding] = Doctor.reaperFinding(undefined)
    expect(finding).toMatchObject({ name: "reaper", ok: false, needed: false })
    expect(Doctor.render([finding!])).toMatch(/^absent {2}reaper: the native helper .* not built.*second Node process/)
  })

  it("the messages are lines, strings in hex", () => {
    const tracked = { rootPid: 12, startTime: 34, cgroupPath: "/sys/fs/cgroup/a b", marker: "A=b c" }
    expect(Reaper.reaperLine("track", tracked)).toBe(
      `track 12 34 ${Buffer.from("/sys/fs/cgroup/a b").toString("hex")} ${Buffer.from("A=b c").toString("hex")}\n`
    )
    expect(Reaper.reaperLine("track", { rootPid: 12, startTime: 34 })).toBe("track 12 34 - -\n")
    expect(Reaper.reaperLine("untrack", tracked)).toBe("untrack 12 34\n")
  })

  for (const [name, program] of programs) {
    // The Node fallback is dist/reaperMain.js: skipped when the package is not built (pnpm build).
    describe.runIf(program !== undefined)(name, () => {
      it("when its owner's pipe ends, every process of a tracked tree is dead within 1 s (the orphan by its marker)", async () => {
        const marker = `${Teardown.TREE_MARKER}=${randomUUID()}`
        const held = await tree(marker)
        try {
          const reaper = startReaper(program!)
          reaper.send(Reaper.reaperLine("track", { rootPid: held.rootPid, startTime: held.startTime, marker }))
          await sleep(100)
          expect(held.processes.filter((p) => alive(p.pid, p.startTime)).length).toBe(3)
          const started = Date.now()
          const said = await reaper.end()
          expect(Date.now() - started).toBeLessThan(1_000)
          expect(held.processes.filter((p) => alive(p.pid, p.startTime))).toEqual([])
          expect(said).toMatch(/agent-terminal reaper: owner \d+ is gone: 1 tree\(s\) it still held ended, 3 process/)
        } finally {
          kill(held.processes)
        }
      })

      it("an untracked tree, and a pid whose start time is not the tracked one, are left alone", async () => {
        const untracked = await tree(`${Teardown.TREE_MARKER}=${randomUUID()}`)
        const reused = await tree(`${Teardown.TREE_MARKER}=${randomUUID()}`)
        try {
          const reaper = startReaper(program!)
          reaper.send(Reaper.reaperLine("track", untracked))
          reaper.send(Reaper.reaperLine("untrack", untracked))
          // the same pid with another start time: another process (a reused pid), never touched
          reaper.send(Reaper.reaperLine("track", { rootPid: reused.rootPid, startTime: reused.startTime + 1 }))
          await reaper.end()
          await sleep(100)
          expect(untracked.processes.filter((p) => alive(p.pid, p.startTime)).length).toBe(3)
          expect(reused.processes.filter((p) => alive(p.pid, p.startTime)).length).toBe(3)
        } finally {
          kill([...untracked.processes, ...reused.processes])
        }
      })
    })
  }
})
