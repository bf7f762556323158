import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeWith } from "../src/internal/proc/macInspector.js"
import { parsePsTable } from "../src/internal/proc/psTable.js"
import * as MacInspector from "../src/MacInspector.js"
import { eventually, spawnProgram } from "./helpers/ptyProgram.js"

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "ps")
const table = (name: string) => fs.readFileSync(path.join(fixtures, name), "utf8")

/** A `ps` that prints the fixture: all rows for `-ax`, the selected row for `-p`. */
const fakePs = (text: string | undefined) => (selection: ReadonlyArray<string>) =>
  Effect.succeed(
    text === undefined || selection[0] !== "-p"
      ? text
      : text.split("\n").filter((line) => line.trim().split(/\s+/)[0] === selection[1]).join("\n")
  )

describe("parsePsTable", () => {
  it("reads a macOS table: full paths with spaces, padded days, zombies", () => {
    const rows = parsePsTable(table("macos.txt"))
    expect(rows).toHaveLength(9)
    expect(rows[2]).toMatchObject({
      pid: 4021,
      ppid: 1,
      pgid: 4021,
      tpgid: 0,
      state: "S",
      comm: "/Applications/Visual Studio Code.app/Contents/MacOS/Electron"
    })
    expect(rows.find((row) => row.pid === 5191)).toMatchObject({ state: "Z", comm: "<defunct>" })
    expect(rows.find((row) => row.pid === 5230)?.startTime).toBe(Date.UTC(2025, 10, 2, 10, 0, 0) / 1000)
    expect(rows.find((row) => row.pid === 5300)?.comm).toBe("/usr/sbin/cron job)")
  })

  it("reads a procps table recorded on Linux (tpgid -1 without a terminal)", () => {
    const rows = parsePsTable(table("procps-linux.txt"))
    expect(rows.map((row) => row.pid)).toEqual([1, 2, 3, 10132, 10134, 10135, 10136])
    expect(rows[3]).toMatchObject({ ppid: 1, pgid: 10132, tpgid: -1, state: "S", comm: "sleep", sid: 0, ttyNr: 0 })
  })

  it("skips lines that are not rows", () => {
    expect(parsePsTable("")).toEqual([])
    expect(parsePsTable("  PID  PPID\nnot a row\n 12 1 12 0 S Sun Xyz 30 01:02:03 2025 x\n")).toEqual([])
  })
})

describe("MacInspector over injected tables", () => {
  it.effect("is not exact and never probes", () =>
    Effect.gen(function*() {
      const inspector = makeWith(fakePs(table("macos.txt")))
      expect(inspector.exact).toBe(false)
      expect(yield* inspector.probe({ shellPid: 5120, ttyPath: "/dev/ttys003" })).toMatchObject({ _tag: "Miss" })
    }))

  it.effect("reads the foreground group from the shell's tpgid", () =>
    Effect.gen(function*() {
      const inspector = makeWith(fakePs(table("macos.txt")))
      expect(yield* inspector.foregroundGroup({ shellPid: 5120, ttyPath: undefined })).toEqual(Option.some(5188))
      expect(yield* inspector.foregroundGroup({ shellPid: 612, ttyPath: undefined })).toEqual(Option.none())
      expect(yield* inspector.foregroundGroup({ shellPid: 999, ttyPath: undefined })).toEqual(Option.none())
      const failing = makeWith(fakePs(undefined))
      expect(yield* failing.foregroundGroup({ shellPid: 5120, ttyPath: undefined })).toEqual(Option.none())
    }))

  it.effect("builds the process tree from parent links", () =>
    Effect.gen(function*() {
      const inspector = makeWith(fakePs(table("macos.txt")))
      const tree = yield* inspector.processTree(5120)
      expect(tree.map((info) => info.pid)).toEqual([5120, 5188, 5230, 5190, 5191])
      expect(tree[0]).not.toHaveProperty("tpgid")
      expect(yield* inspector.processTree(42)).toEqual([])
      expect(yield* makeWith(fakePs(undefined)).processTree(5120)).toEqual([])
    }))
})

// Runs the macOS parser against the procps `ps` of this Linux host; elsewhere that ps is not procps.
describe.skipIf(process.platform !== "linux")("MacInspector with the real ps (procps)", () => {
  it.scopedLive("finds a pty program's group and tree", () =>
    Effect.gen(function*() {
      const inspector = yield* MacInspector.make
      const program = yield* spawnProgram("bash", ["--norc", "--noprofile", "-c", "sleep 30 & wait"])
      expect(yield* inspector.foregroundGroup(program.terminal)).toEqual(Option.some(program.pid))
      const tree = yield* eventually(
        inspector.processTree(program.pid),
        (tree) => tree.length === 2 && tree[1].comm === "sleep"
      )
      expect(tree[0]).toMatchObject({ pid: program.pid, pgid: program.pid, comm: "bash" })
    }))
})
