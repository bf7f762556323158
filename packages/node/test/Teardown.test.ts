import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { spawn } from "node:child_process"
import { EventEmitter } from "node:events"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ownCgroupDir, parseMountinfo, parseOwnCgroup, readProcs } from "../src/internal/teardown/cgroup.js"
import { type HostProcess, type HostSignal, killTreesSync, makeRegistry } from "../src/internal/teardown/hostExit.js"
import { parseStat, parseTermDisposition } from "../src/internal/teardown/procTable.js"
import { sweep as sweepWith } from "../src/internal/teardown/sweep.js"
import * as Teardown from "../src/Teardown.js"
import {
  alive,
  bashTree,
  buildHostModules,
  fakeWorld,
  HOST_SCRIPT,
  noneAlive,
  spawnTree,
  treePids,
  waitUntil
} from "./teardownFixtures.js"

const cgroups = ManagedRuntime.make(Teardown.layerCgroups)
afterAll(() => cgroups.dispose())
const cgroupRoot = await cgroups.runPromise(Effect.flatMap(Teardown.Cgroups, (c) => c.available))
// cgroup v2 needs a cgroup2 mount we may write to (here: /sys/fs/cgroup/unified on a hybrid layout, as
// root), a kernel with cgroup.kill (5.14+), and a process movable into a child: otherwise these are skipped.
const cgroupAvailable = Option.isSome(cgroupRoot)
const cgroupsService = await cgroups.runPromise(Teardown.Cgroups)

const createSession = (label: string) =>
  Effect.flatMap(Option.getOrThrow(cgroupRoot).create(label), (session) =>
    Option.match(session, {
      onNone: () => Effect.die("no session cgroup"),
      onSome: Effect.succeed
    }))

describe("parsing /proc", () => {
  it("reads stat fields after the last parenthesis", () => {
    const fields = ["S", "10", "11", "12", "34816", ...Array.from({ length: 14 }, () => "0"), "98765", "0", "0"]
    const info = parseStat(`4242 (a) b (c)) ${fields.join(" ")}`)
    expect(info).toEqual({
      pid: 4242,
      comm: "a) b (c)",
      state: "S",
      ppid: 10,
      pgid: 11,
      sid: 12,
      ttyNr: 34816,
      startTime: 98765
    })
    expect(parseStat("garbage")).toBeUndefined()
  })

  it("tells a TERM handler from an ignored or default TERM", () => {
    const status = (blk: string, ign: string, cgt: string) =>
      `SigQ:\t0/1\nSigBlk:\t${blk}\nSigIgn:\t${ign}\nSigCgt:\t${cgt}\n`
    const zero = "0000000000000000"
    expect(parseTermDisposition(status(zero, zero, "0000000000004002"))).toBe("handled")
    expect(parseTermDisposition(status("0000000000004000", zero, zero))).toBe("handled")
    expect(parseTermDisposition(status(zero, "0000000000004000", zero))).toBe("ignored")
    expect(parseTermDisposition(status(zero, "0000000000000004", "0000000000010002"))).toBe("default")
  })

  it("finds our cgroup directory in hybrid, unified and namespaced layouts", () => {
    const hybrid = [
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
      "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw"
    ].join("\n")
    expect(ownCgroupDir(parseMountinfo(hybrid), "/")).toBe("/sys/fs/cgroup/unified")
    const unified = "29 22 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate"
    expect(ownCgroupDir(parseMountinfo(unified), "/user.slice/app.scope")).toBe("/sys/fs/cgroup/user.slice/app.scope")
    const bound = "50 40 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw"
    expect(ownCgroupDir(parseMountinfo(bound), "/docker/abc/sub")).toBe("/sys/fs/cgroup/sub")
    expect(ownCgroupDir(parseMountinfo(bound), "/elsewhere")).toBeUndefined()
    expect(ownCgroupDir(parseMountinfo(hybrid.split("\n").slice(0, 2).join("\n")), "/")).toBeUndefined()
    expect(parseOwnCgroup("9:name=systemd:/\n1:cpu:/\n0::/a/b\n")).toBe("/a/b")
    expect(parseOwnCgroup("1:cpu:/\n")).toBeUndefined()
  })
})

