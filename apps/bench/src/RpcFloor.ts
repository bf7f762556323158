/**
 * The floor of the daemon's round trip: a no-op `Ping` through the same `@effect/rpc` stack the daemon uses
 * (its socket protocol over a Unix socket, msgpack in the daemon's length-prefixed frames), between two
 * processes of their own. Forked by the
 * `daemon` group twice: `serve <socket>` answers pings; `<socket>` connects and, for each IPC message
 * `{ n }`, pings n times and reports the round trips' wall times (as `DaemonClient` does for `true`).
 */
import { Framing } from "@agent-terminal/daemon"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

class Floor extends RpcGroup.make(
  Rpc.make("Ping", { payload: { n: Schema.Number }, success: Schema.Struct({ n: Schema.Number }) })
) {}

const serve = (socket: string) =>
  Layer.launch(Layer.merge(
    RpcServer.layer(Floor, { disableTracing: true, concurrency: "unbounded" }).pipe(
      Layer.provide(Floor.toLayer({ Ping: ({ n }) => Effect.succeed({ n }) })),
      Layer.provide(RpcServer.layerProtocolSocketServer),
      Layer.provide(NodeSocketServer.layer({ path: socket })),
      Layer.provide(Framing.layerClient)
    ),
    Layer.effectDiscard(Effect.sync(() => process.send!({ ready: true })))
  ))

const ping = (socket: string) =>
  Effect.gen(function*() {
    const client = yield* RpcClient.make(Floor, { disableTracing: true })
    // warm both ends (JIT) before anything is measured
    for (let i = 0; i < 300; i++) yield* client.Ping({ n: i })
    process.send!({ ready: true })
    while (true) {
      const n = yield* Effect.async<number | undefined>((resume) => {
        process.once("message", (message: { readonly n?: number }) => resume(Effect.succeed(message.n)))
      })
      if (n === undefined) return
      const samples: Array<number> = []
      for (let i = 0; i < n; i++) {
        const started = performance.now()
        yield* client.Ping({ n: i })
        samples.push(performance.now() - started)
      }
      process.send!({ samples })
    }
  }).pipe(
    Effect.scoped,
    Effect.provide(
      RpcClient.layerProtocolSocket().pipe(
        Layer.provide(NodeSocket.layerNet({ path: socket })),
        Layer.provide(Framing.layerClient)
      )
    )
  )

const program: Effect.Effect<void, unknown> = process.argv[2] === "serve"
  ? serve(process.argv[3]!)
  : ping(process.argv[2]!)

Effect.runPromise(program).then(() => process.exit(0), (error) => {
  process.stderr.write(`bench rpc floor: ${String(error)}\n`)
  process.exit(1)
})
