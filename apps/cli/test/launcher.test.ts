/**
 * The binary's launcher (apps/cli/launcher.cjs, dist/bin.js once built): the bundle's chunks run through
 * `vm.Script` with V8's code cache. The cache is used when it is valid; a cache V8 rejects (truncated, of another
 * source) or cannot be read is a start without it, then written anew; the start never fails for it. Each start is
 * a fresh node (a process's own compilation cache would answer a second compile of the same source in-process).
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"

const launcher = path.resolve(__dirname, "../launcher.cjs")
const bin = path.resolve(__dirname, "../dist/bin.js")

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "launcher-test-"))
  dirs.push(dir)
  return dir
}

/** A bundle's shape in miniature: an entry, a chunk it requires, a chunk behind a lowered `import()`. */
const makeDist = () => {
  const dist = tempDir()
  fs.writeFileSync(
    path.join(dist, "main.js"),
    [
      `#!/usr/bin/env node`,
      `var shared = require("./chunk-shared.js")`,
      `globalThis.ran.push("main:" + shared.twice(21))`,
      `globalThis.later = Promise.resolve().then(() => require("./chunk-lazy.js")).then((lazy) => lazy.name)`
    ].join("\n")
  )
  fs.writeFileSync(
    path.join(dist, "chunk-shared.js"),
    `exports.twice = function twice(n) { return [1, 2].map((k) => n * k).reduce((a, b) => a + b) - n }\n` +
      `globalThis.ran.push("shared")`
  )
  fs.writeFileSync(path.join(dist, "chunk-lazy.js"), `exports.name = "lazy"`)
  return dist
}

interface Start {
  readonly ran: ReadonlyArray<string>
  readonly later: string
  readonly status: Record<string, string>
  readonly written: ReadonlyArray<string>
}

/**
 * One start in a fresh node: what ran, each chunk's cache, which caches it wrote. `over`: the caches are written as
 * by a start that ran its 2 s (else as by one that exited sooner).
 */
const start = (dist: string, cacheDir: string | undefined, over = true): Start => {
  const program = [
    `globalThis.ran = []`,
    `const { run } = require(${JSON.stringify(launcher)})`,
    `const { status, write } = run(${JSON.stringify(dist)}, "main.js", ${JSON.stringify(cacheDir)})`,
    `globalThis.later.then((later) => process.stdout.write(JSON.stringify({ ran, later, status, written: write(${over}) })))`
  ].join("\n")
  const result = spawnSync(process.execPath, ["-e", program], { encoding: "utf8" })
  expect(result.stderr).toBe("")
  expect(result.status).toBe(0)
  return JSON.parse(result.stdout) as Start
}

const ranAll = { ran: ["shared", "main:42"], later: "lazy" }

