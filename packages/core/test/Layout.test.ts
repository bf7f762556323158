import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The bound of issue 19: a module of core is read in one sitting (~400 lines; a little slack for a doc comment). */
const MAX_LINES = 420

const sources = (directory: string): Array<string> =>
  fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name)
    if (entry.isDirectory()) return sources(full)
    return entry.name.endsWith(".ts") ? [full] : []
  })

describe("core's layout", () => {
  it("has no source file over ~400 lines", () => {
    const src = fileURLToPath(new URL("../src", import.meta.url))
    const files = sources(src)
    expect(files.length).toBeGreaterThan(20)
    const long = files
      .map((file) => ({ file: path.relative(src, file), lines: fs.readFileSync(file, "utf8").split("\n").length }))
      .filter(({ lines }) => lines > MAX_LINES)
    expect(long).toEqual([])
  })
})
