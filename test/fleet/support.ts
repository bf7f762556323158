/** A fleet of real processes: a NATS cluster (TestFleet) and `agent-terminal serve --nats` machines. */
import type { PtyService } from "@agent-terminal/core"
import { FleetRegistry, FleetTerminal, Nats, TestFleet } from "@agent-terminal/fleet"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { type Daemon, makeHome, startDaemon } from "../daemon/support.js"

/** A running NATS cluster with the registry's bucket, ended by `close`. */
export const startNats = async () => {
  const scope = Effect.runSync(Scope.make())
  const fleet = await Effect.runPromise(TestFleet.make({ servers: 3 }).pipe(Scope.extend(scope)))
  await Effect.runPromise(
    FleetRegistry.createBucket({ replicas: 3 }).pipe(
      Effect.provide(Nats.layer(fleet.connectOptions("admin")))
    )
  )
  return { fleet, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** A machine: `serve --nats` in a home of its own (kept across a restart, so its state is too). */
export interface Machine {
  readonly name: string
  readonly home: ReturnType<typeof makeHome>
  daemon: Daemon
  readonly start: () => Promise<Daemon>
}

/** Start machine `name` as NATS user `user` (the test fleet's users m1…m4). */
export const startMachine = async (
  fleet: TestFleet.Fleet,
  name: TestFleet.User,
  extra: ReadonlyArray<string> = []
): Promise<Machine> => {
  const home = makeHome()
  const args = ["--nats", fleet.urls.join(","), "--machine", name, "--nats-nkey", fleet.keys[name].seedFile, ...extra]
  const start = () => startDaemon(home.env, args)
  const daemon = await start()
  return { name, home, daemon, start }
}

/** A fleet client as NATS user `user`, acting as `owner` (anonymous when none). */
export const fleetClient = (fleet: TestFleet.Fleet, user: TestFleet.User, owner?: string) =>
  ManagedRuntime.make(
    FleetTerminal.layer({ owner, client: `test-${user}`, handshakeTimeoutMs: 10_000 }).pipe(
      Layer.provide(Nats.layer(fleet.connectOptions(user)))
    )
  )

/** The owner argument the services ignore over the fleet (the machines bind the owner). */
export const anyOwner = "owner:ignored" as Parameters<PtyService.PtyService["Type"]["list"]>[0]

/** The typed error a failed effect ended with: its failure, or the error it died with. */
export const errorOf = <A, E>(exit: Exit.Exit<A, E>): { readonly _tag?: string } | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) return failure.value as { readonly _tag?: string }
  const defect = Cause.dieOption(exit.cause)
  return Option.isSome(defect) ? defect.value as { readonly _tag?: string } : undefined
}

/** Whether `pid` descends from `ancestor` (its parents, read from /proc). */
export const descendsFrom = (pid: number, ancestor: number): boolean => {
  let current = pid
  for (let depth = 0; depth < 32 && current > 1; depth++) {
    if (current === ancestor) return true
    try {
      const stat = fs.readFileSync(`/proc/${current}/stat`, "latin1")
      current = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    } catch {
      return false
    }
  }
  return false
}

/** Whether process `pid` lives (not a zombie). */
export const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}