describe("the launcher's code cache", () => {
  it("a first start writes each chunk's cache, the next uses them", () => {
    const dist = makeDist()
    const cache = tempDir()
    const first = start(dist, cache)
    expect(first).toMatchObject(ranAll)
    expect(first.status).toEqual({ "main.js": "missing", "chunk-shared.js": "missing", "chunk-lazy.js": "missing" })
    expect([...first.written].sort()).toEqual(["chunk-lazy.js", "chunk-shared.js", "main.js"])
    const second = start(dist, cache)
    expect(second).toMatchObject(ranAll)
    expect(second.status).toEqual({ "main.js": "accepted", "chunk-shared.js": "accepted", "chunk-lazy.js": "accepted" })
    expect(second.written).toEqual([])
  })

  it("caches written by a start that ended before its 2 s are marked early, and written again by the next start that runs them", () => {
    // a client that only lists the tools ends the server at once: its caches hold what that compiled, and a valid
    // cache is otherwise never written again
    const dist = makeDist()
    const cache = tempDir()
    const mark = path.join(cache, "early")
    const all = ["chunk-lazy.js", "chunk-shared.js", "main.js"]
    const accepted = { "main.js": "accepted", "chunk-shared.js": "accepted", "chunk-lazy.js": "accepted" }
    const first = start(dist, cache, false)
    expect(first).toMatchObject(ranAll)
    expect([...first.written].sort()).toEqual(all)
    expect(fs.existsSync(mark)).toBe(true)
    const short = start(dist, cache, false)
    expect(short.status).toEqual(accepted)
    expect(short.written).toEqual([])
    expect(fs.existsSync(mark)).toBe(true)
    const full = start(dist, cache)
    expect(full.status).toEqual(accepted)
    expect([...full.written].sort()).toEqual(all)
    expect(fs.existsSync(mark)).toBe(false)
    expect(start(dist, cache).written).toEqual([])
    expect(start(dist, cache, false).written).toEqual([])
    expect(fs.existsSync(mark)).toBe(false)
  })

  it("a truncated cache, or one of another source, is rejected: the chunk compiles as usual and its cache is rewritten", () => {
    const dist = makeDist()
    const cache = tempDir()
    start(dist, cache)
    const main = path.join(cache, "main.js.cache")
    fs.truncateSync(main, Math.floor(fs.statSync(main).size / 2))
    fs.copyFileSync(path.join(cache, "chunk-lazy.js.cache"), path.join(cache, "chunk-shared.js.cache"))
    const damaged = start(dist, cache)
    expect(damaged).toMatchObject(ranAll)
    expect(damaged.status).toEqual({
      "main.js": "rejected",
      "chunk-shared.js": "rejected",
      "chunk-lazy.js": "accepted"
    })
    expect([...damaged.written].sort()).toEqual(["chunk-shared.js", "main.js"])
    expect(start(dist, cache).status).toEqual({
      "main.js": "accepted",
      "chunk-shared.js": "accepted",
      "chunk-lazy.js": "accepted"
    })
  })

  it("a cache that cannot be read or written, or none at all, is a start without it", () => {
    const dist = makeDist()
    const cache = tempDir()
    fs.mkdirSync(path.join(cache, "main.js.cache"))
    const unreadable = start(dist, cache)
    expect(unreadable).toMatchObject(ranAll)
    expect(unreadable.status["main.js"]).toBe("unreadable")
    expect(unreadable.written).not.toContain("main.js")
    const none = start(dist, undefined)
    expect(none).toMatchObject(ranAll)
    expect(none.written).toEqual([])
  })
})