describe("sweep identity (scripted /proc)", () => {
  const SELF = 50
  const self = { pid: SELF, ppid: 40, pgid: SELF, sid: 40, start: 1, state: "S" }
  const parent = { pid: 40, ppid: 1, pgid: 40, sid: 40, start: 1, state: "S" }

  it.live("never signals a pid whose start time changed (21)", () =>
    Effect.gen(function*() {
      const world = fakeWorld(SELF, [
        parent,
        self,
        { pid: 100, ppid: SELF, pgid: 100, sid: 100, start: 10, state: "S" },
        { pid: 101, ppid: 100, pgid: 100, sid: 100, start: 20, state: "S" },
        { pid: 102, ppid: 101, pgid: 100, sid: 100, start: 30, state: "S" }
      ])
      // The signal to the deepest (102: no TERM handler, so KILL at once) makes 101 exit and its pid go to an
      // unrelated new process
      world.hooks.set("102:SIGKILL", () => {
        world.table.get(102)!.state = "Z"
        world.table.set(101, { pid: 101, ppid: 1, pgid: 101, sid: 101, start: 999, state: "S" })
      })
      const report = yield* sweepWith(world.env, 100, { graceMs: 100, includeRoot: true })
      expect(world.sent.filter(([pid]) => pid === 101)).toEqual([])
      expect(world.sent.filter(([pid]) => pid === 102)).toEqual([[102, "SIGKILL"]])
      expect(world.table.get(101)?.state).toBe("S")
      expect(report).toEqual({ containment: "sweep", signalled: 1, survivors: [] })
    }))

  it.live("never signals a recycled root, nor the groups of the new holder (21)", () =>
    Effect.gen(function*() {
      const world = fakeWorld(SELF, [
        parent,
        self,
        { pid: 100, ppid: 1, pgid: 100, sid: 100, start: 777, state: "S" },
        { pid: 103, ppid: 100, pgid: 100, sid: 100, start: 800, state: "S" }
      ])
      const report = yield* sweepWith(world.env, 100, { graceMs: 100, includeRoot: true, rootStartTime: 10 })
      expect(world.sent).toEqual([])
      expect(report.survivors).toEqual([])
    }))

  it.live("counts zombies as gone and finds orphans through the tree's group (21, 19)", () =>
    Effect.gen(function*() {
      const world = fakeWorld(SELF, [
        parent,
        self,
        { pid: 100, ppid: SELF, pgid: 100, sid: 100, start: 10, state: "Z" },
        { pid: 104, ppid: 1, pgid: 100, sid: 100, start: 40, state: "S" },
        { pid: 105, ppid: 1, pgid: 105, sid: 100, start: 41, state: "S", term: "ignored" },
        { pid: 106, ppid: 104, pgid: 100, sid: 100, start: 42, state: "Z" }
      ])
      const report = yield* sweepWith(world.env, 100, { graceMs: 100, includeRoot: true, rootStartTime: 10 })
      // Neither handles TERM (105 ignores it): one KILL each.
      expect(world.sent.sort()).toEqual([[104, "SIGKILL"], [105, "SIGKILL"]])
      expect(world.sent.filter(([pid]) => pid === 100 || pid === 106)).toEqual([])
      expect(report).toEqual({ containment: "sweep", signalled: 2, survivors: [] })
    }))

  it.live("never signals our own process group, and reports its members as survivors (23, 20)", () =>
    Effect.gen(function*() {
      const world = fakeWorld(SELF, [
        parent,
        self,
        { pid: 100, ppid: SELF, pgid: 100, sid: 100, start: 10, state: "S" },
        { pid: 107, ppid: 100, pgid: SELF, sid: 40, start: 50, state: "S" },
        { pid: 108, ppid: 107, pgid: 108, sid: 40, start: 51, state: "S" },
        { pid: 109, ppid: 1, pgid: SELF, sid: 40, start: 52, state: "S" }
      ])
      const report = yield* sweepWith(world.env, 100, { graceMs: 100, includeRoot: true })
      const targets = new Set(world.sent.map(([pid]) => pid))
      expect(targets.has(107) || targets.has(109) || targets.has(SELF) || targets.has(40) || targets.has(1)).toBe(false)
      expect(targets.has(108)).toBe(true)
      expect(targets.has(100)).toBe(true)
      expect(report.survivors).toEqual([107])
    }))

  it.live("refuses to sweep ourselves or an ancestor (23)", () =>
    Effect.gen(function*() {
      const world = fakeWorld(SELF, [
        parent,
        self,
        { pid: 60, ppid: 40, pgid: 60, sid: 60, start: 5, state: "S" }
      ])
      yield* sweepWith(world.env, 40, { graceMs: 100, includeRoot: true })
      yield* sweepWith(world.env, SELF, { graceMs: 100, includeRoot: true })
      yield* sweepWith(world.env, 1, { graceMs: 100, includeRoot: true })
      expect(world.sent).toEqual([])
    }))

  it.live("waits for a TERM handler, then KILLs what is left", () =>
    Effect.gen(function*() {
      const world = fakeWorld(SELF, [
        parent,
        self,
        { pid: 100, ppid: SELF, pgid: 100, sid: 100, start: 10, state: "S" },
        { pid: 110, ppid: 100, pgid: 100, sid: 100, start: 60, state: "S", term: "handled" }
      ])
      const report = yield* sweepWith(world.env, 100, { graceMs: 50, includeRoot: false })
      expect(world.sent).toEqual([[110, "SIGTERM"], [110, "SIGKILL"]])
      expect(report).toEqual({ containment: "sweep", signalled: 1, survivors: [] })
    }))

  it.live("TERMs only the processes that handle it; the rest are KILLed at once, each signal sent once", () =>
    Effect.gen(function*() {
      const world = fakeWorld(SELF, [
        parent,
        self,
        { pid: 100, ppid: SELF, pgid: 100, sid: 100, start: 10, state: "S" },
        { pid: 110, ppid: 100, pgid: 100, sid: 100, start: 60, state: "S", term: "handled" },
        { pid: 111, ppid: 100, pgid: 100, sid: 100, start: 61, state: "S" },
        { pid: 112, ppid: 100, pgid: 100, sid: 100, start: 62, state: "S", term: "ignored" }
      ])
      const report = yield* sweepWith(world.env, 100, { graceMs: 50, includeRoot: true })
      // 111 and 112 go before the grace of the handler (110) starts; the root (no handler) goes last.
      expect(world.sent.slice(0, 3).sort()).toEqual([[110, "SIGTERM"], [111, "SIGKILL"], [112, "SIGKILL"]])
      expect(world.sent.slice(3)).toEqual([[110, "SIGKILL"], [100, "SIGKILL"]])
      expect(report).toEqual({ containment: "sweep", signalled: 3, survivors: [] })
    }))
})

