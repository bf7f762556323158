import { layer } from "@effect/vitest"
import { jetstream } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { expect } from "vitest"
import { FleetRegistry, Nats, NatsRpcServer, Subjects } from "../src/index.js"
import * as envelope from "../src/internal/envelope.js"
import { subscribe } from "../src/internal/subscription.js"
import { machineLayer } from "./fixtures/group.js"
import { client, Fleet, fleetLayer } from "./support.js"

const refusedSubscription = (nats: Nats.Service, subject: string) =>
  Effect.scoped(subscribe(nats, subject, () => undefined)).pipe(
    Effect.match({ onFailure: (error) => error._tag, onSuccess: () => "subscribed" })
  )

/** Put `key` in the registry as `nats`'s user: "written" or why not. */
const put = (nats: Nats.Service, key: string) =>
  Effect.promise(async () => {
    try {
      const kv = await new Kvm(jetstream(nats.connection, { timeout: 1_500 })).open(Subjects.registryBucket)
      await kv.put(key, "{}", { timeout: 1_500 })
      return "written"
    } catch (error) {
      return String(error)
    }
  })

const serveAs = (user: "m1" | "c1", machine: string) =>
  Effect.gen(function*() {
    const fleet = yield* Fleet
    return yield* Effect.exit(Layer.build(machineLayer(fleet.connectOptions(user), { machine })))
  })

layer(fleetLayer(), { timeout: 120_000, excludeTestServices: true })("the fleet's permissions, for real", (it) => {
  it.scoped("a machine serves only its own subject; a client serves none", () =>
    Effect.gen(function*() {
      expect(yield* serveAs("m1", "m2")).toEqual(Exit.fail(expect.objectContaining({ _tag: "NotPermitted" })))
      expect(yield* serveAs("c1", "m1")).toEqual(Exit.fail(expect.objectContaining({ _tag: "NotPermitted" })))
      expect(Exit.isSuccess(yield* serveAs("m1", "m1"))).toBe(true)
      // A second process under the same name stops: one machine, one server.
      expect(yield* serveAs("m1", "m1")).toEqual(Exit.fail(expect.objectContaining({ _tag: "MachineNameTaken" })))
    }))

  it.scoped("nobody reads another's inbox or another machine's requests", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const m1 = yield* Nats.make(fleet.connectOptions("m1"))
      const c1 = yield* Nats.make(fleet.connectOptions("c1"))
      expect(yield* refusedSubscription(m1, "agent-terminal.m.m2.rpc")).toBe("NotPermitted")
      expect(yield* refusedSubscription(m1, "agent-terminal.inbox.c1.>")).toBe("NotPermitted")
      expect(yield* refusedSubscription(m1, "agent-terminal.>")).toBe("NotPermitted")
      expect(yield* refusedSubscription(c1, "agent-terminal.inbox.c2.>")).toBe("NotPermitted")
      expect(yield* refusedSubscription(c1, "agent-terminal.inbox.m1.>")).toBe("NotPermitted")
      expect(yield* refusedSubscription(c1, "agent-terminal.m.m1.rpc")).toBe("NotPermitted")
      expect(yield* refusedSubscription(c1, "agent-terminal.inbox.c1.>")).toBe("subscribed")
    }))

  it.scoped("only a machine writes its own registry keys; clients only read", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const admin = yield* Nats.make(fleet.connectOptions("admin"))
      yield* FleetRegistry.createBucket().pipe(Effect.provideService(Nats.Nats, admin))
      const m1 = yield* Nats.make(fleet.connectOptions("m1"))
      const c1 = yield* Nats.make(fleet.connectOptions("c1"))
      expect(yield* put(m1, "m1.own")).toBe("written")
      expect(yield* put(m1, "m2.forged")).toContain("Permissions Violation")
      expect(yield* put(c1, "m1.forged")).toContain("Permissions Violation")
      const reader = yield* FleetRegistry.makeReader({ timeoutMs: 15_000 }).pipe(Effect.provideService(Nats.Nats, c1))
      expect([...(yield* reader.keys())].sort()).toEqual(["m1.own"])
    }))

  it.scoped("a client cannot make a machine write for it: a reply outside the inbox space is never answered", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const admin = yield* Nats.make(fleet.connectOptions("admin"))
      yield* FleetRegistry.createBucket().pipe(Effect.provideService(Nats.Nats, admin))
      yield* Layer.build(machineLayer(fleet.connectOptions("m2"), { machine: "m2" }))
      const raw = yield* Nats.make(fleet.connectOptions("c1"))
      const open = new Uint8Array([1, ...new TextEncoder().encode(JSON.stringify({ v: envelope.VERSION }))])
      // The machine may answer the reply subject of what it receives: these would write its registry keys.
      for (const reply of ["$KV.agent-terminal-fleet.m2.forged", "agent-terminal.m.m2.announce"]) {
        raw.connection.publish("agent-terminal.m.m2.rpc", open, { reply })
      }
      yield* Effect.promise(() => raw.connection.flush())
      // A call after them is answered, so the machine has handled them (one subscription, in order).
      const caller = yield* client(fleet, "c1", "m2")
      expect((yield* caller.Echo({ text: "after" })).text).toBe("after")
      const reader = yield* FleetRegistry.makeReader({ timeoutMs: 15_000 }).pipe(Effect.provideService(Nats.Nats, raw))
      expect(yield* reader.keys("m2")).toEqual([])
    }))

  it.scoped("a client cannot act in another user's name: the challenge goes where only that user reads", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const context = yield* Layer.build(machineLayer(fleet.connectOptions("m3"), { machine: "m3" }))
      const sessions = Context.get(context, NatsRpcServer.Sessions)
      const raw = yield* Nats.make(fleet.connectOptions("c1"))
      const forged = "agent-terminal.inbox.c2.forged"
      const send = (kind: number, body: unknown) =>
        raw.connection.publish(
          "agent-terminal.m.m3.rpc",
          new Uint8Array([kind, ...new TextEncoder().encode(JSON.stringify(body))]),
          {
            reply: forged
          }
        )
      send(1, { v: envelope.VERSION })
      send(2, { challenge: "0".repeat(32) })
      yield* Effect.promise(() => raw.connection.flush())
      const caller = yield* client(fleet, "c2", "m3")
      expect((yield* caller.Echo({ text: "me" })).user).toBe("c2")
      // The forged session never became ready: the only session is the real c2's.
      expect(sessions.count()).toBe(1)
    }))

  it.scoped("no credentials, or a key the servers do not know: refused", () =>
    Effect.gen(function*() {
      const fleet = yield* Fleet
      const none = yield* Effect.exit(Nats.make({ servers: fleet.urls, user: "c1" }))
      expect(none).toEqual(Exit.fail(expect.objectContaining({ _tag: "NatsUnavailable" })))
      expect(String(none)).toContain("Authorization")
      const stranger = "SUAEL6GG2L2HIF7DUGZJGMRUFKXELGGYFMHF76UO2AYBG3K4YLWR3FKC2Q"
      const unknown = yield* Effect.exit(Nats.make({ servers: fleet.urls, user: "c1", seed: stranger }))
      expect(unknown).toEqual(Exit.fail(expect.objectContaining({ _tag: "NatsUnavailable" })))
    }))
})