describe("the cache's directory", () => {
  const { cacheDirectory } = createRequire(__filename)(launcher) as {
    readonly cacheDirectory: (root: string, build: string) => string | undefined
  }
  const uid = process.getuid!()

  it("is made in the user's private directory, per node version, architecture and build", () => {
    const root = tempDir()
    expect(cacheDirectory(root, "b1")).toBe(
      path.join(root, `agent-terminal-${uid}`, "compile-cache", `${process.version}-${process.arch}-b1`)
    )
    expect(fs.statSync(path.join(root, `agent-terminal-${uid}`)).mode & 0o777).toBe(0o700)
  })

  it("keeps other builds' caches for a week after their last start, then removes them", () => {
    const { prune } = createRequire(__filename)(launcher) as {
      readonly prune: (dir: string, now?: number) => ReadonlyArray<string>
    }
    const root = tempDir()
    const now = Date.now()
    const day = 24 * 60 * 60 * 1000
    const dirOf = (build: string, daysAgo: number) => {
      const dir = cacheDirectory(root, build)!
      fs.mkdirSync(path.join(dir, "mcp"))
      fs.writeFileSync(path.join(dir, "mcp", "main.js.cache"), "x")
      fs.utimesSync(dir, (now - daysAgo * day) / 1000, (now - daysAgo * day) / 1000)
      return dir
    }
    const current = dirOf("0123456789abcdef", 30)
    const recent = dirOf("1111111111111111", 6)
    const old = dirOf("2222222222222222", 8)
    const parent = path.dirname(current)
    const otherNode = path.join(parent, "v18.19.0-x64-3333333333333333")
    fs.mkdirSync(otherNode)
    fs.utimesSync(otherNode, (now - 9 * day) / 1000, (now - 9 * day) / 1000)
    const notOurs = path.join(parent, "notes")
    fs.mkdirSync(notOurs)
    fs.utimesSync(notOurs, (now - 9 * day) / 1000, (now - 9 * day) / 1000)
    const linked = path.join(parent, "v20.0.0-x64-4444444444444444")
    const target = tempDir()
    fs.symlinkSync(target, linked)
    fs.lutimesSync(linked, (now - 9 * day) / 1000, (now - 9 * day) / 1000)
    expect([...prune(current, now)].sort()).toEqual([path.basename(old), path.basename(otherNode)].sort())
    expect(fs.existsSync(old) || fs.existsSync(otherNode)).toBe(false)
    expect([current, recent, notOurs, linked, target].every((dir) => fs.existsSync(dir))).toBe(true)
    expect(fs.statSync(current).mtimeMs).toBeGreaterThan(now - day)
    expect(prune(current, now + 7 * day)).toEqual([path.basename(recent)])
  })

  it("is none when the private directory is open to others or a symlink", () => {
    const open = tempDir()
    fs.mkdirSync(path.join(open, `agent-terminal-${uid}`), { mode: 0o700 })
    fs.chmodSync(path.join(open, `agent-terminal-${uid}`), 0o777)
    expect(cacheDirectory(open, "b1")).toBeUndefined()
    const linked = tempDir()
    fs.symlinkSync(tempDir(), path.join(linked, `agent-terminal-${uid}`))
    expect(cacheDirectory(linked, "b1")).toBeUndefined()
  })
})

