/**
 * The live view's operations across the fleet, with real processes: 3 nats-servers clustered, machines m1 and
 * m2 as real `agent-terminal serve --nats` processes, an agent's client (`FleetTerminal`, NATS user c1) and a
 * server of people (`FleetOversight`, NATS user p1, the only user the configuration lets call the machines'
 * `oversee` subjects).
 */
import { Oversight, PtyService } from "@agent-terminal/core"
import { FleetOversight, FleetTerminal, Nats } from "@agent-terminal/fleet"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { built, waitUntil } from "../daemon/support.js"
import { anyOwner, errorOf, fleetClient, type Machine, startMachine, startNats } from "./support.js"

describe.runIf(built)("the live view's operations across the fleet (real nats-servers, real serve --nats)", () => {
  let nats: Awaited<ReturnType<typeof startNats>>
  const machines: Array<Machine> = []
  let agent: ReturnType<typeof fleetClient>
  let people: ManagedRuntime.ManagedRuntime<Oversight.Oversight, unknown>

  beforeAll(async () => {
    nats = await startNats()
    for (const name of ["m1", "m2"] as const) machines.push(await startMachine(nats.fleet, name))
    agent = fleetClient(nats.fleet, "c1", "agent")
    people = ManagedRuntime.make(
      FleetOversight.layer({ client: "test-people", handshakeTimeoutMs: 10_000 }).pipe(
        Layer.provide(Nats.layer(nats.fleet.connectOptions("p1")))
      )
    )
  }, 120_000)

  afterAll(async () => {
    await people?.dispose()
    await agent?.dispose()
    for (const m of machines) {
      await m.daemon.stop()
      m.home.dispose()
    }
    await nats?.close()
  }, 60_000)

  /** The agent's terminal service, once it has heard from both machines. */
  const pty = async () => {
    await waitUntil(
      async () =>
        (await agent.runPromise(Effect.flatMap(FleetTerminal.Fleet, (fleet) => fleet.directory.machines))).length ===
          2,
      10_000
    )
    return agent.runPromise(PtyService.PtyService)
  }
  const oversight = () => people.runPromise(Oversight.Oversight)

  it("lists every machine's terminals with their machine, watches, takes control and hands back", async () => {
    const service = await pty()
    const onM1 = await agent.runPromise(
      service.open(anyOwner, { name: "on-m1" }).pipe(FleetTerminal.placedOn({ machine: "m1" }))
    )
    const onM2 = await agent.runPromise(
      service.open(anyOwner, { name: "on-m2", record: true }).pipe(FleetTerminal.placedOn({ machine: "m2" }))
    )
    const view = await oversight()
    const listed = async () => (await people.runPromise(view.sessions)).filter((s) => s.owner.includes("agent"))
    expect(await waitUntil(async () => (await listed()).length === 2, 10_000)).toBe(true)
    expect(
      (await listed()).map((s) => ({ id: s.sessionId, machine: s.machine })).sort((a, b) => a.id < b.id ? -1 : 1)
    ).toEqual([{ id: onM1.sessionId, machine: "m1" }, { id: onM2.sessionId, machine: "m2" }])

    // a person watches the terminal on m2 and sees the agent's output as it comes
    const seen: Array<string> = []
    const watching = people.runFork(Effect.scoped(Effect.gen(function*() {
      const watch = yield* view.watch(onM2.sessionId)
      seen.push(watch.snapshot.data)
      yield* Stream.runForEach(watch.events, (event) =>
        Effect.sync(() => {
          if (event._tag === "Output") seen.push(new TextDecoder().decode(event.data))
        }))
    })))
    await waitUntil(() => seen.length > 0, 10_000)
    await agent.runPromise(service.send(anyOwner, onM2.sessionId as never, { text: "echo live-$((6*7))" }))
    expect(await waitUntil(() => seen.join("").includes("live-42"), 10_000)).toBe(true)

    // takes control: the agent's send is refused; the person types; hands back; the agent's next send says so
    const control = await people.runPromise(view.take(onM2.sessionId, "person:ops-id", "ops"))
    expect(control.holderId).toBe("person:ops-id")
    const refused = await agent.runPromiseExit(
      service.send(anyOwner, onM2.sessionId as never, { text: "echo agent-blocked" })
    )
    expect(errorOf(refused)?._tag).toBe("HumanInControl")
    await people.runPromise(view.input(onM2.sessionId, "person:ops-id", "echo typed-by-$((2+3))-person\r"))
    expect(await waitUntil(() => seen.join("").includes("typed-by-5-person"), 10_000)).toBe(true)
    // another person cannot type meanwhile
    const stranger = await people.runPromiseExit(view.input(onM2.sessionId, "person:other", "x"))
    expect(errorOf(stranger)?._tag).toBe("NotInControl")
    const note = await people.runPromise(view.handBack(onM2.sessionId, "person:ops-id"))
    expect(note.linesTyped).toBe(1)
    const after = await agent.runPromise(service.send(anyOwner, onM2.sessionId as never, { text: "echo back" }))
    expect(after.human?.holder).toContain("person:ops-id")

    // the audit comes from m2, the recording made on m2 comes back whole
    const audit = await people.runPromise(view.audit(onM2.sessionId, 50))
    expect(audit.map((entry) => entry.action)).toEqual(expect.arrayContaining(["take", "input", "hand-back"]))
    const recordings = await people.runPromise(view.recordings)
    const recording = recordings.find((r) => r.sessionId === onM2.sessionId)
    expect(recording?.name.startsWith(`${onM2.sessionId}`)).toBe(true)
    expect(recording?.machine).toBe("m2")
    expect(
      await waitUntil(async () => {
        const bytes = await people.runPromise(view.recording(recording!.name))
        return Option.isSome(bytes) && new TextDecoder().decode(bytes.value).includes("live-42")
      }, 10_000)
    ).toBe(true)
    const content = Option.getOrThrow(await people.runPromise(view.recording(recording!.name)))
    expect(new TextDecoder().decode(content).split("\n")[0]).toContain("\"version\":2")
    expect(Option.isNone(await people.runPromise(view.recording(`m2~zzzzzz~nothing-1.cast`)))).toBe(true)

    // a recording larger than one chunk (and than a NATS message) comes over as chunks, whole
    await agent.runPromise(
      service.send(anyOwner, onM2.sessionId as never, { text: "head -c 1500000 /dev/zero | tr '\\0' a; echo" })
    )
    const large = async () =>
      (await people.runPromise(view.recordings)).find((r) => r.sessionId === onM2.sessionId)?.bytes ?? 0
    expect(await waitUntil(async () => (await large()) > 1_500_000, 10_000)).toBe(true)
    // the recording may still grow (its writer follows the output): the read holds at least what was listed before it
    const listedBytes = await large()
    const bytes = Option.getOrThrow(await people.runPromise(view.recording(recording!.name)))
    expect(bytes.length).toBeGreaterThanOrEqual(listedBytes)

    await agent.runPromise(service.close(anyOwner, onM1.sessionId as never))
    await agent.runPromise(service.close(anyOwner, onM2.sessionId as never))
    await people.runPromise(watching.await)
  }, 90_000)

  it("changes: a terminal opened on a machine is a change the page hears of", async () => {
    const service = await pty()
    const view = await oversight()
    // once every machine is followed, the machines' own changes are the only ones left
    await people.runPromise(view.sessions)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const heard = people.runPromise(Stream.runHead(view.changes).pipe(Effect.timeout("10 seconds"), Effect.option))
    await new Promise((resolve) => setTimeout(resolve, 200))
    const opened = await agent.runPromise(
      service.open(anyOwner, { name: "a-change" }).pipe(FleetTerminal.placedOn({ machine: "m1" }))
    )
    expect(Option.isSome(await heard)).toBe(true)
    await agent.runPromise(service.close(anyOwner, opened.sessionId as never))
  }, 30_000)

  it("acts for one owner: a call for another owner is OwnerMismatch, and runs nothing", async () => {
    const service = await pty()
    await agent.runPromise(service.list(anyOwner))
    const other = "owner:someone-else" as typeof anyOwner
    const refused = await agent.runPromiseExit(service.open(other, { name: "not-mine" }))
    expect(errorOf(refused)?._tag).toBe("OwnerMismatch")
    expect((await agent.runPromise(service.list(anyOwner))).some((s) => s.name === "not-mine")).toBe(false)
  }, 30_000)

  it("an owner name of 64 characters (valid for --owner and HTTP) is an owner on every machine", async () => {
    const long = fleetClient(nats.fleet, "c2", "a".repeat(64))
    try {
      await waitUntil(
        async () =>
          (await long.runPromise(Effect.flatMap(FleetTerminal.Fleet, (fleet) => fleet.directory.machines)))
            .length === 2,
        10_000
      )
      const service = await long.runPromise(PtyService.PtyService)
      const opened = await long.runPromise(
        service.open(anyOwner, { name: "long-owner" }).pipe(FleetTerminal.placedOn({ machine: "m2" }))
      )
      expect((await long.runPromise(service.list(anyOwner))).map((s) => s.sessionId)).toEqual([opened.sessionId])
      // the same owner of the same NATS user, from another client, is the same owner
      const again = fleetClient(nats.fleet, "c2", "a".repeat(64))
      try {
        const other = await again.runPromise(PtyService.PtyService)
        const sent = await again.runPromise(other.send(anyOwner, opened.sessionId as never, { text: "echo same" }))
        expect(sent.output).toContain("same")
      } finally {
        await again.dispose()
      }
      await long.runPromise(service.close(anyOwner, opened.sessionId as never))
    } finally {
      await long.dispose()
    }
  }, 60_000)

  it("refuses an agent's NATS user on the machines' oversee subject (NATS permissions), not p1", async () => {
    const request = (user: "c1" | "p1") =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const connection = yield* Nats.make(nats.fleet.connectOptions(user))
        return yield* Effect.promise(async () => {
          try {
            // an Open of the session protocol: the machine answers only users NATS lets publish here
            await connection.connection.request("agent-terminal.m.m2.oversee", new Uint8Array([1]), {
              timeout: 3_000
            })
            return "answered"
          } catch (error) {
            return String(error)
          }
        })
      })))
    expect(await request("c1")).toContain("Permissions Violation")
    expect(await request("p1")).not.toContain("Permissions Violation")

    // an agent's user flooding the subject reaches no machine: the person's view answers meanwhile
    const view = await oversight()
    const flood = Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const connection = yield* Nats.make(nats.fleet.connectOptions("c1"))
      for (let i = 0; i < 2_000; i++) {
        connection.connection.publish("agent-terminal.m.m1.oversee", new Uint8Array(4096), {
          reply: "agent-terminal.inbox.c1.flood"
        })
      }
      yield* Effect.promise(() => connection.connection.flush().catch(() => undefined))
    })))
    const answered = await people.runPromise(view.sessions)
    expect(Array.isArray(answered)).toBe(true)
    await flood
    expect(Array.isArray(await people.runPromise(view.sessions))).toBe(true)
  }, 30_000)
})
