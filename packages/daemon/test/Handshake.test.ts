import { Ids, PtyService, TaskRuntime } from "@agent-terminal/core"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as RpcClient from "@effect/rpc/RpcClient"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as path from "node:path"
import { Framing, Protocol, RemoteTerminal } from "../src/index.js"
import { daemonLayer, tempDir } from "./support.js"

const withDaemon = Effect.gen(function*() {
  const dir = yield* tempDir
  const socket = path.join(dir, "d.sock")
  yield* Layer.build(daemonLayer(socket))
  return socket
})

/** A client of the protocol that never says Hello. */
const rawClient = (socket: string) =>
  Effect.gen(function*() {
    const protocol = yield* Layer.build(
      RpcClient.layerProtocolSocket({ retryTransientErrors: false, retrySchedule: Schedule.recurs(0) }).pipe(
        Layer.provide(NodeSocket.layerNet({ path: socket })),
        Layer.provide(Framing.layerClient)
      )
    )
    return yield* RpcClient.make(Protocol.DaemonRpcs, { disableTracing: true }).pipe(Effect.provide(protocol))
  })

describe("the handshake", () => {
  it.scopedLive("a client of another protocol version is refused with both versions named", () =>
    Effect.gen(function*() {
      const socket = yield* withDaemon
      const error = yield* RemoteTerminal.connect({ socket, protocolVersion: Protocol.PROTOCOL_VERSION + 1 }).pipe(
        Effect.flip
      )
      expect(error).toBeInstanceOf(Protocol.ProtocolMismatch)
      expect(error.message).toBe(
        `protocol mismatch: this client speaks agent-terminal protocol ${Protocol.PROTOCOL_VERSION + 1}, the daemon ` +
          `speaks ${Protocol.PROTOCOL_VERSION}; run a client and a daemon of the same version (restart the daemon after ` +
          "an upgrade)"
      )
    }))

  it.scopedLive("nothing runs on a connection that has not said Hello", () =>
    Effect.gen(function*() {
      const socket = yield* withDaemon
      const client = yield* rawClient(socket)
      const refused = yield* client.Open({ request: {} }).pipe(Effect.flip)
      expect(refused._tag).toBe("HandshakeRequired")
      expect(yield* client.List({}).pipe(Effect.flip)).toMatchObject({ _tag: "HandshakeRequired" })
    }))

  it.scopedLive("a new named owner without a secret gets one issued once; a wrong or missing one is refused", () =>
    Effect.gen(function*() {
      const socket = yield* withDaemon
      const issued: Array<string> = []
      const first = yield* RemoteTerminal.connect({
        socket,
        owner: { name: "alice" },
        onIssuedSecret: (secret) => Effect.sync(() => issued.push(secret))
      })
      expect(first.hello.owner).toBe("owner:alice")
      expect(issued).toHaveLength(1)
      expect(first.hello.issuedSecret).toBe(issued[0])
      const again = yield* RemoteTerminal.connect({ socket, owner: { name: "alice", secret: issued[0]! } })
      expect(again.hello).toMatchObject({ owner: "owner:alice" })
      expect(again.hello.issuedSecret).toBeUndefined()
      const wrong = yield* RemoteTerminal.connect({ socket, owner: { name: "alice", secret: "x".repeat(43) } }).pipe(
        Effect.flip
      )
      expect(wrong).toMatchObject({ _tag: "OwnerRejected", reason: "the secret does not match" })
      const missing = yield* RemoteTerminal.connect({ socket, owner: { name: "alice" } }).pipe(Effect.flip)
      expect(missing).toMatchObject({ _tag: "OwnerRejected", reason: "this owner exists: give its secret" })
      const configured = yield* RemoteTerminal.connect({
        socket,
        owner: { name: "bob", secret: "bob-chose-this-secret" }
      })
      expect(configured.hello.issuedSecret).toBeUndefined()
    }))

  it.scopedLive("the remote layer acts as its connection's owner; a call naming another owner is refused", () =>
    Effect.gen(function*() {
      const socket = yield* withDaemon
      const alice = yield* Layer.build(
        RemoteTerminal.layer({ socket, owner: { name: "alice", secret: "s".repeat(16) } })
      )
      const mallory = yield* Layer.build(RemoteTerminal.layer({ socket }))
      const ptyA = yield* Effect.provide(PtyService.PtyService, alice)
      const ptyM = yield* Effect.provide(PtyService.PtyService, mallory)
      const tasksM = yield* Effect.provide(TaskRuntime.Tasks, mallory)
      const aliceOwner = (yield* Effect.provide(RemoteTerminal.Connected, alice)).owner
      const malloryOwner = (yield* Effect.provide(RemoteTerminal.Connected, mallory)).owner
      expect(aliceOwner).toBe("owner:alice")
      const opened = yield* ptyA.open(aliceOwner, {})
      const id = Ids.SessionId.make(opened.sessionId)
      // as itself, the anonymous connection sees nothing of alice's
      const stolen = yield* ptyM.read(malloryOwner, id, {}).pipe(Effect.flip)
      expect(stolen._tag).toBe("ForeignSession")
      expect(yield* ptyM.list(malloryOwner)).toEqual([])
      // naming alice's owner does not make it alice: each kind of call dies with OwnerMismatch, naming both
      const refused: ReadonlyArray<Exit.Exit<unknown, unknown>> = [
        yield* ptyM.read(aliceOwner, id, {}).pipe(Effect.exit),
        yield* ptyM.list(aliceOwner).pipe(Effect.exit),
        yield* ptyM.close(aliceOwner, id).pipe(Effect.exit),
        yield* tasksM.list(aliceOwner).pipe(Effect.exit),
        yield* Effect.scoped(ptyM.watch!(aliceOwner, id)).pipe(Effect.exit)
      ]
      for (const exit of refused) {
        const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        expect(defect).toBeInstanceOf(Protocol.OwnerMismatch)
        expect(defect).toMatchObject({ connection: malloryOwner, call: "owner:alice" })
        expect((defect as Error).message).toContain(malloryOwner)
        expect((defect as Error).message).toContain("owner:alice")
      }
      // alice's session is untouched, and alice still gets answers
      expect((yield* ptyA.list(aliceOwner)).map((s) => s.sessionId)).toEqual([opened.sessionId])
      const read = yield* ptyA.read(aliceOwner, id, {})
      expect(read.text).toBeDefined()
    }))
})
