/**
 * A machine of the fleet group, forked: serves `FleetRpcs` on a Unix socket (`socket`) and over NATS (`nats`,
 * as machine `machine`), whichever are given in the JSON argument, then says `{ ready: true }` over IPC.
 */
import { Nats, NatsRpcServer } from "@agent-terminal/fleet"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FleetRpcs, handlers } from "./FleetRpcs.js"

const config = JSON.parse(process.argv[2]!) as {
  readonly socket?: string
  readonly nats?: Nats.Options
  readonly machine?: string
  /** Also the floor: a bare nats.js echo on this user's machine subject (no @effect/rpc, no session). */
  readonly floor?: Nats.Options
}

/** The bare echo: each message is answered on its reply subject with as many bytes as its first 4 ask. */
const floor = config.floor === undefined ? Layer.empty : Layer.scopedDiscard(Effect.gen(function*() {
  const nats = yield* Nats.make(config.floor!)
  const filler = new Uint8Array(4 * 1024 * 1024).fill(97)
  nats.connection.subscribe(`agent-terminal.m.${config.floor!.user}.rpc`, {
    callback: (_, message) => {
      if (message.reply === undefined) return
      const size = message.data.length >= 4
        ? new DataView(message.data.buffer, message.data.byteOffset).getUint32(0)
        : 0
      nats.connection.publish(message.reply, filler.subarray(0, Math.min(size, filler.length)))
    }
  })
  yield* Effect.promise(() => nats.connection.flush())
}))

const overSocket = config.socket === undefined ? Layer.empty : RpcServer.layer(FleetRpcs, {
  disableTracing: true,
  concurrency: "unbounded"
}).pipe(
  Layer.provide(RpcServer.layerProtocolSocketServer),
  Layer.provide(NodeSocketServer.layer({ path: config.socket }))
)

const overNats = config.nats === undefined ? Layer.empty : NatsRpcServer.layer(FleetRpcs, {
  machine: config.machine ?? "m1"
}).pipe(Layer.provide(Nats.layer(config.nats)))

Layer.launch(
  Layer.effectDiscard(Effect.sync(() => process.send!({ ready: true }))).pipe(
    Layer.provide(Layer.mergeAll(overSocket, overNats, floor)),
    Layer.provide(handlers),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
).pipe(Effect.runPromise).catch((error) => {
  process.stderr.write(`bench fleet peer: ${String(error)}\n`)
  process.exit(1)
})