describe("sweep (real processes)", () => {
  it.scopedLive("kills a TERM-ignoring child", () =>
    Effect.gen(function*() {
      // The sh has more to do after its sleep: killed in the same round, it cannot exit by itself between the two
      // kills (with a single sleep it could, under load, and was then not counted).
      const tree = yield* bashTree("sh -c 'trap \"\" TERM; sleep 60; sleep 60' & wait")
      yield* waitUntil(() => treePids(tree.pid).length >= 3)
      const pids = treePids(tree.pid)
      const report = yield* Teardown.sweep(tree.pid, { graceMs: 5_000, includeRoot: true })
      expect(report.survivors).toEqual([])
      expect(report.signalled).toBeGreaterThanOrEqual(2)
      expect(noneAlive(pids)).toBe(true)
    }))

  it.scopedLive("leaves nothing of background jobs, busy loops and process substitutions", () =>
    Effect.gen(function*() {
      const scripts = [
        ["sleep 100 & sleep 100 & wait", 3],
        ["for i in $(seq 20); do yes > /dev/null & done; wait", 21],
        ["cat <(sleep 100)", 2]
      ] as const
      for (const [script, count] of scripts) {
        const tree = yield* bashTree(script)
        yield* waitUntil(() => treePids(tree.pid).length >= count)
        const pids = treePids(tree.pid)
        const report = yield* Teardown.sweep(tree.pid, { graceMs: 5_000, includeRoot: true })
        expect(report.survivors).toEqual([])
        expect(noneAlive(pids)).toBe(true)
        yield* tree.exited
      }
    }))

  it.scopedLive("finds and kills children forked while the tree is being TERMed", () =>
    Effect.gen(function*() {
      const marker = path.join(os.tmpdir(), `teardown-fork-${process.pid}-${Date.now()}`)
      const tree = yield* bashTree(
        `bash -c 'trap "sleep 100 & echo \\$! > ${marker}; exit 0" TERM; while :; do sleep 0.05; done' &
         bash -c 'trap "" TERM; while :; do sleep 100 & sleep 0.01; done' &
         wait`
      )
      yield* waitUntil(() => treePids(tree.pid).length >= 8)
      const report = yield* Teardown.sweep(tree.pid, { graceMs: 5_000, includeRoot: true })
      expect(report.survivors).toEqual([])
      const forked = Number(fs.readFileSync(marker, "utf8"))
      fs.rmSync(marker)
      expect(forked).toBeGreaterThan(1)
      expect(alive(forked)).toBe(false)
      expect(treePids(tree.pid)).toEqual([])
    }))

  it.scopedLive("kills a descendant left behind after the root exited by itself", () =>
    Effect.gen(function*() {
      const tree = yield* bashTree("sleep 100 & disown; exit 0")
      yield* tree.exited
      yield* waitUntil(() => treePids(tree.pid).length >= 1)
      const left = treePids(tree.pid)
      expect(left.length).toBe(1)
      const report = yield* Teardown.sweep(tree.pid, {
        graceMs: 1_000,
        includeRoot: true,
        rootStartTime: tree.startTime
      })
      expect(report).toEqual({ containment: "sweep", signalled: 1, survivors: [] })
      expect(noneAlive(left)).toBe(true)
    }))

  it.scopedLive("a root that handles TERM ends after its children (and a child forked meanwhile); a second sweep is a no-op", () =>
    Effect.gen(function*() {
      const tree = yield* bashTree("trap 'exit 0' TERM; sleep 100 & wait; sleep 100")
      yield* waitUntil(() => treePids(tree.pid).length >= 2)
      const first = yield* Teardown.sweep(tree.pid, { graceMs: 5_000, includeRoot: true })
      expect(first.survivors).toEqual([])
      const again = yield* Teardown.sweep(tree.pid, { graceMs: 5_000, includeRoot: true })
      expect(again).toEqual({ containment: "sweep", signalled: 0, survivors: [] })
    }))

  it.scopedLive("leaves processes of our own group alone and reports them by pid; a retry reports them again (20, 23)", () =>
    Effect.gen(function*() {
      const tree = yield* spawnTree("bash", ["-c", "sleep 100 & wait"], { detached: false })
      yield* waitUntil(() => childrenOf(tree.pid).length >= 1)
      const sleeper = childrenOf(tree.pid)[0]!
      const report = yield* Teardown.sweep(tree.pid, { graceMs: 100, includeRoot: true })
      expect(report.survivors).toEqual([tree.pid, sleeper].sort((a, b) => a - b))
      expect(report.signalled).toBe(0)
      expect(alive(tree.pid) && alive(sleeper)).toBe(true)
      const retry = yield* Teardown.sweep(tree.pid, { graceMs: 100, includeRoot: true })
      expect(retry.survivors).toEqual(report.survivors)
      process.kill(sleeper, "SIGKILL")
      process.kill(tree.pid, "SIGKILL")
    }))

  it.scopedLive("killIfSame kills only the process that still holds its start time (21)", () =>
    Effect.gen(function*() {
      const tree = yield* bashTree("sleep 100")
      const startTime = Option.getOrThrow(yield* Teardown.startTimeOf(tree.pid))
      expect(Teardown.killIfSame(tree.pid, startTime + 1)).toBe(false)
      expect(alive(tree.pid)).toBe(true)
      expect(Teardown.killIfSame(process.pid, Option.getOrThrow(yield* Teardown.startTimeOf(process.pid)))).toBe(false)
      expect(Teardown.killIfSame(tree.pid, startTime)).toBe(true)
      yield* tree.exited
      expect(alive(tree.pid)).toBe(false)
      expect(Teardown.killIfSame(tree.pid, startTime)).toBe(false)
    }))
})

const commOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim()
  } catch {
    return ""
  }
}

const childrenOf = (pid: number): Array<number> =>
  fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number).filter((p) => {
    try {
      const text = fs.readFileSync(`/proc/${p}/stat`, "latin1")
      return Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]) === pid
    } catch {
      return false
    }
  })

// The cgroup tests need a writable cgroup v2 (this machine has one); without it the sweep tests cover teardown.
describe("cgroup v2", () => {
  it.scopedLive.runIf(cgroupAvailable)(
    "runs the program itself (same pid) inside the session cgroup",
    () =>
      Effect.gen(function*() {
        const session = yield* createSession("same pid")
        expect(path.basename(session.path)).toMatch(/^same_pid-\d+$/)
        const argv = session.wrap("sleep", ["100"])
        const tree = yield* spawnTree(argv.file, argv.args)
        yield* waitUntil(() => fs.readFileSync(`/proc/${tree.pid}/comm`, "utf8").trim() === "sleep")
        const own = fs.readFileSync(`/proc/${tree.pid}/cgroup`, "utf8")
        expect(session.path.endsWith(parseOwnCgroup(own)!)).toBe(true)
        expect(yield* session.pids).toEqual([tree.pid])
        const report = yield* session.kill
        expect(report).toEqual({ containment: "cgroup", signalled: 1, survivors: [] })
        yield* tree.exited
      })
  )

  it.scopedLive.runIf(cgroupAvailable)(
    "cgroup.kill ends a setsid double-forked daemon the sweep cannot see",
    () =>
      Effect.gen(function*() {
        const dir = yield* Effect.scoped(Effect.gen(function*() {
          const session = yield* createSession("daemon")
          const argv = session.wrap("bash", ["-c", "setsid sh -c 'sleep 100 &'; trap '' TERM; sleep 100 & wait"])
          const tree = yield* spawnTree(argv.file, argv.args)
          const sleepers = () => (readProcs(session.path) ?? []).filter((pid) => commOf(pid) === "sleep")
          yield* waitUntil(() => sleepers().length >= 2)
          const members = readProcs(session.path) ?? []
          const daemon = sleepers().find((pid) => !treePids(tree.pid).includes(pid))
          expect(daemon).toBeDefined()
          const swept = yield* Teardown.sweep(tree.pid, { graceMs: 1_000, includeRoot: false })
          expect(swept.survivors).toEqual([])
          expect(alive(daemon!)).toBe(true)
          const report = yield* session.terminate({ graceMs: 1_000, rootPid: tree.pid })
          expect(report.survivors).toEqual([])
          expect(noneAlive(members)).toBe(true)
          expect(readProcs(session.path)).toEqual([])
          return session.path
        }))
        expect(fs.existsSync(dir)).toBe(false)
      })
  )
})

