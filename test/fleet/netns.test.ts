/**
 * A machine on "another host" through the CLI: a real `agent-terminal serve --nats` process started inside a
 * network namespace of its own (ip netns + a veth pair), which reaches one nats-server through the pair and
 * nothing else, reached by a client on the host through NATS: opened on by its machine name, sent to, the
 * terminal's shell checked inside the namespace.
 */
import { PtyService } from "@agent-terminal/core"
import { FleetRegistry, FleetTerminal, Nats, TestFleet } from "@agent-terminal/fleet"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { built, cliBin, makeHome, waitUntil } from "../daemon/support.js"
import { anyOwner, descendsFrom, fleetClient } from "./support.js"

const CONNECT = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2).close()"

// A network namespace needs root and iproute2 (TestFleet.canMakeNetworkNamespace); elsewhere there is no
// second host to make, and the test is skipped.
describe.runIf(built && TestFleet.canMakeNetworkNamespace())(
  "a serve --nats machine in a network namespace of its own, reached through NATS",
  () => {
    const scope = Effect.runSync(Scope.make())
    let namespace: { readonly name: string; readonly hostAddress: string }
    let fleet: TestFleet.Fleet
    const home = makeHome()
    let machine: { readonly pid: number; readonly log: () => string; readonly stop: () => Promise<void> }

    beforeAll(async () => {
      namespace = await Effect.runPromise(TestFleet.networkNamespace.pipe(Scope.extend(scope)))
      // the third server also listens on the host's end of the veth pair: the one server the namespace reaches
      fleet = await Effect.runPromise(
        TestFleet.make({ hosts: [undefined, undefined, namespace.hostAddress] }).pipe(Scope.extend(scope))
      )
      await Effect.runPromise(
        FleetRegistry.createBucket({ replicas: 3 }).pipe(Effect.provide(Nats.layer(fleet.connectOptions("admin"))))
      )
      const edge = fleet.servers[2]!
      const child = spawn("ip", [
        "netns",
        "exec",
        namespace.name,
        process.execPath,
        cliBin,
        "serve",
        "--nats",
        edge.url,
        "--machine",
        "m3",
        "--nats-nkey",
        fleet.keys.m3.seedFile
      ], { env: home.env, stdio: ["ignore", "ignore", "pipe"] })
      let log = ""
      child.stderr.on("data", (chunk) => (log += chunk))
      let done = false
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      void exited.then(() => (done = true))
      await waitUntil(() => done || log.includes("daemon: serving on"), 30_000)
      if (!log.includes("daemon: serving on")) throw new Error(`serve did not start in the namespace:\n${log}`)
      machine = {
        pid: child.pid!, // `ip netns exec` runs the command in its own process (exec), so this is serve's pid
        log: () => log,
        stop: async () => {
          if (done) return
          child.kill("SIGTERM")
          if (!(await waitUntil(() => done, 10_000))) child.kill("SIGKILL")
          await exited
        }
      }
    }, 120_000)

    afterAll(async () => {
      await machine?.stop()
      home.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }, 60_000)

    it("is reached by its name from a client on the host, its terminal's shell runs inside the namespace", async () => {
      const netnsOf = (pid: number) => fs.readlinkSync(`/proc/${pid}/ns/net`)
      expect(netnsOf(machine.pid)).not.toBe(netnsOf(process.pid))
      // from inside, the servers on the host's loopback are out of reach; the edge server is not
      const reach = (host: string, port: number) =>
        spawnSync("ip", ["netns", "exec", namespace.name, "python3", "-c", CONNECT, host, String(port)]).status
      expect(reach("127.0.0.1", fleet.servers[0]!.port)).not.toBe(0)
      expect(reach(fleet.servers[2]!.host, fleet.servers[2]!.port)).toBe(0)

      // a client on the host, connected to the first server only
      const client = fleetClient(fleet, "c1")
      try {
        const found = await waitUntil(
          async () =>
            (await client.runPromise(Effect.flatMap(FleetTerminal.Fleet, (f) => f.directory.machines)))
              .some((m) => m.machine === "m3"),
          15_000
        )
        expect(found).toBe(true)
        const pty = await client.runPromise(PtyService.PtyService)
        const opened = await client.runPromise(
          pty.open(anyOwner, { name: "in-netns" }).pipe(FleetTerminal.placedOn({ machine: "m3" }))
        )
        expect(opened.sessionId.startsWith("m3~")).toBe(true)
        const sent = await client.runPromise(pty.send(anyOwner, opened.sessionId as never, { text: "echo pid=$$" }))
        const pid = Number(/pid=(\d+)/.exec(sent.output)?.[1])
        expect(pid).toBe(opened.pid)
        expect(descendsFrom(pid, machine.pid)).toBe(true)
        expect(netnsOf(pid)).toBe(netnsOf(machine.pid))
        expect(netnsOf(pid)).not.toBe(netnsOf(process.pid))
        // the namespace's own view of the network: only its end of the pair (and loopback)
        const links = await client.runPromise(
          pty.send(anyOwner, opened.sessionId as never, { text: "ls /sys/class/net | sort | tr '\\n' ' '" })
        )
        expect(links.output).toMatch(/afn[0-9a-f]{6} lo/)
      } finally {
        await client.dispose()
      }
    }, 60_000)
  }
)
