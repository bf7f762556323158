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
import { watchedSend } from "./Watched.js"

type Message = { readonly n: number } | { readonly stream: string }

const program = Effect.gen(function*() {
  const remote = yield* Layer.build(RemoteTerminal.layer({ socket: process.argv[2]!, client: "bench" }))
  const pty = yield* Effect.provide(PtyService.PtyService, remote)
  // the owner the daemon bound the connection to: every call is made as it
  const { owner } = yield* Effect.provide(RemoteTerminal.Connected, remote)
  const id = Ids.SessionId.make((yield* pty.open(owner, { name: "roundtrip" })).sessionId)
  // warm both ends (JIT) before anything is measured
  for (let i = 0; i < 300; i++) yield* pty.send(owner, id, { text: "true" })
  process.send!({ ready: true })

  while (true) {
    const message = yield* Effect.async<Message | undefined>((resume) => {
      process.once("message", (message: Message | undefined) => resume(Effect.succeed(message)))
    })
    if (message === undefined) return
    if ("stream" in message) {
      process.send!(yield* watchedSend(pty, owner, id, message.stream))
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
