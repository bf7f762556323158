/**
 * Time goes through Effect's `Clock` (so a `TestClock` reaches it). The wall clock (`Date.now`, `new Date()`)
 * is read only where a file below says why, and each such line carries its own comment (on it, or on the line
 * before). A new `Date.now()` anywhere else in a package's or app's sources fails here.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** Files that may read the wall clock, and why. Each must still do so (a stale entry fails). */
const allowed: Record<string, string> = {
  "packages/core/src/internal/clock/wake.ts":
    "the live clock's timers themselves: the send path reads the time several times a send, measured in docs/performance.md",
  "packages/node/src/internal/teardown/hostExit.ts":
    "synchronous spins (exit handlers, the reaper): they block the event loop, so no other clock advances meanwhile",
  "packages/node/src/reaperMain.ts": "a process that outlives its owner and runs no Effect",
  "packages/node/src/FileRecordings.ts": "a recording's age, against modification times the filesystem stamps",
  "packages/fleet/src/TestFleet.ts": "a Promise polling a real server, sleeping on setTimeout",
  "packages/fleet/src/internal/natsServer.ts": "a Promise polling a real nats-server, sleeping on setTimeout"
}

/** Folders the scan leaves out: the benchmark measures with the wall clock (what it measures is time). */
const leftOut: ReadonlyArray<string> = [
  "apps/bench/"
]

const WALL_CLOCK = /\bDate\.now\b|\bnew Date\(\)/g

const isComment = (line: string): boolean => /^\s*(\/\/|\/\*|\*)/.test(line)

/** Each read of the wall clock in `text`: its line, and whether a comment says why (on it or just above). */
const wallClockReads = (text: string): Array<{ readonly line: number; readonly commented: boolean }> => {
  const lines = text.split("\n")
  return lines.flatMap((line, index) => {
    if (isComment(line)) return []
    return [...line.matchAll(WALL_CLOCK)].map((match) => ({
      line: index + 1,
      commented: line.indexOf("//", match.index) > 0 || (index > 0 && isComment(lines[index - 1]!))
    }))
  })
}

const sources = (directory: string): Array<string> =>
  fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(full)
    return /\.(ts|mts|tsx)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : []
  })

const sourceFiles = (): Array<string> =>
  ["packages", "apps"].flatMap((group) =>
    fs.readdirSync(path.join(root, group), { withFileTypes: true }).flatMap((entry) => {
      const src = path.join(root, group, entry.name, "src")
      return entry.isDirectory() && fs.existsSync(src) ? sources(src) : []
    })
  ).map((file) => path.relative(root, file).split(path.sep).join("/"))

describe("time through Clock", () => {
  it("the scan finds a bare Date.now(), and accepts one with its reason beside or above it", () => {
    expect(wallClockReads("const t = Date.now()\n")).toEqual([{ line: 1, commented: false }])
    expect(wallClockReads("const t = new Date()\n")).toEqual([{ line: 1, commented: false }])
    expect(wallClockReads("const f = Date.now\n")).toEqual([{ line: 1, commented: false }])
    expect(wallClockReads("const t = Date.now() // the wall clock: why\n")).toEqual([{ line: 1, commented: true }])
    expect(wallClockReads("// the wall clock: why\nconst t = Date.now()\n")).toEqual([{ line: 2, commented: true }])
    expect(wallClockReads("/** `Date.now` in a doc comment */\nconst d = new Date(0)\n")).toEqual([])
  })

  it("Date.now appears only where a file is allowed to read the wall clock, each time with its comment", () => {
    const files = sourceFiles()
    expect(files.length).toBeGreaterThan(100)
    const unexplained: Array<string> = []
    const reading = new Set<string>()
    for (const file of files) {
      if (leftOut.some((folder) => file.startsWith(folder))) continue
      const reads = wallClockReads(fs.readFileSync(path.join(root, file), "utf8"))
      if (reads.length > 0) reading.add(file)
      for (const read of reads) {
        if (allowed[file] === undefined) unexplained.push(`${file}:${read.line}: not a file allowed the wall clock`)
        else if (!read.commented) unexplained.push(`${file}:${read.line}: no comment says why`)
      }
    }
    expect(unexplained).toEqual([])
    expect(Object.keys(allowed).filter((file) => !reading.has(file))).toEqual([])
  })
})
