import { afterEach, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as StateFiles from "../src/StateFiles.js"

// A path under /proc, where Node's own recursive mkdir spins, is tried through the built CLI
// (apps/cli/test/launcher.test.ts), in a process killed if it spins: here it would hang the worker.
describe("StateFiles.makeDirectory", () => {
  const made: Array<string> = []
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "at-state-files-"))
    made.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
  })

  it("makes the directory and each missing parent with the mode, and keeps an existing one as it is", () => {
    const root = tempDir()
    const deep = path.join(root, "a", "b", "c")
    StateFiles.makeDirectory(deep, 0o700)
    for (const dir of [path.join(root, "a"), path.join(root, "a", "b"), deep]) {
      expect(fs.statSync(dir).isDirectory()).toBe(true)
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    }
    fs.chmodSync(deep, 0o750)
    StateFiles.makeDirectory(deep, 0o700)
    expect(fs.statSync(deep).mode & 0o777).toBe(0o750)
  })

  it("refuses a path through a file, or one that is a file, with the system's error", () => {
    const root = tempDir()
    const file = path.join(root, "a-file")
    fs.writeFileSync(file, "")
    expect(() => StateFiles.makeDirectory(file)).toThrow(/EEXIST/)
    expect(() => StateFiles.makeDirectory(path.join(file, "below", "it"))).toThrow(/ENOTDIR/)
    expect(fs.readdirSync(root)).toEqual(["a-file"])
  })
})
