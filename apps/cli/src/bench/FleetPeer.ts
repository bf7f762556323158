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
}

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
    Layer.provide(Layer.mergeAll(overSocket, overNats)),
    Layer.provide(handlers),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
).pipe(Effect.runPromise).catch((error) => {
  process.stderr.write(`bench fleet peer: ${String(error)}\n`)
  process.exit(1)
})
