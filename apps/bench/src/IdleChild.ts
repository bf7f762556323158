/**
 * A clean process for the lean group's idle-session slope (forked with `--expose-gc`): the RSS after a GC with
 * 10 sessions open, each having run one command and then quiet (long enough for its emulator to let its
 * xterm instance go: `Emulator.QUIET_MS`, twice), then with 100; the slope is what one more idle session costs
 * the server. Both sides first open, use and close `WARMUP` sessions, as a server that has run for a while: in
 * a young process V8 grows its heap for the first sessions' garbage (32 → 51 MiB here), which no session holds.
 * `floor` does the same with raw node-pty bashes. Reported over IPC.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { Emulator } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import { RawTerminal } from "./RawPty.js"

/** What the child reports (bytes). */
export interface IdleReport {
  readonly mode: "ours" | "floor"
  readonly counts: readonly [number, number]
  readonly rss: readonly [number, number]
  readonly heap: readonly [number, number]
}

const settle = async (quietMs = 0) => {
  await new Promise((resolve) => setTimeout(resolve, quietMs))
  const gc = (globalThis as { gc?: () => void }).gc
  for (let i = 0; i < 3; i++) {
    gc?.()
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const usage = process.memoryUsage()
  return usage
}

const counts = [10, 100] as const

/** Sessions opened, used and closed before the first measure (both sides). */
const WARMUP = 40

/** 25 sessions per owner: an owner holds at most 32 by default. */
const ownerOf = (i: number) => Ids.OwnerId.make(`bench-idle-${Math.floor(i / 25)}`)

const ours = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  // a server that has run for a while: sessions opened, used and closed first
  for (let i = 0; i < WARMUP; i++) {
    const opened = yield* service.open(ownerOf(0), {})
    const id = Ids.SessionId.make(opened.sessionId)
    yield* service.send(ownerOf(0), id, { text: "true" })
    yield* service.close(ownerOf(0), id)
  }
  const rss: Array<number> = []
  const heap: Array<number> = []
  let open = 0
  for (const count of counts) {
    for (; open < count; open++) {
      const opened = yield* service.open(ownerOf(open), {})
      yield* service.send(ownerOf(open), Ids.SessionId.make(opened.sessionId), { text: "true" })
    }
    const usage = yield* Effect.promise(() => settle(2 * Emulator.QUIET_MS + 500))
    rss.push(usage.rss)
    heap.push(usage.heapUsed)
  }
  return { mode: "ours", counts, rss: [rss[0]!, rss[1]!], heap: [heap[0]!, heap[1]!] } satisfies IdleReport
}).pipe(Effect.scoped, Effect.provide(NodeTerminal.layer({})))

const floor = async (): Promise<IdleReport> => {
  for (let i = 0; i < WARMUP; i++) {
    const bash = RawTerminal.bash()
    await bash.next()
    await bash.roundTrip("true\r")
    await bash.kill()
  }
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
    const usage = await settle(2 * Emulator.QUIET_MS + 500)
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
