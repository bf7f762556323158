import { describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import { expect } from "vitest"
import { TestFleet } from "../src/index.js"
import { client, spawnMachine } from "./support.js"

const CONNECT = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2).close()"

// A network namespace needs root and iproute2; elsewhere there is no second machine to make.
describe.runIf(TestFleet.canMakeNetworkNamespace())("a machine in a network namespace of its own", () => {
  it.scopedLive(
    "reachable only through NATS, it answers, streams, and fails as the others do",
    () =>
      Effect.gen(function*() {
        const namespace = yield* TestFleet.networkNamespace
        // The third server also listens on the host's end of the veth pair: the one server the namespace reaches.
        const fleet = yield* TestFleet.make({ hosts: [undefined, undefined, namespace.hostAddress] })
        const edge = fleet.servers[2]!
        const machine = yield* spawnMachine(fleet, {
          machine: "m3",
          user: "m3",
          servers: [edge.url],
          netns: namespace.name
        })
        expect(fs.readlinkSync(`/proc/${machine.pid}/ns/net`)).not.toBe(fs.readlinkSync("/proc/self/ns/net"))
        // From inside, the servers on the host's loopback are out of reach; the edge server is not.
        const reach = (host: string, port: number) =>
          childProcess.spawnSync("ip", ["netns", "exec", namespace.name, "python3", "-c", CONNECT, host, String(port)])
            .status
        expect(reach("127.0.0.1", fleet.servers[0]!.port)).not.toBe(0)
        expect(reach(edge.host, edge.port)).toBe(0)

        const caller = yield* client(fleet, "c1", "m3", {}, { servers: [fleet.servers[0]!.url] })
        expect(yield* caller.Echo({ text: "across" })).toEqual({ text: "across", machine: "m3", user: "c1" })
        expect(yield* caller.Pid({})).toBe(machine.pid)
        const counted = yield* Stream.runCollect(caller.Count({ n: 500 }))
        expect(Chunk.toReadonlyArray(counted)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
        const call = yield* Effect.fork(Effect.exit(caller.Sleep({ ms: 60_000 })))
        yield* Effect.sleep("200 millis")
        yield* machine.kill("SIGKILL")
        const exit = yield* Fiber.join(call)
        expect(exit).toEqual(Exit.fail(expect.objectContaining({ _tag: "MachineUnavailable", machine: "m3" })))
      }),
    120_000
  )
})
