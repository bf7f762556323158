import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import type { ProcReader, Signaller, TreeSignal } from "../src/internal/teardown/procTable.js"
import * as Teardown from "../src/Teardown.js"

// ---------------------------------------------------------------------------------------------------------------
// A scripted process table, for the identity logic.
// ---------------------------------------------------------------------------------------------------------------

export interface FakeProc {
  readonly pid: number
  ppid: number
  pgid: number
  sid: number
  start: number
  state: string
  term?: "handled" | "ignored" | "default"
}

const mask = (on: boolean) => (on ? "0000000000004000" : "0000000000000000")

export const fakeWorld = (selfPid: number, procs: ReadonlyArray<FakeProc>) => {
  const table = new Map<number, FakeProc>(procs.map((p) => [p.pid, { ...p }]))
  const sent: Array<readonly [number, TreeSignal]> = []
  const hooks = new Map<string, () => void>()
  const reader: ProcReader = {
    pids: () => [...table.keys()],
    stat: (pid) => {
      const p = table.get(pid)
      if (p === undefined) return undefined
      const fields = Array.from({ length: 50 }, () => "0")
      fields[0] = p.state
      fields[1] = String(p.ppid)
      fields[2] = String(p.pgid)
      fields[3] = String(p.sid)
      fields[19] = String(p.start)
      return `${pid} (fake ) proc) ${fields.join(" ")}\n`
    },
    status: (pid) => {
      const p = table.get(pid)
      if (p === undefined) return undefined
      return `Name:\tfake\nSigBlk:\t${mask(false)}\nSigIgn:\t${mask(p.term === "ignored")}\nSigCgt:\t${
        mask(p.term === "handled")
      }\n`
    }
  }
  const signal: Signaller = (pid, sig) => {
    sent.push([pid, sig])
    const hook = hooks.get(`${pid}:${sig}`)
    if (hook !== undefined) return hook()
    const p = table.get(pid)
    if (p === undefined) return
    if (sig === "SIGKILL" || (sig === "SIGTERM" && (p.term ?? "default") === "default")) p.state = "Z"
  }
  return { table, sent, hooks, env: { reader, signal, selfPid } }
}

// ---------------------------------------------------------------------------------------------------------------
// Real processes.
// ---------------------------------------------------------------------------------------------------------------

interface Stat {
  readonly pid: number
  readonly state: string
  readonly ppid: number
  readonly pgid: number
}

const statOf = (pid: number): Stat | undefined => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { pid, state: f[0]!, ppid: Number(f[1]), pgid: Number(f[2]) }
  } catch {
    return undefined
  }
}

export const alive = (pid: number): boolean => {
  const s = statOf(pid)
  return s !== undefined && s.state !== "Z" && s.state !== "X"
}

/** Live processes in `rootPid`'s group or below it by parent links (an independent little scan). */
export const treePids = (rootPid: number): Array<number> => {
  const all = fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number).map(statOf)
    .filter((s): s is Stat => s !== undefined && s.state !== "Z" && s.state !== "X")
  const found = new Set<number>([rootPid])
  let grew = true
  while (grew) {
    grew = false
    for (const s of all) {
      if (!found.has(s.pid) && (found.has(s.ppid) || s.pgid === rootPid)) {
        found.add(s.pid)
        grew = true
      }
    }
  }
  return [...found].filter(alive)
}

export const waitUntil = (condition: () => boolean, ms = 10_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    while (!condition()) {
      if (Date.now() >= deadline) return false
      yield* Effect.sleep(10)
    }
    return true
  })

export interface Tree {
  readonly pid: number
  readonly child: ChildProcess
  readonly exited: Effect.Effect<void>
  /** Read right after the spawn, while the pid is surely still this process (at worst a zombie). */
  readonly startTime: number
}

const forceKill = (pids: ReadonlyArray<number>) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }
}

