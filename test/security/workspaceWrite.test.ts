/**
 * The bubblewrap sandbox in `workspace-write`, against real bwrap: writes land only in the workspace, the
 * network is off, job control and signals work inside, nothing inside survives close, and the REPLs'
 * terminal waits are still recognised.
 */
import { Errors, Ids } from "@agent-terminal/core"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { alive, owner } from "../support/terminal.js"
import { failureOf, loopbackServer, makeWorkspace, openAs, SandboxedTerminal, waitForPids } from "./support.js"

const workspace = makeWorkspace("ws")
const networkOwner = Ids.OwnerId.make("network-owner")

layer(SandboxedTerminal({ mode: "workspace-write", workspace }), { excludeTestServices: true })(
  "workspace-write sandbox (bubblewrap)",
  (it) => {
    it.scoped("starts in the workspace, writes inside it, and cannot write /etc or the home directory", () =>
      Effect.gen(function*() {
        const { opened, send } = yield* openAs(owner)
        expect(opened.cwd).toBe(workspace)
        const pwd = yield* send("pwd")
        expect(pwd.output).toBe(workspace)

        const inside = yield* send("echo from-the-sandbox > inside.txt && cat inside.txt")
        expect(inside.exitCode).toBe(0)
        expect(fs.readFileSync(path.join(workspace, "inside.txt"), "utf8")).toBe("from-the-sandbox\n")

        const etc = yield* send("echo x > /etc/agent-terminal-escape")
        expect(etc.exitCode).not.toBe(0)
        expect(etc.output).toContain("Read-only file system")
        expect(fs.existsSync("/etc/agent-terminal-escape")).toBe(false)

        const home = yield* send("touch ~/agent-terminal-escape")
        expect(home.exitCode).not.toBe(0)
        expect(home.output).toContain("Read-only file system")
        expect(fs.existsSync(path.join(os.homedir(), "agent-terminal-escape"))).toBe(false)
      }))

    it.scoped("gives the session a private /tmp: writes there never reach the host's", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const marker = `agent-terminal-private-${process.pid}`
        const written = yield* send(`echo x > /tmp/${marker} && ls /tmp`)
        expect(written.exitCode).toBe(0)
        expect(fs.existsSync(`/tmp/${marker}`)).toBe(false)
      }))

    it.scoped("rejects a cwd outside the workspace; accepts one inside it, also relative", () =>
      Effect.gen(function*() {
        const outside = yield* Effect.exit(openAs(owner, { cwd: "/etc" }))
        expect(failureOf(outside)).toBeInstanceOf(Errors.InvalidInput)
        expect(failureOf(outside)).toMatchObject({ field: "cwd" })

        const escape = yield* Effect.exit(openAs(owner, { cwd: `${workspace}/..` }))
        expect(failureOf(escape)).toMatchObject({ _tag: "InvalidInput", field: "cwd" })

        fs.mkdirSync(path.join(workspace, "sub"), { recursive: true })
        const { opened, send } = yield* openAs(owner, { cwd: "sub" })
        expect(opened.cwd).toBe(path.join(workspace, "sub"))
        expect((yield* send("pwd")).output).toBe(path.join(workspace, "sub"))
      }))

    it.scoped("with the network off, a TCP server on the host's loopback cannot be reached", () =>
      Effect.gen(function*() {
        const server = yield* loopbackServer
        const { send } = yield* openAs(owner)
        const attempt = yield* send(
          `(exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo CONNECTED) || echo REFUSED`
        )
        expect(attempt.output).toContain("REFUSED")
        expect(attempt.output).not.toContain("CONNECTED")
        expect(server.connections()).toBe(0)
      }))

    it.scoped("with the network enabled for an owner, the same server answers", () =>
      Effect.gen(function*() {
        const server = yield* loopbackServer
        const { service } = yield* openAs(networkOwner).pipe(
          Effect.flatMap(({ id, service }) => service.close(networkOwner, id).pipe(Effect.as({ service })))
        )
        yield* service.configureSandbox(networkOwner, { mode: "workspace-write", network: "host", workspace })
        const { send } = yield* openAs(networkOwner)
        const attempt = yield* send(`(exec 3<>/dev/tcp/127.0.0.1/${server.port} && head -1 <&3) || echo REFUSED`)
        expect(attempt.output).toContain("hello from the host")
        expect(server.connections()).toBe(1)
      }))

    it.scoped("job control works inside: a background job, jobs, kill %1", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const started = yield* send("sleep 30 &")
        expect(started.waitReason).toBe("prompt")
        expect(started.output).toMatch(/^\[1\] \d+$/)
        const listed = yield* send("jobs")
        expect(listed.output).toMatch(/\[1\]\+\s+Running\s+sleep 30 &/)
        const killed = yield* send("kill %1; wait; jobs")
        expect(killed.waitReason).toBe("prompt")
        const after = yield* send("jobs")
        expect(after.output).toBe("")
      }))

    it.scoped("SIGINT to a foreground sleep returns the sandboxed shell's prompt; the sandbox survives", () =>
      Effect.gen(function*() {
        const { id, opened, send, service } = yield* openAs(owner)
        const running = yield* send("sleep 30", { timeoutMs: 500 })
        expect(running.waitReason).toBe("timeout")
        const signalled = yield* service.signal(owner, id, "SIGINT")
        expect(signalled.delivered).toBe(true)
        expect(signalled.targetPgid).not.toBe(opened.pid)
        const back = yield* send("echo still-here $$")
        expect(back.waitReason).toBe("prompt")
        expect(back.output).toBe("still-here 2")
        expect(alive(opened.pid)).toBe(true)

        const again = yield* send("sleep 30", { timeoutMs: 500 })
        expect(again.waitReason).toBe("timeout")
        const ctrlC = yield* service.send(owner, id, { keys: ["C-c"] })
        expect(ctrlC.waitReason).toBe("prompt")
        expect((yield* send("echo survived")).output).toBe("survived")
      }))

    it.scoped("a daemon started inside (setsid, double fork) is gone after close", () =>
      Effect.gen(function*() {
        const { id, send, service } = yield* openAs(owner)
        yield* send("(setsid sleep 987651 </dev/null >/dev/null 2>&1 &)")
        const daemons = yield* waitForPids(["sleep", "987651"])
        expect(daemons.length).toBe(1)
        const closed = yield* service.close(owner, id)
        expect(closed.survivors).toEqual([])
        expect(daemons.filter(alive)).toEqual([])
      }))

    it.scoped("python and node REPLs inside the sandbox settle by stdin_read", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const python = yield* send("python3 -q")
        expect(python.waitReason).toBe("stdin_read")
        expect(python.output.endsWith(">>> ")).toBe(true)
        const answer = yield* send("print(6 * 7)")
        expect(answer.waitReason).toBe("stdin_read")
        expect(answer.output).toContain("42")
        expect((yield* send("exit()")).waitReason).toBe("prompt")

        const node = yield* send("node")
        expect(node.waitReason).toBe("stdin_read")
        expect(node.output.endsWith("> ")).toBe(true)
        const sum = yield* send("1 + 41")
        expect(sum.waitReason).toBe("stdin_read")
        expect(sum.output).toContain("42")
        expect((yield* send(".exit")).waitReason).toBe("prompt")
      }))

    it.scoped("a process outside the sandbox cannot be seen or signalled", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const attempt = yield* send(`kill -TERM ${process.pid}; echo "status $?"; ls /proc | grep -c '^[0-9]'`)
        expect(attempt.output).toContain("No such process")
        expect(attempt.output).toContain("status 1")
        expect(alive(process.pid)).toBe(true)
      }))
  }
)

