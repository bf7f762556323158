/**
 * The attempt list of docs/security.md, run for real in each mode: read a secret, write outside the
 * workspace, reach the network, signal a process outside the sandbox, reach another owner's session. Every
 * attempt is denied in the confined modes; `danger-full-access` is run as the contrast. The transcript is
 * written to build/security-attempts.md (pasted into the docs).
 */
import { Errors, Ids, PtyService, Sandbox } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { alive, testConfig } from "../support/terminal.js"
import { failureOf, loopbackServer, makeWorkspace, openAs } from "./support.js"

const workspace = makeWorkspace("attempts")
const secret = `s3cr3t-${process.pid}-attempt`
const hostEnv = { ...process.env, DEPLOY_TOKEN: secret }
const transcript: Array<string> = []

const modes: ReadonlyArray<Sandbox.Mode> = ["read-only", "workspace-write", "danger-full-access"]
const policyOf = (mode: Sandbox.Mode): Sandbox.Policy => ({ mode, network: "off", workspace })

const record = (mode: string, attempt: string, command: string, result: string, denied: boolean) => {
  transcript.push(
    `| ${mode} | ${attempt} | \`${command.replace(/\|/g, "\\|")}\` | ${
      result.replace(/\n/g, " ⏎ ").replace(/\|/g, "\\|").slice(0, 160)
    } | ${denied ? "**denied**" : "allowed"} |`
  )
}

layer(
  NodeTerminal.layer(testConfig, { hostEnv, sandbox: { mode: "workspace-write", workspace } }),
  { excludeTestServices: true }
)("attempts (docs/security.md)", (it) => {
  for (const mode of modes) {
    it.scoped(`in ${mode}`, () =>
      Effect.gen(function*() {
        const service = yield* PtyService.PtyService
        const attacker = Ids.OwnerId.make(`attacker-${mode}`)
        const victim = Ids.OwnerId.make(`victim-${mode}`)
        yield* service.configureSandbox(attacker, policyOf(mode))
        yield* service.configureSandbox(victim, policyOf(mode))
        const confined = Sandbox.isConfined(mode)

        const holder = childProcess.spawn("sleep", ["1000"], { env: { ...process.env, DEPLOY_TOKEN: secret } })
        yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
        const server = yield* loopbackServer
        const theirs = yield* openAs(victim, { name: "victim" })
        const { send } = yield* openAs(attacker, { name: "attacker" })

        const variable = "echo \"[${DEPLOY_TOKEN-unset}]\""
        const readVariable = (yield* send(variable)).output
        record(mode, "read a secret variable", variable, readVariable, readVariable === "[unset]")
        expect(readVariable).toBe("[unset]")

        const environ = `grep -l ${secret} /proc/[0-9]*/environ 2>/dev/null | wc -l`
        const readEnviron = (yield* send(environ)).output
        record(
          mode,
          "read a secret from a host process's /proc/<pid>/environ",
          environ,
          readEnviron,
          readEnviron === "0"
        )
        if (confined) expect(readEnviron).toBe("0")

        const target = path.join(os.homedir(), `.agent-terminal-attempt-${process.pid}`)
        const write = `echo x > /etc/agent-terminal-attempt; echo x > ${target}`
        const wrote = (yield* send(write)).output
        const escaped = fs.existsSync("/etc/agent-terminal-attempt") || fs.existsSync(target)
        fs.rmSync("/etc/agent-terminal-attempt", { force: true })
        fs.rmSync(target, { force: true })
        record(mode, "write outside the workspace (/etc, home)", write, wrote || "(no error)", !escaped)
        if (confined) expect(escaped).toBe(false)

        const connect = `(exec 3<>/dev/tcp/127.0.0.1/${server.port} && head -1 <&3) || echo REFUSED`
        const connected = (yield* send(connect)).output
        record(mode, "reach a TCP server on the host's loopback", connect, connected, server.connections() === 0)
        if (confined) expect(server.connections()).toBe(0)

        const kill = `kill -TERM ${holder.pid}`
        const killed = (yield* send(kill)).output
        yield* Effect.sleep(100)
        const survived = alive(holder.pid!)
        record(mode, "signal a process outside the sandbox", kill, killed || "(no error)", survived)
        if (confined) expect(survived).toBe(true)

        const sibling = `kill -KILL ${theirs.opened.pid}`
        const hit = (yield* send(sibling)).output
        yield* Effect.sleep(100)
        const siblingAlive = alive(theirs.opened.pid)
        record(
          mode,
          "kill another owner's shell process from inside a session",
          sibling,
          hit || "(no error)",
          siblingAlive
        )
        if (confined) expect(siblingAlive).toBe(true)

        const id = Ids.SessionId.make(theirs.opened.sessionId)
        const foreign = [
          ["list", (yield* service.list(attacker)).some((s) => s.sessionId === id) ? "visible" : "not listed"],
          ["read", failureOf(yield* Effect.exit(service.read(attacker, id, {})))?._tag ?? "ok"],
          ["send", failureOf(yield* Effect.exit(service.send(attacker, id, { text: "id" })))?._tag ?? "ok"],
          ["signal", failureOf(yield* Effect.exit(service.signal(attacker, id, "SIGINT")))?._tag ?? "ok"],
          ["close", failureOf(yield* Effect.exit(service.close(attacker, id)))?._tag ?? "ok"]
        ] as const
        const denied = foreign.every(([op, outcome]) =>
          op === "list" ? outcome === "not listed" : outcome === "ForeignSession"
        )
        record(
          mode,
          "reach another owner's session through the service",
          "list / read / send / signal / close",
          foreign.map(([op, outcome]) => `${op}: ${outcome}`).join(", "),
          denied
        )
        expect(denied).toBe(true)
        expect(failureOf(yield* Effect.exit(service.read(attacker, id, {})))).toBeInstanceOf(Errors.ForeignSession)
      }))
  }

  it.effect("writes the transcript", () =>
    Effect.sync(() => {
      fs.mkdirSync("build", { recursive: true })
      fs.writeFileSync(
        "build/security-attempts.md",
        ["| mode | attempt | command | what it returned | verdict |", "|---|---|---|---|---|", ...transcript].join(
          "\n"
        ) + "\n"
      )
    }))
})