layer(fleetLayer({ servers: 1, tls: { verifyClients: true } }), { timeout: 60_000, excludeTestServices: true })(
  "TLS with the fleet's own CA",
  (it) => {
    it.scoped("a client with the CA and its certificate connects and calls; any other is refused", () =>
      Effect.gen(function*() {
        const fleet = yield* Fleet
        const tls = fleet.tls!
        yield* Layer.build(machineLayer(fleet.connectOptions("m1"), { machine: "m1" }))
        const caller = yield* client(fleet, "c1", "m1")
        expect((yield* caller.Echo({ text: "over TLS" })).text).toBe("over TLS")
        const attempts = {
          "an untrusted CA (the server's certificate is not believed)": {
            caFile: tls.untrustedCaFile,
            certFile: tls.client.certFile,
            keyFile: tls.client.keyFile
          },
          "a client certificate of another CA": {
            caFile: tls.caFile,
            certFile: tls.untrustedClient.certFile,
            keyFile: tls.untrustedClient.keyFile
          },
          "no client certificate": { caFile: tls.caFile }
        }
        for (const [what, files] of Object.entries(attempts)) {
          const exit = yield* Effect.exit(Nats.make(fleet.connectOptions("c1", { tls: files })))
          expect(exit, what).toEqual(Exit.fail(expect.objectContaining({ _tag: "NatsUnavailable" })))
        }
        const plain = yield* Effect.exit(
          Nats.make(fleet.connectOptions("c1", {
            servers: fleet.urls.map((url) => url.replace("tls://", "nats://")),
            tls: undefined
          }))
        )
        expect(plain, "without TLS").toEqual(Exit.fail(expect.objectContaining({ _tag: "NatsUnavailable" })))
      }))
  }
)
