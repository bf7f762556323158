/**
 * A clean process for `roundtrip.true.in-memory` (forked by the `roundtrip` group): `PtyService` over
 * `ScriptedShell` (no kernel, no shell), `warmup` sends, then `blocks` blocks of `perBlock` sends, each
 * block's CPU per send (user + system, µs) from `process.cpuUsage()`. The result goes back over IPC.
 */
import { Ids, PtyService, ScriptedShell } from "@agent-terminal/core"
import * as Effect from "effect/Effect"

const owner = Ids.OwnerId.make("bench-in-memory")

/** What the child reports: µs of CPU per send, one number per block, in order. */
export interface InMemoryReport {
  readonly cpuPerSend: ReadonlyArray<number>
}

const measure = (warmup: number, blocks: number, perBlock: number) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, { name: "in-memory" })
    const id = Ids.SessionId.make(opened.sessionId)
    for (let i = 0; i < warmup; i++) yield* service.send(owner, id, { text: "true" })
    const cpuPerSend: Array<number> = []
    for (let block = 0; block < blocks; block++) {
      const before = process.cpuUsage()
      for (let i = 0; i < perBlock; i++) yield* service.send(owner, id, { text: "true" })
      const used = process.cpuUsage(before)
      cpuPerSend.push((used.user + used.system) / perBlock)
    }
    yield* service.close(owner, id)
    return { cpuPerSend } satisfies InMemoryReport
  }).pipe(Effect.scoped, Effect.provide(ScriptedShell.layerService()))

const [warmup, blocks, perBlock] = process.argv.slice(2).map(Number)
Effect.runPromise(measure(warmup ?? 5000, blocks ?? 5, perBlock ?? 2000)).then(
  (value) => process.send?.(value, () => process.exit(0)),
  (error) => {
    process.stderr.write(`in-memory child failed: ${String(error)}\n`)
    process.exit(1)
  }
)
