/**
 * The installed footprint (a row without a target): the publishable packages packed (`scripts/pack.mjs`) and
 * installed with plain npm into an empty directory, as a user installs them. The row is the size of the
 * installed `node_modules`; its notes say how many packages, and what dominates. Only in a full run (npm
 * builds the native addons: minutes).
 */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import type { RunOptions } from "./Harness.js"
import { promise } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { skipped } from "./Metric.js"
import { repositoryRoot } from "./Report.js"
import * as Stats from "./Stats.js"

const group = "lean"
const MiB = 2 ** 20

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  promisify(execFile)(command, [...args], { cwd, encoding: "utf8", maxBuffer: 64 << 20 })

/** Bytes under `dir` (files as stored: their sizes, links not followed). */
const sizeOf = (dir: string): number => {
  let total = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) total += sizeOf(full)
    else if (entry.isFile()) total += fs.statSync(full).size
  }
  return total
}

/** Every installed package: its directory under node_modules (scoped ones included). */
const packagesIn = (modules: string): Array<{ readonly name: string; readonly dir: string }> =>
  fs.readdirSync(modules).flatMap((name) => {
    if (name.startsWith(".")) return []
    if (name.startsWith("@")) {
      return fs.readdirSync(path.join(modules, name)).map((inner) => ({
        name: `${name}/${inner}`,
        dir: path.join(modules, name, inner)
      }))
    }
    return [{ name, dir: path.join(modules, name) }]
  })

const measure = Effect.acquireUseRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-footprint-"))),
  (dir) =>
    promise(async () => {
      const root = repositoryRoot()
      const packs = path.join(dir, "packs")
      const app = path.join(dir, "app")
      fs.mkdirSync(app)
      const tarballs = (await run(process.execPath, [path.join(root, "scripts/pack.mjs"), packs], root)).stdout
        .split("\n").filter((line) => line !== "")
      fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "footprint", private: true }))
      await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs], app)
      const modules = path.join(app, "node_modules")
      const lock = JSON.parse(fs.readFileSync(path.join(modules, ".package-lock.json"), "utf8"))
      const count = Object.keys(lock.packages ?? {}).filter((key) => key.startsWith("node_modules/")).length
      const largest = packagesIn(modules).map((p) => ({ name: p.name, bytes: sizeOf(p.dir) }))
        .sort((a, b) => b.bytes - a.bytes)
      const prebuilds = path.join(modules, "node-pty", "prebuilds")
      return {
        total: sizeOf(modules),
        count,
        largest: largest.slice(0, 6),
        ptyPrebuilds: fs.existsSync(prebuilds) ? sizeOf(prebuilds) : 0
      }
    }),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** The footprint row (skipped with `--quick`). */
export const footprint = (options: RunOptions): Effect.Effect<ReadonlyArray<Metric>> =>
  options.quick
    ? Effect.succeed([skipped({ name: "lean.footprint", group, kind: "ours", unit: "MiB" }, "--quick: not measured")])
    : Effect.map(measure, (found): ReadonlyArray<Metric> => {
      options.progress("lean: installed footprint")
      return [{
        name: "lean.footprint",
        group,
        kind: "ours",
        unit: "MiB",
        value: Stats.round(found.total / MiB),
        compared: [],
        notes: [
          `npm install of the packed tarballs into an empty directory: ${found.count} packages, ${
            Stats.round(found.total / MiB)
          } MiB in node_modules`,
          `largest: ${found.largest.map((p) => `${p.name} ${Stats.round(p.bytes / MiB)} MiB`).join(", ")}`,
          `node-pty's prebuilt binaries for other platforms (prebuilds/): ${Stats.round(found.ptyPrebuilds / MiB)} MiB`
        ]
      }]
    })
