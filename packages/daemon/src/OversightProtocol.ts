/**
 * The live view's operations (`Oversight`) as an `@effect/rpc` `RpcGroup` of their own, derived from their
 * declarations (`OversightOperations`), and its handlers over the `Oversight` in context. A group apart from
 * the daemon's (`DaemonRpcs`): it sees every owner's terminals and takes their keyboard, so a transport serves
 * it only to those who serve people (a machine of the fleet serves it on a subject of its own, which NATS
 * permissions give only to such users), never on the connection every agent client has.
 *
 * No handshake: the group has no owner. `changes`, `watch` and a recording's bytes are streams.
 *
 * @since 0.4.0
 */
import { Oversight, OversightOperations, Watch } from "@agent-terminal/core"
import type * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { rpcOf } from "./Protocol.js"

/** An RPC of the group, as its handlers and clients see it: payload fields by name (the declarations say which). */
type OversightRpc = Rpc.Rpc<
  string,
  Schema.Schema<any, any, never>,
  Schema.Schema<any, any, never>,
  Schema.Schema<any, any, never>
>

const group: RpcGroup.RpcGroup<OversightRpc> = RpcGroup.make(
  ...Object.values(OversightOperations.operations).map((operation) => rpcOf(operation)),
  ...Object.values(OversightOperations.streams).map((operation) => rpcOf(operation, { stream: true }))
) as unknown as RpcGroup.RpcGroup<OversightRpc>

/**
 * Every operation of `Oversight`: one RPC per declaration of `OversightOperations.operations`, and a
 * streaming RPC per declaration of `OversightOperations.streams`.
 *
 * @since 0.4.0
 */
export class OversightRpcs extends group {}

type Untyped = (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>

/** A recording's bytes as chunks of at most `OversightOperations.recordingChunkBytes`. */
const chunksOf = (bytes: Uint8Array): Stream.Stream<Uint8Array> =>
  Stream.fromIterable(function*() {
    const size = OversightOperations.recordingChunkBytes
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, Math.min(bytes.length, at + size))
  }())

/**
 * The handlers of `OversightRpcs` over the `Oversight` in context: each call's payload fields are the method's
 * arguments, in their declared order.
 *
 * @since 0.4.0
 */
export const handlersLayer: Layer.Layer<Rpc.ToHandler<OversightRpc>, never, Oversight.Oversight> = OversightRpcs
  .toLayer(Effect.gen(function*() {
    const oversight = yield* Oversight.Oversight
    const handlers: Record<string, (payload: Record<string, unknown>) => unknown> = {}
    for (const [method, operation] of Object.entries(OversightOperations.operations)) {
      const member = (oversight as unknown as Record<string, unknown>)[method]
      handlers[operation.tag] = typeof member === "function"
        ? (payload) => (member as Untyped)(...operation.args.map((argument) => payload[argument.name]))
        : () => member
    }
    const { changes, recording, watch } = OversightOperations.streams
    handlers[changes.tag] = () => Stream.map(oversight.changes, () => 1 as const)
    handlers[watch.tag] = (payload) =>
      Stream.unwrapScoped(
        Effect.map(
          oversight.watch(
            payload.sessionId as string,
            payload.options as Watch.WatchOptions | undefined
          ),
          (opened) =>
            Stream.concat(
              Stream.make<Array<Watch.Snapshot | Watch.WatchEvent>>(opened.snapshot),
              Watch.gather(opened.events)
            )
        )
      )
    handlers[recording.tag] = (payload) =>
      Stream.unwrap(Effect.map(oversight.recording(payload.name as string), (found) =>
        Option.match(found, {
          onNone: () => Stream.fail(new OversightOperations.RecordingNotFound({ name: payload.name as string })),
          onSome: chunksOf
        })))
    return handlers as never
  }))