describe("workspace-write teardown without a cgroup", () => {
  layer(SandboxedTerminal({ mode: "workspace-write", workspace }, { containment: "sweep" }), {
    excludeTestServices: true
  })("pid-namespace containment", (it) => {
    it.scoped("reports pid-namespace, and a daemon inside is gone after close", () =>
      Effect.gen(function*() {
        const { id, opened, send, service } = yield* openAs(owner)
        expect(opened.containment).toBe("pid-namespace")
        yield* send("(setsid sh -c 'trap \"\" TERM; sleep 987652' </dev/null >/dev/null 2>&1 &)")
        const daemons = yield* waitForPids(["sleep", "987652"])
        expect(daemons.length).toBe(1)
        const closed = yield* service.close(owner, id)
        expect(closed.survivors).toEqual([])
        expect(daemons.filter(alive)).toEqual([])
        expect(alive(opened.pid)).toBe(false)
      }))
  })
})

layer(SandboxedTerminal({ mode: "workspace-write", workspace }), { excludeTestServices: true })(
  "command sessions in the sandbox",
  (it) => {
    it.scoped("a command runs confined; one that exits at once is reported as exited", () =>
      Effect.gen(function*() {
        const { opened, send } = yield* openAs(owner, { argv: ["python3", "-q"] })
        expect(opened.type).toBe("command")
        const write = yield* send("open('/etc/agent-terminal-py', 'w')")
        expect(write.waitReason).toBe("stdin_read")
        expect(write.output).toContain("Read-only file system")
        const quick = yield* openAs(owner, { argv: ["true"] })
        expect(quick.opened.status._tag).toBe("exited")
      }))
  }
)
