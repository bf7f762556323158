/** The tests' fleet as a shared layer, and a client of the test group on one machine. */
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as childProcess from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Nats, NatsRpcClient, type NatsRpcServer, TestFleet } from "../src/index.js"
import { TestRpcs } from "./fixtures/group.js"

/** Repeat a check every `ms`, keeping its value (for `Effect.repeat({ until, schedule })`). */
export const every = <A>(ms: number) => Schedule.addDelay(Schedule.identity<A>(), () => ms)

export class Fleet extends Context.Tag("test/Fleet")<Fleet, TestFleet.Fleet>() {}

export const fleetLayer = (options: TestFleet.Options = {}) => Layer.scoped(Fleet, TestFleet.make(options))

/** A client of machine `machine` as fleet user `user`, on a NATS connection of its own. */
export const client = (
  fleet: TestFleet.Fleet,
  user: TestFleet.User,
  machine: string,
  options: Omit<NatsRpcClient.Options, "machine"> = {},
  nats: Partial<Nats.Options> = {}
) => Effect.flatMap(Nats.make(fleet.connectOptions(user, nats)), (connection) => clientOn(connection, machine, options))

/** A client of machine `machine` on `connection`. */
export const clientOn = (
  connection: Nats.Service,
  machine: string,
  options: Omit<NatsRpcClient.Options, "machine"> = {}
) =>
  // A machine just started may not be known to every server of the cluster yet (its subscription travels
  // the routes): "no responders" at the handshake is tried again for a few seconds. The handshake may take
  // longer than its 2 s default while the whole suite loads two cores.
  NatsRpcClient.make(TestRpcs, { machine, handshakeTimeoutMs: 10_000, ...options }).pipe(
    Effect.retry({
      while: (error) => error._tag === "MachineUnavailable" && error.reason.includes("no responders"),
      schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo("5 seconds"))
    }),
    Effect.provideService(Nats.Nats, connection),
    Effect.provideService(RpcSerialization.RpcSerialization, RpcSerialization.msgPack)
  )

/** A machine process serving the test group (see fixtures/machine.ts); killed with the scope. */
export interface MachineProcess {
  readonly pid: number
  readonly kill: (signal?: NodeJS.Signals) => Effect.Effect<void>
  readonly exited: () => boolean
}

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures")

/** Start machine `machine` as user `user` in a process of its own (in network namespace `netns` if given). */
export const spawnMachine = (
  fleet: TestFleet.Fleet,
  options: {
    readonly machine: string
    readonly user: TestFleet.User
    readonly servers?: ReadonlyArray<string>
    readonly netns?: string
    readonly server?: Partial<NatsRpcServer.Options>
  }
): Effect.Effect<MachineProcess, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<MachineProcess, Error>((resume) => {
      const config = JSON.stringify({
        nats: fleet.connectOptions(options.user, options.servers === undefined ? {} : { servers: options.servers }),
        server: { machine: options.machine, ...options.server }
      })
      const node = [
        process.execPath,
        "--import",
        path.join(fixtures, "register.mjs"),
        path.join(fixtures, "machine.ts"),
        config
      ]
      const child = options.netns === undefined
        ? childProcess.spawn(node[0]!, node.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
        : childProcess.spawn("ip", ["netns", "exec", options.netns, ...node], { stdio: ["ignore", "pipe", "pipe"] })
      let out = ""
      let err = ""
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      const kill = (signal: NodeJS.Signals = "SIGKILL") =>
        Effect.promise(async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          await exited
        })
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        const ready = /ready (\d+)\n/.exec(out)
        if (ready !== null) {
          resume(Effect.succeed({
            pid: Number(ready[1]),
            kill,
            exited: () => child.exitCode !== null || child.signalCode !== null
          }))
        }
      })
      child.once(
        "exit",
        (code) => resume(Effect.fail(new Error(`machine ${options.machine} exited (${code}): ${err}`)))
      )
      return kill()
    }),
    (machine) => machine.kill()
  )