describe.runIf(fs.existsSync(bin))("the binary (pnpm build)", () => {
  const main = path.resolve(__dirname, "../dist/main.js")
  const runs = (file: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [file, ...args], { encoding: "utf8", env: { ...process.env, ...env } })
  // a command line the CLI refuses: it loads and runs the CLI, and answers alike every time
  const refused = (env: Record<string, string>) => runs(bin, ["replay"], env)

  it("a start answers the same with no cache, with its cache, with a damaged cache and where none can be kept", () => {
    const root = tempDir()
    const plain = refused({ AGENT_TERMINAL_COMPILE_CACHE: "off" })
    expect(plain).toMatchObject({ status: 1, stdout: "" })
    expect(plain.stderr).toContain("Missing argument <FILE>")
    const cached = () => refused({ AGENT_TERMINAL_COMPILE_CACHE_DIR: root })
    const same = { status: 1, stdout: "", stderr: plain.stderr }
    expect(cached()).toMatchObject(same)
    const files = fs.readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".cache"))
    expect(files.length).toBeGreaterThan(0)
    expect(cached()).toMatchObject(same)
    for (const file of files) fs.truncateSync(path.join(root, file), 100)
    expect(cached()).toMatchObject(same)
    const blocked = path.join(tempDir(), "a-file")
    fs.writeFileSync(blocked, "")
    expect(refused({ AGENT_TERMINAL_COMPILE_CACHE_DIR: blocked })).toMatchObject(same)
  })

  it("--help, -h, --version and every command's --help and -h print what the CLI prints, without loading it", () => {
    const listed = runs(main, ["--help"]).stdout
    // eslint-disable-next-line no-control-regex
    const commands = [...listed.replace(/\x1b\[[0-9;]*m/g, "").matchAll(/^ {2}- ([a-z][a-z-]*) /gm)].map((found) =>
      found[1]!
    )
    expect(commands).toEqual(expect.arrayContaining(["demo", "mcp", "serve", "console", "doctor", "replay"]))
    const forms = [
      ["--help"],
      ["-h"],
      ["--version"],
      ...commands.flatMap((command) => [[command, "--help"], [command, "-h"]])
    ]
    for (const args of forms) {
      const root = tempDir()
      const printed = runs(bin, args, { AGENT_TERMINAL_COMPILE_CACHE_DIR: root })
      expect(printed).toMatchObject({ status: 0, stderr: "", stdout: runs(main, args).stdout })
      expect(printed.stdout.length).toBeGreaterThan(0)
      // the CLI never ran: a start of it writes its chunks' code cache at exit
      expect(fs.readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".cache"))).toEqual(
        []
      )
    }
    // anything else starts the CLI (which writes its code cache), a help among other arguments too
    const root = tempDir()
    const other = ["replay", "x.cast", "--help"]
    expect(runs(bin, other, { AGENT_TERMINAL_COMPILE_CACHE_DIR: root })).toMatchObject({
      status: 0,
      stdout: runs(main, other).stdout
    })
    expect(fs.readdirSync(root, { recursive: true, encoding: "utf8" }).some((f) => f.endsWith(".cache"))).toBe(true)
  })

  it("a command line the CLI refuses is told on stderr, with nothing on stdout (MCP's, for mcp) and exit code 1", () => {
    for (const args of [["mcp", "--no-such-option"], ["mcp", "--http", "not-a-port"], ["nothing-of-ours"]]) {
      const refusedLine = runs(bin, args)
      expect(refusedLine).toMatchObject({ status: 1, stdout: "" })
      expect(refusedLine.stderr.length).toBeGreaterThan(0)
    }
    // the server's own log lines: on stderr, once each (not on stdout, nor twice through a second logger)
    const served = spawnSync(process.execPath, [bin, "mcp"], { encoding: "utf8", input: "", timeout: 30_000 })
    expect(served.stdout).toBe("")
    expect(served.stderr.match(/sessions are not sandboxed/g)).toHaveLength(1)
    const missing = runs(bin, ["replay", path.join(tempDir(), "no-such.cast")])
    expect(missing).toMatchObject({ status: 1, stdout: "" })
    expect(missing.stderr).toContain("no-such.cast")
  })

  it("a directory it must make where none can be (under /proc) is refused at once, with the reason and the path", () => {
    // Node's mkdir with `recursive: true` spins a core there, deaf to SIGTERM: each run is killed if it spins
    const root = tempDir()
    const env = { AGENT_TERMINAL_STATE_DIR: path.join(root, "state"), XDG_RUNTIME_DIR: path.join(root, "run") }
    const nowhere = `/proc/agent-terminal-test-${process.pid}`
    const cases: ReadonlyArray<[ReadonlyArray<string>, Record<string, string>, string]> = [
      [["serve", "--socket", `${nowhere}/d.sock`], {}, `cannot prepare ${nowhere}`],
      [["serve", "--socket", path.join(root, "d.sock"), "--log-file", `${nowhere}/d.log`], {}, `${nowhere}/d.log`],
      [["serve", "--socket", path.join(root, "d.sock")], { AGENT_TERMINAL_STATE_DIR: `${nowhere}/state` }, nowhere],
      [["mcp", "--http", "0", "--token-file", `${nowhere}/token`], {}, `cannot create the state directory ${nowhere}`]
    ]
    for (const [args, more, said] of cases) {
      const run = spawnSync(process.execPath, [bin, ...args], {
        encoding: "utf8",
        input: "",
        timeout: 30_000,
        killSignal: "SIGKILL",
        env: { ...process.env, ...env, ...more }
      })
      expect({ args, signal: run.signal, stdout: run.stdout }).toEqual({ args, signal: null, stdout: "" })
      expect(run.status).toBeGreaterThan(0)
      expect(run.stderr).toContain(said)
      expect(run.stderr).toContain("ENOENT")
      expect(run.stderr).not.toMatch(/^\s+at /m)
    }
  })
})
