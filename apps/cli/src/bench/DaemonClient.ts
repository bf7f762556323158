/**
 * A client of the daemon in a process of its own (forked by the `daemon` group), holding nothing but the
 * remote layer, as `mcp --daemon` does: it opens a shell in the daemon at `argv[2]` and, for each IPC message
 * `{ n }`, sends `true` n times and reports the round trips' wall times; for `{ stream: command }` it watches
 * its shell while it runs the command and reports the rate at the watcher (write → the last byte there).
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { RemoteTerminal } from "@agent-terminal/daemon"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

const owner = Ids.OwnerId.make("bench-client")
const MiB = 2 ** 20

type Message = { readonly n: number } | { readonly stream: string }

const program = Effect.gen(function*() {
  const pty = yield* Effect.provide(
    PtyService.PtyService,
    yield* Layer.build(RemoteTerminal.layer({ socket: process.argv[2]!, client: "bench" }))
  )
  const id = Ids.SessionId.make((yield* pty.open(owner, { name: "roundtrip" })).sessionId)
  // warm both ends (JIT) before anything is measured
  for (let i = 0; i < 300; i++) yield* pty.send(owner, id, { text: "true" })
  process.send!({ ready: true })

  /** The command in this client's shell, watched here: MiB/s at the watcher, and whether it was dropped. */
  const streamed = (command: string) =>
    Effect.scoped(Effect.gen(function*() {
      // the backlog bound raised for the measurement: what is measured is how fast the socket carries the
      // stream, not where the bound cuts it
      const watch = yield* pty.watch!(owner, id, { maxBufferedBytes: 256 * MiB })
      let bytes = 0
      let last = 0
      let dropped = 0
      yield* watch.events.pipe(
        Stream.runForEach((event) =>
          Effect.sync(() => {
            if (event._tag === "Dropped") dropped++
            if (event._tag !== "Output") return
            bytes += event.data.length
            last = performance.now()
          })
        ),
        Effect.forkScoped
      )
      const started = performance.now()
      yield* pty.send(owner, id, { text: command, timeoutMs: 600_000 })
      let seen = -1
      while (seen !== bytes) {
        seen = bytes
        yield* Effect.sleep(150)
      }
      return { rate: bytes / MiB / ((last - started) / 1000), bytes, dropped }
    }))

  while (true) {
    const message = yield* Effect.async<Message | undefined>((resume) => {
      process.once("message", (message: Message | undefined) => resume(Effect.succeed(message)))
    })
    if (message === undefined) return
    if ("stream" in message) {
      process.send!(yield* streamed(message.stream))
      continue
    }
    const samples: Array<number> = []
    for (let i = 0; i < message.n; i++) {
      const started = performance.now()
      yield* pty.send(owner, id, { text: "true" })
      samples.push(performance.now() - started)
    }
    process.send!({ samples })
  }
})

Effect.runPromise(Effect.scoped(program)).then(() => process.exit(0), (error) => {
  process.stderr.write(`bench daemon client: ${String(error)}\n`)
  process.exit(1)
})
