import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { built } from "../daemon/support.js"
import { cliBin } from "../support/mcp.js"

describe.runIf(built)("agent-terminal replay FILE", () => {
  it("plays a recording's output in order and refuses a file that is not one", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "at-replay-"))
    const file = path.join(dir, "s.cast")
    fs.writeFileSync(
      file,
      [
        JSON.stringify({ version: 2, width: 80, height: 24 }),
        JSON.stringify([0.05, "o", "first "]),
        JSON.stringify([0.1, "m", "send: echo x → prompt, exit 0"]),
        JSON.stringify([0.2, "r", "100x30"]),
        JSON.stringify([0.3, "i", "[human typed 9 bytes with echo off]"]),
        JSON.stringify([0.4, "o", "一二三\r\n"])
      ].join("\n")
    )
    const played = spawnSync(process.execPath, [cliBin, "replay", file, "--speed", "10"], { encoding: "utf8" })
    expect(played.status).toBe(0)
    expect(played.stdout).toBe("first 一二三\r\n")
    fs.writeFileSync(file, "not a cast\n")
    const refused = spawnSync(process.execPath, [cliBin, "replay", file], { encoding: "utf8" })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain("is not an asciicast v2 recording")
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
