/**
 * The send without MCP, forked for `lean.send-cpu.in-process`: `PtyService` over `NodeTerminal.layer` (a real
 * pty, a real bash with the shell integration, the emulator, the readiness race, the audit) in a Node process of
 * its own, driven as `PtyHolder serve` is: it reports `{ ready: true }` over IPC once its session is open, then
 * for each `{ sends: n }` it is sent does n `send`s of `true` and reports this process's CPU over them
 * (`{ cpuUs }`). It closes its session and exits when the channel closes. What the server over stdio spends
 * beyond it is the MCP layer's: the request read and parsed, its fiber, the tool's decode and rendering, the
 * answer written.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"

const owner = Ids.OwnerId.make("bench-in-process")

const serve = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, {})
  const id = Ids.SessionId.make(opened.sessionId)
  const runPromise = Runtime.runPromise(yield* Effect.runtime<never>())
  const send = service.send(owner, id, { text: "true" }).pipe(
    Effect.flatMap((result) =>
      result.waitReason === "prompt" && result.exitCode === 0
        ? Effect.void
        : Effect.dieMessage(`a send of true answered ${result.waitReason}, exit ${result.exitCode}`)
    )
  )
  process.on("message", (message: { readonly sends: number }) => {
    const before = process.cpuUsage()
    void runPromise(message.sends > 0 ? Effect.repeatN(send, message.sends - 1) : Effect.void).then(
      () => {
        const used = process.cpuUsage(before)
        process.send?.({ cpuUs: used.user + used.system })
      },
      (error) => {
        process.stderr.write(`InProcessSend: ${String(error)}\n`)
        process.exit(1)
      }
    )
  })
  process.send?.({ ready: true })
  yield* Effect.async<void>((resume) => {
    process.once("disconnect", () => resume(Effect.void))
  })
  yield* service.close(owner, id)
}).pipe(Effect.scoped, Effect.provide(NodeTerminal.layer()))

Effect.runPromise(serve).then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`InProcessSend failed: ${String(error)}\n`)
    process.exit(1)
  }
)
