/**
 * The network modes against real bwrap and real network tools, performed as the attacks (issue #15, finding
 * 3): with `--network isolated` the sandbox reaches another machine (a test host in its own network
 * namespace) but not a server on the host's loopback nor an abstract Unix socket of the host; with
 * `--network host` the host's `/run` — where D-Bus, Docker and systemd keep their sockets — is not visible;
 * `isolated` without a network tool is `SandboxUnavailable`, never a quieter mode; and the tool is gone
 * after close.
 */
import { Errors, Ids, PtyService, type Sandbox } from "@agent-terminal/core"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { run, script } from "../exec/support.js"
import { alive, parentOf } from "../support/terminal.js"
import { failureOf, loopbackServer, makeWorkspace, openAs, SandboxedTerminal } from "./support.js"
import { abstractServer, canMakeTestHost, networkToolPids, testHost, unixServer } from "./testHost.js"

const workspace = makeWorkspace("net")
const hasTool = (name: string) =>
  (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && fs.existsSync(`${dir}/${name}`))
const testHostReason = canMakeTestHost() ? "" : " (skipped: needs root and iproute2 to make a test host)"

const connect = (address: string, port: number) =>
  `(exec 3<>/dev/tcp/${address}/${port} && head -1 <&3) 2>&1 || echo REFUSED`

const abstractConnect = (name: string) =>
  `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0${name}'); print(s.recv(64).decode().strip())" 2>&1 | tail -1`

const isolatedScenarios = (tool: "pasta" | "slirp4netns") => {
  const skip = !hasTool(tool) || !canMakeTestHost()
  const reason = !hasTool(tool) ? ` (skipped: ${tool} is not installed)` : testHostReason
  layer(SandboxedTerminal({ mode: "workspace-write", workspace, network: "isolated", networkTool: tool }), {
    excludeTestServices: true
  })(`--network isolated through ${tool}`, (it) => {
    it.scoped.skipIf(skip)(
      `another machine is reachable, the host's loopback server and abstract socket are not${reason}`,
      () =>
        Effect.gen(function*() {
          const other = yield* testHost
          const server = yield* loopbackServer
          const abstract = yield* abstractServer
          const { send } = yield* openAs(Ids.OwnerId.make(`isolated-${tool}`))

          const outside = yield* send(connect(other.address, other.port))
          expect(outside.output).toBe("hello from the test host")

          const loopback = yield* send(connect("127.0.0.1", server.port))
          expect(loopback.output).toContain("REFUSED")
          expect(server.connections()).toBe(0)

          const viaAbstract = yield* send(abstractConnect(abstract.name))
          expect(viaAbstract.output).toContain("Connection refused")
          expect(abstract.connections()).toBe(0)
        })
    )

    it.scoped.skipIf(skip)(
      `one-shot runs (child and pty) get the same network; a REPL inside still settles by stdin_read${reason}`,
      () =>
        Effect.gen(function*() {
          const other = yield* testHost
          const server = yield* loopbackServer
          for (const mode of ["child", "pty"] as const) {
            const result = yield* run({
              spawn: script(mode, `${connect(other.address, other.port)}; ${connect("127.0.0.1", server.port)}`)
            })
            expect(result.output).toContain("hello from the test host")
            expect(result.output).toContain("REFUSED")
          }
          expect(server.connections()).toBe(0)
          const { send } = yield* openAs(Ids.OwnerId.make(`isolated-repl-${tool}`))
          const python = yield* send("python3 -q")
          expect(python.waitReason).toBe("stdin_read")
          expect((yield* send("print(6 * 7)")).output).toContain("42")
        })
    )

    it.scoped.skipIf(!hasTool(tool))(
      `the network tool ends with the session: none is left after close${
        hasTool(tool) ? "" : ` (skipped: ${tool} is not installed)`
      }`,
      () =>
        Effect.gen(function*() {
          const service = yield* PtyService.PtyService
          const owner = Ids.OwnerId.make(`isolated-close-${tool}`)
          const opened = yield* service.open(owner, {})
          const launcher = parentOf(parentOf(opened.pid))
          const started = networkToolPids().filter((pid) => parentOf(parentOf(pid)) === launcher)
          expect(started.length).toBe(1)
          const closed = yield* service.close(owner, Ids.SessionId.make(opened.sessionId))
          expect(closed.survivors).toEqual([])
          expect(started.filter(alive)).toEqual([])
        })
    )
  })
}

isolatedScenarios("pasta")
isolatedScenarios("slirp4netns")

