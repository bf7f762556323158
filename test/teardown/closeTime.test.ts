import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { commOf, containments, killAll, openTagged, TeardownTerminal, waitUntil } from "./support.js"

/**
 * Closing a session whose tree has 100 processes: 40 ignore TERM (20 `sh` + their `sleep`, which inherits
 * the ignored TERM), 59 plain `sleep`s, one `setsid` double-forked daemon; none handles TERM. The numbers
 * are printed, not asserted (timing belongs to benchmarks); what is asserted is that nothing survives
 * — the daemon too: the cgroup holds it, and the sweep finds it by the tree marker in its environment.
 */
const RUNS = Number(process.env.TEARDOWN_CLOSE_RUNS ?? 3)

const TREE = [
  "for i in $(seq 20); do sh -c 'trap \"\" TERM; sleep 1000' & done",
  "for i in $(seq 59); do sleep 1000 & done",
  "setsid sh -c '(sleep 1000 &)'"
]

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

for (const containment of containments) {
  layer(TeardownTerminal(containment), { excludeTestServices: true })(`close time (${containment})`, (it) => {
    it.scoped(`closes a 100-process tree, ${RUNS} times; survivors 0`, () =>
      Effect.gen(function*() {
        const times: Array<number> = []
        const escaped: Array<number> = []
        for (let run = 0; run < RUNS; run++) {
          const result = yield* Effect.scoped(Effect.gen(function*() {
            const { close, send, tagged } = yield* openTagged()
            for (const line of TREE) yield* send(line)
            const sleeps = () => tagged().filter((pid) => commOf(pid) === "sleep").length
            yield* waitUntil(() => sleeps() === 80 && tagged().length === 100)
            const tree = tagged()
            expect(tree.length).toBe(100)
            expect(tree.filter((pid) => commOf(pid) === "sleep").length).toBe(80)
            const started = performance.now()
            const closed = yield* close
            const elapsed = performance.now() - started
            const left = tagged()
            killAll(left)
            return { elapsed, survivors: closed.survivors, left }
          }))
          expect(result.survivors).toEqual([])
          // The daemon left the tree before any scan; the sweep finds it by the tree marker it inherited.
          expect(result.left).toEqual([])
          times.push(result.elapsed)
          escaped.push(result.left.length)
        }
        process.stderr.write(
          `close of a 100-process tree (${containment}): median ${median(times).toFixed(1)} ms over ${RUNS} ` +
            `[${times.map((t) => t.toFixed(1)).join(", ")}]; survivors 0; escaped ${escaped.join(", ")}\n`
        )
      }), { timeout: 120_000 })
  })
}
