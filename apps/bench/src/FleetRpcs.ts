/**
 * The fleet group's RpcGroup, served the same way over a Unix socket and over NATS by `FleetPeer`: a no-op
 * `Ping`, a `Flood` stream of byte chunks, and a `Sleep` to have a call in flight when a machine dies.
 */
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

export class FleetRpcs extends RpcGroup.make(
  Rpc.make("Ping", { payload: { n: Schema.Number }, success: Schema.Struct({ n: Schema.Number }) }),
  Rpc.make("Flood", {
    payload: { chunks: Schema.Number, bytes: Schema.Number },
    success: Schema.Uint8ArrayFromSelf,
    stream: true
  }),
  Rpc.make("Sleep", { payload: { ms: Schema.Number }, success: Schema.Number })
) {}

export const handlers = FleetRpcs.toLayer({
  Ping: ({ n }) => Effect.succeed({ n }),
  Flood: ({ bytes, chunks }) => {
    const chunk = new Uint8Array(bytes).fill(97)
    return Stream.repeatValue(chunk).pipe(Stream.take(chunks))
  },
  Sleep: ({ ms }) => Effect.as(Effect.sleep(ms), ms)
})