describe("cgroup v2 (graceful)", () => {
  it.scopedLive.runIf(cgroupAvailable)(
    "gives TERM handlers their grace before cgroup.kill",
    () =>
      Effect.gen(function*() {
        const marker = path.join(os.tmpdir(), `teardown-grace-${process.pid}-${Date.now()}`)
        const session = yield* createSession("grace")
        const argv = session.wrap("bash", [
          "-c",
          `bash -c 'trap "echo cleaned > ${marker}; exit 0" TERM; while :; do sleep 0.05; done' & wait`
        ])
        const tree = yield* spawnTree(argv.file, argv.args)
        yield* waitUntil(() => (readProcs(session.path) ?? []).length >= 3)
        const report = yield* session.terminate({ graceMs: 5_000, rootPid: tree.pid })
        expect(report.survivors).toEqual([])
        expect(fs.readFileSync(marker, "utf8")).toBe("cleaned\n")
        fs.rmSync(marker)
      })
  )
})

describe("contain", () => {
  const closeContained = (kind: "cgroup" | "sweep") =>
    Effect.gen(function*() {
      const contained = yield* Teardown.contain("contained", { graceMs: 1_000 })
      expect(contained.kind).toBe(kind)
      const argv = contained.wrap("bash", ["-c", "trap '' TERM; sleep 100 & sleep 100 & wait"])
      expect(argv.file).toBe(kind === "cgroup" ? "/bin/sh" : "bash")
      const tree = yield* spawnTree(argv.file, argv.args)
      yield* waitUntil(() => treePids(tree.pid).filter((pid) => commOf(pid) === "sleep").length >= 2)
      const pids = treePids(tree.pid)
      const tracked = yield* contained.track(tree.pid)
      const report = yield* tracked.terminate
      expect(report).toEqual({ containment: kind, signalled: 2, survivors: [] })
      expect(noneAlive(pids)).toBe(true)
    })

  it.scopedLive("falls back to the sweep", () =>
    closeContained("sweep").pipe(
      Effect.provide(Teardown.layerCgroupsDisabled),
      Effect.provide(Teardown.layerHostExitNoop)
    ))

  it.scopedLive.runIf(cgroupAvailable)("uses a session cgroup when there is one", () =>
    closeContained("cgroup").pipe(
      Effect.provideService(Teardown.Cgroups, cgroupsService),
      Effect.provide(Teardown.layerHostExitNoop)
    ))
})