/** Starts `file args` detached (its own process group); the scope's release kills whatever is left. */
export const spawnTree = (file: string, args: ReadonlyArray<string>, options: { readonly detached?: boolean } = {}) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const exit = yield* Deferred.make<void>()
      const child = spawn(file, [...args], { detached: options.detached ?? true, stdio: "ignore" })
      child.once("exit", () => Deferred.unsafeDone(exit, Effect.void))
      child.once("error", () => Deferred.unsafeDone(exit, Effect.void))
      if (child.pid === undefined) return yield* Effect.die(`could not spawn ${file}`)
      const startTime = Number(
        fs.readFileSync(`/proc/${child.pid}/stat`, "latin1").split(") ").at(-1)!.split(" ")[19]
      )
      return { pid: child.pid, child, exited: Deferred.await(exit), startTime } satisfies Tree
    }),
    (tree) =>
      Effect.gen(function*() {
        const left = treePids(tree.pid)
        if (options.detached ?? true) yield* Teardown.sweep(tree.pid, { graceMs: 0, includeRoot: true })
        forceKill(left)
        yield* tree.exited
      })
  )

export const bashTree = (script: string) => spawnTree("bash", ["-c", script])

/** The kernel's own accounting: a pid is gone when `/proc/<pid>` is a zombie or absent. */
export const noneAlive = (pids: ReadonlyArray<number>) => pids.filter(alive).length === 0

// ---------------------------------------------------------------------------------------------------------------
// The sources, transpiled for a plain `node` child (the host-exit tests run a real host process).
// ---------------------------------------------------------------------------------------------------------------

const here = path.dirname(fileURLToPath(import.meta.url))
const packageDir = path.resolve(here, "..")

const MODULES = [
  "Teardown.ts",
  "internal/teardown/cgroup.ts",
  "internal/teardown/cgroupLimits.ts",
  "internal/teardown/hostExit.ts",
  "internal/proc/procFs.ts",
  "internal/teardown/procTable.ts",
  "internal/teardown/sweep.ts",
  "internal/teardown/treeTracker.ts"
]

/**
 * Transpiles this module's files (type-only imports of other packages vanish) into
 * `packages/node/build/teardown-host/`, where `effect` resolves from the package's node_modules.
 */
export const buildHostModules = (): string => {
  const outDir = path.join(packageDir, "build", "teardown-host")
  for (const file of MODULES) {
    const source = fs.readFileSync(path.join(packageDir, "src", file), "utf8")
    const output = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
      fileName: file
    }).outputText
    const target = path.join(outDir, file.replace(/\.ts$/, ".js"))
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, output)
  }
  fs.writeFileSync(path.join(outDir, "package.json"), JSON.stringify({ type: "module" }))
  return outDir
}

/** A host process: spawns a tree, tracks it with `HostExit`, prints it, then exits as told. */
export const HOST_SCRIPT = `
import { spawn } from "node:child_process"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Teardown from "./Teardown.js"

const [how, containment, script] = process.argv.slice(2)

const program = Effect.gen(function*() {
  const hostExit = yield* Teardown.HostExit
  let argv = { file: "bash", args: ["-c", script] }
  let cgroupPath
  if (containment === "cgroup") {
    const root = Option.getOrThrow(yield* (yield* Teardown.Cgroups).available)
    const session = Option.getOrThrow(yield* root.create("host-exit"))
    argv = session.wrap(argv.file, argv.args)
    cgroupPath = session.path
  }
  const child = spawn(argv.file, argv.args, { detached: true, stdio: "ignore" })
  const startTime = Option.getOrThrow(yield* Teardown.startTimeOf(child.pid))
  yield* hostExit.track({ rootPid: child.pid, startTime, cgroupPath })
  process.stdout.write(JSON.stringify({ rootPid: child.pid, cgroupPath }) + "\\n")
  process.stdin.once("data", () => {
    if (how === "exit") process.exit(0)
    if (how === "throw") throw new Error("boom")
  })
  return yield* Effect.never
})

Effect.runFork(program.pipe(Effect.scoped, Effect.provide(Teardown.layer)))
`
