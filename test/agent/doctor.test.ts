/**
 * `agent-terminal doctor` for real: on this machine, and inside a sandboxed session (where a user namespace
 * cannot be made, so a confined mode is missing), its `--json` read back.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeWorkspace, openAs, SandboxedTerminal } from "../security/support.js"
import { cliBin } from "../support/mcp.js"
import { owner } from "../support/terminal.js"

interface Report {
  readonly ok: boolean
  readonly missing: ReadonlyArray<string>
  readonly checks: ReadonlyArray<{ name: string; ok: boolean; needed: boolean; detail: string; consequence: string }>
}

const doctor = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; report: Report }>((resolve, reject) => {
    childProcess.execFile(
      process.execPath,
      [cliBin, "doctor", "--json", ...args],
      { timeout: 60_000 },
      (error, stdout) => {
        try {
          resolve({ code: error === null ? 0 : (error.code as number), report: JSON.parse(stdout) })
        } catch (parse) {
          reject(parse)
        }
      }
    )
  })

const hasBwrap = fs.existsSync("/usr/bin/bwrap")

describe("agent-terminal doctor on this machine", () => {
  it("--json: every check, one finding each with what follows; exit 0 when nothing needed is missing", async () => {
    const { code, report } = await doctor([])
    expect(report.checks.map((check) => check.name)).toEqual([
      "pty",
      "stdin_read",
      "cgroup",
      "bubblewrap",
      "network",
      "seccomp",
      "http_token"
    ])
    for (const check of report.checks) {
      expect(check.detail.length).toBeGreaterThan(0)
      expect(check.consequence.length).toBeGreaterThan(0)
    }
    expect(report.checks.find((check) => check.name === "pty")).toMatchObject({ ok: true, needed: true })
    expect(report.checks.find((check) => check.name === "stdin_read")?.ok).toBe(true)
    expect(report).toMatchObject({ ok: true, missing: [] })
    expect(code).toBe(0)
  }, 60_000)

  it.skipIf(!hasBwrap)(
    "--sandbox workspace-write needs bubblewrap and seccomp: here both start (skipped: no bwrap)",
    async () => {
      const { code, report } = await doctor(["--sandbox", "workspace-write", "--network", "isolated"])
      const needed = report.checks.filter((check) => check.needed).map((check) => check.name)
      expect(needed).toEqual(["pty", "bubblewrap", "network", "seccomp"])
      expect(report.ok).toBe(true)
      expect(code).toBe(0)
    },
    60_000
  )

  it("--http with a token file others can read: missing, named, exit 1", async () => {
    const dir = fs.mkdtempSync("/tmp/at-doctor-")
    try {
      const file = path.join(dir, "token")
      fs.writeFileSync(file, "x".repeat(43), { mode: 0o644 })
      fs.chmodSync(file, 0o644)
      const { code, report } = await doctor(["--http", "--token-file", file])
      expect(report.missing).toEqual(["http_token"])
      expect(report.checks.find((check) => check.name === "http_token")?.detail).toContain(
        "readable or writable by others"
      )
      expect(code).toBe(1)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

const workspace = makeWorkspace("doctor")

layer(SandboxedTerminal({ mode: "workspace-write", workspace }), { excludeTestServices: true })(
  "agent-terminal doctor inside a sandboxed session",
  (it) => {
    it.scoped.skipIf(!hasBwrap)(
      "ptys work inside; a nested sandbox cannot start: --sandbox workspace-write is missing bubblewrap (skipped: no bwrap)",
      () =>
        Effect.gen(function*() {
          const { send } = yield* openAs(owner)
          const ran = yield* send(
            `${process.execPath} ${cliBin} doctor --json --sandbox workspace-write > report.json; echo "exit=$?"`,
            { timeoutMs: 60_000 }
          )
          expect(ran.output).toBe("exit=1")
          const report = JSON.parse(fs.readFileSync(path.join(workspace, "report.json"), "utf8")) as Report
          expect(report.checks.find((check) => check.name === "pty")?.ok).toBe(true)
          expect(report.missing).toContain("bubblewrap")
          expect(report.checks.find((check) => check.name === "bubblewrap")?.ok).toBe(false)
        })
    )
  }
)
