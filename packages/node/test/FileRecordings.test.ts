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
})