describe("host exit", () => {
  const fakeHost = () => {
    const events = new EventEmitter()
    const kills: Array<readonly [number, HostSignal]> = []
    const host: HostProcess = {
      pid: 4242,
      on: (event, listener) => void events.on(event, listener),
      off: (event, listener) => void events.off(event, listener),
      listenerCount: (event) => events.listenerCount(event),
      kill: (pid, signal) => void kills.push([pid, signal])
    }
    return { events, kills, host }
  }
  const tree = { rootPid: 1000, startTime: 5 }

  it("the synchronous kill always makes its first round, however late the host runs (a loaded machine)", () => {
    const world = fakeWorld(50, [
      { pid: 50, ppid: 1, pgid: 50, sid: 50, start: 1, state: "S" },
      { pid: 1000, ppid: 1, pgid: 1000, sid: 1000, start: 5, state: "S" },
      { pid: 1001, ppid: 1000, pgid: 1000, sid: 1000, start: 6, state: "S", term: "ignored" }
    ])
    // A deadline already past when the rounds begin: the rescans are skipped, never the kills found.
    killTreesSync(world.env, [tree], 0)
    expect(world.sent).toEqual(expect.arrayContaining([[1000, "SIGKILL"], [1001, "SIGKILL"]]))
    expect([...world.table.values()].map((p) => p.state)).toEqual(["S", "Z", "Z"])
  })

  it.live("listens only while something is tracked and kills every tree on exit", () =>
    Effect.gen(function*() {
      const { events, host } = fakeHost()
      const killed: Array<number> = []
      const registry = makeRegistry(host, (ts) => void killed.push(...ts.map((t) => t.rootPid)))
      expect(events.listenerCount("exit")).toBe(0)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* registry.track(tree)
        yield* registry.track({ rootPid: 2000, startTime: 6 })
        expect(["exit", "SIGINT", "SIGTERM", "SIGHUP"].map((e) => events.listenerCount(e))).toEqual([1, 1, 1, 1])
        events.emit("exit", 0)
        expect(killed).toEqual([1000, 2000])
      }))
      expect(registry.size()).toBe(0)
      expect(["exit", "SIGINT", "SIGTERM", "SIGHUP"].map((e) => events.listenerCount(e))).toEqual([0, 0, 0, 0])
    }))

  it.live("re-raises a signal only when no other listener is left", () =>
    Effect.gen(function*() {
      const alone = fakeHost()
      const killed: Array<number> = []
      const registry = makeRegistry(alone.host, (ts) => void killed.push(...ts.map((t) => t.rootPid)))
      yield* Effect.scoped(Effect.gen(function*() {
        yield* registry.track(tree)
        alone.events.emit("SIGTERM", "SIGTERM")
        expect(killed).toEqual([1000])
        expect(alone.kills).toEqual([[4242, "SIGTERM"]])
        expect(alone.events.listenerCount("SIGTERM") + alone.events.listenerCount("exit")).toBe(0)
      }))

      const shared = fakeHost()
      shared.events.on("SIGINT", () => {})
      const other = makeRegistry(shared.host, (ts) => void killed.push(...ts.map((t) => t.rootPid)))
      yield* Effect.scoped(Effect.gen(function*() {
        yield* other.track(tree)
        shared.events.emit("SIGINT", "SIGINT")
        expect(killed).toEqual([1000, 1000])
        expect(shared.kills).toEqual([])
        expect(shared.events.listenerCount("exit")).toBe(1)
      }))
      expect(shared.events.listenerCount("exit")).toBe(0)
      expect(shared.events.listenerCount("SIGINT")).toBe(1)
    }))

  it.scopedLive("killTreeSync kills a tree at once", () =>
    Effect.gen(function*() {
      const tree = yield* bashTree("trap '' TERM; sleep 100 & sleep 100 & wait")
      yield* waitUntil(() => treePids(tree.pid).length >= 3)
      const pids = treePids(tree.pid)
      const startTime = Option.getOrThrow(yield* Teardown.startTimeOf(tree.pid))
      const signalled = Teardown.killTreeSync({ rootPid: tree.pid, startTime })
      expect([...signalled].sort()).toEqual([...pids].sort())
      yield* waitUntil(() => noneAlive(pids))
      expect(noneAlive(pids)).toBe(true)
    }))

  const hostDir = buildHostModules()
  const hostScript = path.join(hostDir, "host.mjs")
  fs.writeFileSync(hostScript, HOST_SCRIPT)

  const runHost = (how: "exit" | "throw" | "SIGTERM", containment: "sweep" | "cgroup") =>
    Effect.gen(function*() {
      const script = `${
        containment === "cgroup" ? "setsid sh -c 'sleep 100 &'; " : ""
      }trap '' TERM; sleep 100 & sleep 100 & wait`
      const host = spawn(process.execPath, [hostScript, how, containment, script], {
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stderr = ""
      host.stderr.on("data", (chunk) => (stderr += chunk))
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        host.once("exit", (code, signal) => resolve({ code, signal }))
      )
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => {
          host.kill("SIGKILL")
          return exited
        })
      )
      const line = yield* Effect.promise(() =>
        new Promise<string>((resolve) => {
          let out = ""
          host.stdout.on("data", (chunk) => {
            out += chunk
            if (out.includes("\n")) resolve(out.split("\n")[0]!)
          })
          host.once("exit", () => resolve(out))
        })
      )
      const ready = JSON.parse(line || "{}") as { rootPid?: number; cgroupPath?: string }
      expect(ready.rootPid, stderr).toBeDefined()
      const rootPid = ready.rootPid!
      const members =
        () => [...new Set([...treePids(rootPid), ...(ready.cgroupPath ? readProcs(ready.cgroupPath) ?? [] : [])])]
      yield* waitUntil(() =>
        members().filter((pid) => commOf(pid) === "sleep").length >= (containment === "cgroup" ? 3 : 2)
      )
      const pids = members()
      yield* Effect.addFinalizer(() => Effect.sync(() => pids.forEach((pid) => alive(pid) && process.kill(pid, 9))))
      if (how === "SIGTERM") host.kill("SIGTERM")
      else host.stdin.write("go\n")
      const status = yield* Effect.promise(() => exited)
      yield* waitUntil(() => noneAlive(pids), 5_000)
      if (ready.cgroupPath !== undefined) {
        expect(fs.existsSync(ready.cgroupPath)).toBe(false)
        fs.rmdirSync(path.dirname(ready.cgroupPath))
      }
      return { status, pids, stillAlive: pids.filter(alive) }
    })

  it.scopedLive("a host that exits normally kills its tracked tree", () =>
    Effect.gen(function*() {
      const { status, pids, stillAlive } = yield* runHost("exit", "sweep")
      expect(status).toEqual({ code: 0, signal: null })
      expect(pids.length).toBeGreaterThanOrEqual(3)
      expect(stillAlive).toEqual([])
    }))

  it.scopedLive("a host killed by SIGTERM kills its tree and still dies of SIGTERM", () =>
    Effect.gen(function*() {
      const { status, stillAlive } = yield* runHost("SIGTERM", "sweep")
      expect(status).toEqual({ code: null, signal: "SIGTERM" })
      expect(stillAlive).toEqual([])
    }))

  it.scopedLive("a host that dies of an uncaught exception kills its tree", () =>
    Effect.gen(function*() {
      const { status, stillAlive } = yield* runHost("throw", "sweep")
      expect(status).toEqual({ code: 1, signal: null })
      expect(stillAlive).toEqual([])
    }))

  it.scopedLive.runIf(cgroupAvailable)(
    "a host's exit kills its cgroup, daemons included",
    () =>
      Effect.gen(function*() {
        const { status, pids, stillAlive } = yield* runHost("SIGTERM", "cgroup")
        expect(status).toEqual({ code: null, signal: "SIGTERM" })
        expect(pids.length).toBeGreaterThanOrEqual(4)
        expect(stillAlive).toEqual([])
      })
  )
})
