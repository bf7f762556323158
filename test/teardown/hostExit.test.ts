import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { alive, cgroupsUsable, commOf, killAll, sessionCgroupParent, tagged, waitUntil } from "./support.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const hostScript = path.join(here, "fixtures", "host.mjs")
const built = ["core", "node"].every((name) =>
  fs.existsSync(path.resolve(here, "../../packages", name, "dist/index.js"))
)

type Ending = "exit" | "throw" | "SIGINT" | "SIGTERM"

/**
 * A real host (`fixtures/host.mjs`, over the built packages) opens two sessions with process trees —
 * a TERM-and-HUP-ignoring child, a plain one, and (with cgroups) a setsid double-forked daemon — and then
 * ends the way the test says. Every process the sessions started carries the tag, the host too.
 */
const runHost = (ending: Ending, containment: "auto" | "sweep") =>
  Effect.gen(function*() {
    const tag = randomUUID()
    const host = spawn(process.execPath, [hostScript, containment, "2"], {
      cwd: path.dirname(hostScript),
      env: { ...process.env, TEARDOWN_TAG: tag },
      stdio: ["pipe", "pipe", "pipe"]
    })
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      host.once("exit", (code, signal) => resolve({ code, signal }))
    )
    let stderr = ""
    host.stderr.on("data", (chunk) => (stderr += chunk))
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        host.kill("SIGKILL")
        killAll(tagged(tag))
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
    const ready = JSON.parse(line || "{}") as { sessions?: Array<{ pid: number; containment: string }> }
    expect(ready.sessions, stderr).toHaveLength(2)
    const sleepers = containment === "sweep" ? 4 : 6
    yield* waitUntil(() => tagged(tag).filter((pid) => commOf(pid) === "sleep").length >= sleepers)
    const trees = tagged(tag).filter((pid) => pid !== host.pid)
    const shells = ready.sessions!.map((session) => session.pid)
    if (ending === "SIGINT" || ending === "SIGTERM") host.kill(ending)
    else host.stdin.write(`${ending}\n`)
    const status = yield* Effect.promise(() => exited)
    yield* waitUntil(() => trees.filter(alive).length === 0 && shells.filter(alive).length === 0, 3_000)
    // The session cgroups go with their trees; the host's (empty) parent is left to the next host's probe,
    // which removes the parents of dead hosts.
    const parent = sessionCgroupParent(host.pid!)
    const cgroupsLeft = parent !== undefined && fs.existsSync(parent)
      ? fs.readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((e) => e.name)
      : []
    if (parent !== undefined && fs.existsSync(parent) && cgroupsLeft.length === 0) fs.rmdirSync(parent)
    return {
      cgroupsLeft,
      status,
      sessions: ready.sessions!,
      trees,
      left: [...trees, ...shells].filter(alive)
    }
  })

// The host runs the built packages, as a user's program would: skipped (not failed) when they were never
// built — `pnpm build` first, as for the MCP tests.
describe.runIf(built)("the host process exiting kills every tracked tree (22)", () => {
  const cases: ReadonlyArray<readonly [Ending, { code: number | null; signal: string | null }]> = [
    ["exit", { code: 0, signal: null }],
    ["throw", { code: 1, signal: null }],
    ["SIGINT", { code: null, signal: "SIGINT" }],
    ["SIGTERM", { code: null, signal: "SIGTERM" }]
  ]
  for (const containment of cgroupsUsable ? (["auto", "sweep"] as const) : (["sweep"] as const)) {
    for (const [ending, status] of cases) {
      it.scopedLive(`${ending} (${containment === "auto" ? "cgroup" : "sweep"})`, () =>
        Effect.gen(function*() {
          const result = yield* runHost(ending, containment)
          expect(result.status).toEqual(status)
          expect(result.sessions.map((session) => session.containment)).toEqual(
            containment === "auto" ? ["cgroup", "cgroup"] : ["sweep", "sweep"]
          )
          expect(result.trees.length).toBeGreaterThanOrEqual(containment === "auto" ? 6 : 4)
          expect(result.left).toEqual([])
          expect(result.cgroupsLeft).toEqual([])
        }))
    }
  }
})
