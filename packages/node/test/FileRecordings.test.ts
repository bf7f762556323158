import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FileRecordings from "../src/FileRecordings.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "at-file-recordings-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const linesOf = (file: string) => fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "")

describe("FileRecordings", () => {
  it.scopedLive("lines are written together a moment after the first (not one write each), and all at close", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const store = FileRecordings.make({ directory: path.join(dir, "recordings") })
      const file = Option.getOrThrow(yield* store.create({ sessionId: "s-1", startedAt: 1 }))
      const at = path.join(dir, "recordings", file.name)
      expect(fs.statSync(at).mode & 0o777).toBe(0o600)
      file.write("[0.1, \"o\", \"a\"]")
      file.write("[0.2, \"o\", \"b\"]")
      // gathered, not yet written: the session that wrote them never waits for the disk
      expect(linesOf(at)).toEqual([])
      // a while later, without a close: on disk (a reader of a live recording sees it ≤ ~20 ms behind)
      const deadline = Date.now() + 5_000
      while (linesOf(at).length < 2 && Date.now() < deadline) yield* Effect.sleep(10)
      expect(linesOf(at)).toEqual(["[0.1, \"o\", \"a\"]", "[0.2, \"o\", \"b\"]"])
      file.write("[0.3, \"o\", \"c\"]")
      yield* file.close
      expect(linesOf(at)).toEqual(["[0.1, \"o\", \"a\"]", "[0.2, \"o\", \"b\"]", "[0.3, \"o\", \"c\"]"])
    }))

  it.scopedLive("under a budget: old and excess recordings are pruned oldest first, a new one refused while full", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const directory = path.join(dir, "recordings")
      fs.mkdirSync(directory, { mode: 0o700 })
      const old = Date.now() / 1000 - 40 * 24 * 3600
      for (
        const [name, age] of [["s-a-1.cast", old], ["s-b-2.cast", Date.now() / 1000 - 30], [
          "s-c-3.cast",
          Date.now() / 1000 - 20
        ]] as const
      ) {
        fs.writeFileSync(path.join(directory, name), "x".repeat(4000), { mode: 0o600 })
        fs.utimesSync(path.join(directory, name), age, age)
      }
      // at start: the 40-day-old one goes (age), then the oldest until within 6000 bytes
      const store = FileRecordings.make({ directory, maxTotalBytes: 6000 })
      expect(fs.readdirSync(directory).sort()).toEqual(["s-c-3.cast"])
      const live = Option.getOrThrow(yield* store.create({ sessionId: "s-live", startedAt: 4 }))
      live.write("y".repeat(1999))
      // the budget is used up by the live one and the last finished: a second live one is refused
      expect(Option.isNone(yield* store.create({ sessionId: "s-more", startedAt: 5 }))).toBe(true)
      // and the live one takes no line past the budget
      live.write("z".repeat(3000))
      yield* live.close
      expect(fs.readFileSync(path.join(directory, live.name), "utf8")).toBe(`${"y".repeat(1999)}\n`)
      const total = fs.readdirSync(directory).reduce(
        (sum, name) => sum + fs.statSync(path.join(directory, name)).size,
        0
      )
      expect(total).toBeLessThanOrEqual(6000)
    }))

  it.scopedLive("a recordings directory that is a symbolic link is refused: nothing is written where it points", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const elsewhere = path.join(dir, "elsewhere")
      fs.mkdirSync(elsewhere, { mode: 0o755 })
      fs.symlinkSync(elsewhere, path.join(dir, "recordings"))
      const store = FileRecordings.make({ directory: path.join(dir, "recordings") })
      expect(Option.isNone(yield* store.create({ sessionId: "s-1", startedAt: 1 }))).toBe(true)
      expect(fs.readdirSync(elsewhere)).toEqual([])
      expect(fs.statSync(elsewhere).mode & 0o777).toBe(0o755)
    }))
})
