/**
 * A clean process for one memory measurement (forked by the `memory` group): open a session, take the
 * RSS after a GC, push `mib` MiB of output through it, GC again, report. `floor` does the same with a raw
 * node-pty read loop. The result goes back over IPC.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import { RawTerminal } from "./RawPty.js"

/** What the child reports. */
export interface MemoryReport {
  readonly mode: "ours" | "floor"
  readonly mib: number
  readonly rssBefore: number
  readonly rssAfter: number
  readonly heapBefore: number
  readonly heapAfter: number
  readonly externalAfter: number
  readonly maxRss: number
  readonly seconds: number
  readonly settledBy?: string
}

const owner = Ids.OwnerId.make("bench-memory")

/** The memory facts of one measurement, taken the same way for ours and the floor. */
const reportOf = (
  mode: MemoryReport["mode"],
  mib: number,
  before: NodeJS.MemoryUsage,
  after: NodeJS.MemoryUsage,
  seconds: number,
  settledBy?: string
): MemoryReport => ({
  mode,
  mib,
  rssBefore: before.rss,
  rssAfter: after.rss,
  heapBefore: before.heapUsed,
  heapAfter: after.heapUsed,
  externalAfter: after.external,
  maxRss: process.resourceUsage().maxRSS * 1024,
  seconds,
  ...(settledBy !== undefined ? { settledBy } : {})
})

const settle = async () => {
  const gc = (globalThis as { gc?: () => void }).gc
  for (let i = 0; i < 3; i++) {
    gc?.()
    await new Promise((resolve) => setTimeout(resolve, 150))
  }
}

const command = (mib: number) => `head -c ${mib}M /dev/zero | tr '\\0' a | fold -w 99`

const ours = (mib: number) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, { name: "memory" })
    const id = Ids.SessionId.make(opened.sessionId)
    yield* service.send(owner, id, { text: "true" })
    yield* Effect.promise(settle)
    const before = process.memoryUsage()
    const started = performance.now()
    const result = yield* service.send(owner, id, { text: command(mib), timeoutMs: 1_800_000 })
    const seconds = (performance.now() - started) / 1000
    yield* Effect.promise(settle)
    const after = process.memoryUsage()
    const report = reportOf("ours", mib, before, after, seconds, result.waitReason)
    yield* service.close(owner, id)
    return report
  }).pipe(Effect.scoped, Effect.provide(NodeTerminal.layer({})))

const floor = async (mib: number): Promise<MemoryReport> => {
  const raw = RawTerminal.bash()
  await raw.next()
  await raw.roundTrip("true\r")
  await settle()
  const before = process.memoryUsage()
  const started = performance.now()
  await raw.roundTrip(`${command(mib)}\r`, undefined, 1_800_000)
  const seconds = (performance.now() - started) / 1000
  await settle()
  const after = process.memoryUsage()
  await raw.kill()
  return reportOf("floor", mib, before, after, seconds)
}

const [mode, size] = process.argv.slice(2)
const mib = Number(size ?? "200")
const report = mode === "floor" ? floor(mib) : Effect.runPromise(ours(mib))
report.then(
  (value) => process.send?.(value, () => process.exit(0)),
  (error) => {
    process.stderr.write(`memory child failed: ${String(error)}\n`)
    process.exit(1)
  }
)
