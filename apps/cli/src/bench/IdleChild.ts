/**
 * A clean process for the lean group's idle-session slope (forked with `--expose-gc`): the RSS after a GC with
 * 10 sessions open, each having run one command and back at its prompt, then with 100; the slope is what one
 * more idle session costs the server. `floor` does the same with raw node-pty bashes. Reported over IPC.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import { RawTerminal } from "./RawPty.js"

/** What the child reports (bytes). */
export interface IdleReport {
  readonly mode: "ours" | "floor"
  readonly counts: readonly [number, number]
  readonly rss: readonly [number, number]
  readonly heap: readonly [number, number]
}

const settle = async () => {
  const gc = (globalThis as { gc?: () => void }).gc
  for (let i = 0; i < 3; i++) {
    gc?.()
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return process.memoryUsage()
}

const counts = [10, 100] as const

/** 25 sessions per owner: an owner holds at most 32 by default. */
const ownerOf = (i: number) => Ids.OwnerId.make(`bench-idle-${Math.floor(i / 25)}`)

const ours = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const rss: Array<number> = []
  const heap: Array<number> = []
  let open = 0
  for (const count of counts) {
    for (; open < count; open++) {
      const opened = yield* service.open(ownerOf(open), {})
      yield* service.send(ownerOf(open), Ids.SessionId.make(opened.sessionId), { text: "true" })
    }
    const usage = yield* Effect.promise(settle)
    rss.push(usage.rss)
    heap.push(usage.heapUsed)
  }
  return { mode: "ours", counts, rss: [rss[0]!, rss[1]!], heap: [heap[0]!, heap[1]!] } satisfies IdleReport
}).pipe(Effect.scoped, Effect.provide(NodeTerminal.layer({})))

const floor = async (): Promise<IdleReport> => {
  const bashes: Array<RawTerminal> = []
  const rss: Array<number> = []
  const heap: Array<number> = []
  for (const count of counts) {
    while (bashes.length < count) {
      const bash = RawTerminal.bash()
      await bash.next()
      await bash.roundTrip("true\r")
      bashes.push(bash)
    }
    const usage = await settle()
    rss.push(usage.rss)
    heap.push(usage.heapUsed)
  }
  await Promise.all(bashes.map((bash) => bash.kill()))
  return { mode: "floor", counts, rss: [rss[0]!, rss[1]!], heap: [heap[0]!, heap[1]!] }
}

const report = process.argv[2] === "floor" ? floor() : Effect.runPromise(ours)
report.then(
  (value) => process.send?.(value, () => process.exit(0)),
  (error) => {
    process.stderr.write(`idle child failed: ${String(error)}\n`)
    process.exit(1)
  }
)
