/**
 * One-shot runs go through the same policies as sessions: the environment policy (credentials and
 * injection variables dropped, non-interactive defaults, the trusted mapping), and the owner's sandbox.
 */
import { Exec, PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { otherOwner, owner, testConfig } from "../support/terminal.js"
import { failureOf, run, script, sleepers, uniqueSleep } from "./support.js"

const modes = ["child", "pty"] as const

const hostEnv = {
  ...process.env,
  FOO_TOKEN: "leaked-token",
  DB_PASSWORD: "leaked-password",
  LD_PRELOAD: "/nonexistent/inject.so",
  BASH_ENV: "/nonexistent/bash_env"
}

layer(NodeTerminal.layer(testConfig, { hostEnv, trustedEnv: { TRUSTED_VALUE: "granted", DB_PASSWORD: "trusted" } }), {
  excludeTestServices: true
})("exec: the environment policy (34, 35)", (it) => {
  for (const mode of modes) {
    it.scoped(`${mode}: credentials and injection variables are dropped, the trusted mapping wins`, () =>
      Effect.gen(function*() {
        const result = yield* run({ spawn: script(mode, "env") })
        expect(result.exitCode).toBe(0)
        const env = new Map(
          result.output.split(/\r?\n/).flatMap((line) => {
            const at = line.indexOf("=")
            return at > 0 ? [[line.slice(0, at), line.slice(at + 1)] as const] : []
          })
        )
        expect(env.has("FOO_TOKEN")).toBe(false)
        expect(env.has("LD_PRELOAD")).toBe(false)
        expect(env.has("BASH_ENV")).toBe(false)
        expect(env.get("DB_PASSWORD")).toBe("trusted")
        expect(env.get("TRUSTED_VALUE")).toBe("granted")
        expect(env.get("PAGER")).toBe("cat")
        expect(env.get("GIT_TERMINAL_PROMPT")).toBe("0")
      }))
  }
})

const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "at-exec-ws-")))

layer(NodeTerminal.layer(testConfig, { sandbox: { mode: "workspace-write", workspace } }), {
  excludeTestServices: true
})(
  "exec: inside the owner's sandbox (bubblewrap)",
  (it) => {
    for (const mode of modes) {
      it.scoped(`${mode}: writes land in the workspace only; the run starts there`, () =>
        Effect.gen(function*() {
          const marker = `at-exec-${mode}-${process.pid}`
          const result = yield* run({
            spawn: script(
              mode,
              `pwd; echo ok > ${marker}.txt; echo x > /etc/${marker} 2>/dev/null; echo "etc: $?"`
            )
          })
          expect(result.exitCode).toBe(0)
          expect(result.output).toContain(workspace)
          expect(result.output).toMatch(/etc: [1-9]/)
          expect(fs.readFileSync(path.join(workspace, `${marker}.txt`), "utf8")).toBe("ok\n")
          expect(fs.existsSync(`/etc/${marker}`)).toBe(false)
          const outside = yield* Effect.exit(run({ spawn: script(mode, "true"), cwd: "/etc" }))
          expect(failureOf(outside)).toMatchObject({ _tag: "InvalidInput", field: "cwd" })
        }))

      it.scoped(`${mode}: a timeout still ends everything inside the sandbox`, () =>
        Effect.gen(function*() {
          const seconds = uniqueSleep()
          const result = yield* run({
            spawn: script(mode, `sleep ${seconds} & sleep ${seconds} & echo started; wait`),
            timeoutMs: 1000
          })
          expect(result).toMatchObject({ reason: "timeout", status: "killed" })
          expect(result.output).toContain("started")
          expect(sleepers(seconds)).toEqual([])
        }))
    }
  }
)

const full = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "at-exec-owner-")))

layer(NodeTerminal.layer(testConfig, { sandbox: { mode: "danger-full-access" } }), { excludeTestServices: true })(
  "exec: an owner's own sandbox policy applies to its runs",
  (it) => {
    it.scoped("a read-only owner cannot write, another owner (full access) can", () =>
      Effect.gen(function*() {
        const terminals = yield* PtyService.PtyService
        const exec = yield* Exec.Exec
        yield* terminals.configureSandbox(owner, { mode: "read-only", network: "off", workspace: full })
        const confined = yield* run({ spawn: { _tag: "child", argv: ["bash", "-c", "echo x > blocked.txt"] } })
        expect(confined.exitCode).not.toBe(0)
        expect(confined.output).toContain("Read-only file system")
        expect(fs.existsSync(path.join(full, "blocked.txt"))).toBe(false)
        const free = yield* exec.exec(otherOwner, {
          spawn: { _tag: "child", argv: ["bash", "-c", "echo x > allowed.txt"] },
          cwd: full
        })
        expect(free.exitCode).toBe(0)
        expect(fs.existsSync(path.join(full, "allowed.txt"))).toBe(true)
      }))
  }
)