describe("isolated without a network tool", () => {
  layer(
    SandboxedTerminal({
      mode: "workspace-write",
      workspace,
      network: "isolated",
      networkTool: "/nonexistent/bin/pasta"
    }),
    { excludeTestServices: true }
  )("no pasta, no slirp4netns", (it) => {
    it.scoped("a confined open fails with SandboxUnavailable naming the tool; nothing runs in a quieter mode", () =>
      Effect.gen(function*() {
        const owner = Ids.OwnerId.make("isolated-missing")
        const error = failureOf(yield* Effect.exit(openAs(owner)))
        expect(error).toBeInstanceOf(Errors.SandboxUnavailable)
        expect((error as Errors.SandboxUnavailable).reason).toContain("/nonexistent/bin/pasta")
        expect((error as Errors.SandboxUnavailable).reason).toContain("--network isolated needs pasta")
        expect(yield* (yield* PtyService.PtyService).list(owner)).toEqual([])
      }))
  })
})

layer(SandboxedTerminal({ mode: "workspace-write", workspace, network: "host" }), { excludeTestServices: true })(
  "--network host (the contrast)",
  (it) => {
    it.scoped("shares the host's loopback and abstract sockets: the hazard the mode documents", () =>
      Effect.gen(function*() {
        const server = yield* loopbackServer
        const abstract = yield* abstractServer
        const { send } = yield* openAs(Ids.OwnerId.make("host-network"))
        expect((yield* send(connect("127.0.0.1", server.port))).output).toBe("hello from the host")
        expect((yield* send(abstractConnect(abstract.name))).output).toBe("hello from the abstract socket")
        expect(abstract.connections()).toBe(1)
      }))
  }
)

const fakeTool = path.join(workspace, "slirp4netns-failing")
const fakeRecord = path.join(workspace, "failing-tool.log")
fs.writeFileSync(
  fakeTool,
  `#!/bin/sh\nhelper=$PPID\nlauncher=$(cut -d' ' -f4 /proc/$helper/stat)\n` +
    `echo "$launcher $(for a; do :; done; echo "$@" | awk '{print $(NF-1)}')" >> ${fakeRecord}\n` +
    "echo 'fake tool: no network today' >&2\nexit 1\n",
  { mode: 0o755 }
)

layer(SandboxedTerminal({ mode: "workspace-write", workspace, network: "isolated", networkTool: fakeTool }), {
  excludeTestServices: true
})("a network tool that fails", (it) => {
  it.scoped("the open is refused with the tool's own words; bwrap and its still-blocked child are gone", () =>
    Effect.gen(function*() {
      const error = failureOf(yield* Effect.exit(openAs(Ids.OwnerId.make("failing-tool"))))
      expect(error).toBeInstanceOf(Errors.SandboxUnavailable)
      const reason = (error as Errors.SandboxUnavailable).reason
      expect(reason).toContain("the isolated network did not start")
      expect(reason).toContain("fake tool: no network today")
      const [launcher, child] = fs.readFileSync(fakeRecord, "utf8").split("\n")[0]!.split(" ").map(Number)
      expect(launcher).toBeGreaterThan(1)
      expect(child).toBeGreaterThan(1)
      yield* Effect.sleep(200)
      expect([launcher!, child!].filter(alive)).toEqual([])
    }))
})

const runSocket = `/run/agent-terminal-test-${process.pid}.sock`
const modes: ReadonlyArray<Sandbox.NetworkMode> = ["off", "isolated", "host"]

layer(SandboxedTerminal({ mode: "workspace-write", workspace }), { excludeTestServices: true })(
  "/run and /var/tmp are private in every network mode",
  (it) => {
    for (const network of modes) {
      const skip = network === "isolated" && !hasTool("pasta") && !hasTool("slirp4netns")
      it.scoped.skipIf(skip)(
        `--network ${network}: a Unix socket planted in the host's /run is absent and cannot be reached${
          skip ? " (skipped: no network tool)" : ""
        }`,
        () =>
          Effect.gen(function*() {
            const socket = yield* unixServer(runSocket)
            const owner = Ids.OwnerId.make(`run-${network}`)
            const service = yield* PtyService.PtyService
            yield* service.configureSandbox(owner, { mode: "workspace-write", network, workspace })
            const marker = `agent-terminal-var-tmp-${process.pid}`
            fs.writeFileSync(`/var/tmp/${marker}`, "host\n")
            yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(`/var/tmp/${marker}`, { force: true })))
            const { send } = yield* openAs(owner)

            const seen = yield* send(`test -e ${runSocket} && echo PRESENT || echo ABSENT`)
            expect(seen.output).toBe("ABSENT")
            const reached = yield* send(
              `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${runSocket}')" 2>&1 | tail -1`
            )
            expect(reached.output).toMatch(/No such file or directory/)
            expect(socket.connections()).toBe(0)
            expect((yield* send("find /run -type s | wc -l")).output).toBe("0")
            expect((yield* send(`cat /var/tmp/${marker} 2>&1 || echo MISSING`)).output).toContain("MISSING")
          })
      )
    }
  }
)
