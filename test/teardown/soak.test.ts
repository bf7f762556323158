import { Ids, PtyService } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { containments, owner, sessionCgroupParent, tagged, TeardownTerminal } from "./support.js"

const CYCLES = Number(process.env.TEARDOWN_SOAK_CYCLES ?? 300)
const WARMUP = 10
const tag = randomUUID()

const openFds = () => fs.readdirSync("/proc/self/fd").length
const sessionCgroups = () => {
  const parent = sessionCgroupParent()
  if (parent === undefined || !fs.existsSync(parent)) return 0
  return fs.readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory()).length
}
v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void
const rssMiB = () => process.memoryUsage().rss / 2 ** 20
const heapMiB = () => {
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}

const cycle = (index: number) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, { name: `soak-${index}` })
    const id = Ids.SessionId.make(opened.sessionId)
    const result = yield* service.send(owner, id, { text: `echo soak-${index}` })
    if (result.output !== `soak-${index}`) return yield* Effect.die(`cycle ${index}: ${JSON.stringify(result)}`)
    const closed = yield* service.close(owner, id)
    if (closed.survivors.length > 0) return yield* Effect.die(`cycle ${index}: survivors ${closed.survivors}`)
    return opened.containment
  })

// Every session's processes carry the tag: none may be alive after the cycles. The cgroup path (the default
// here) runs the full count; the sweep, the fallback, a third of it.
for (const containment of containments) {
  const cycles = containment === "cgroup" ? CYCLES : Math.ceil(CYCLES / 3)
  layer(
    TeardownTerminal(containment, {}, { ...process.env, TEARDOWN_TAG: tag }),
    { excludeTestServices: true }
  )(`soak (${containment})`, (it) => {
    it.scoped(
      `${cycles} open → send → close cycles leave no process, cgroup or fd behind; memory stays bounded`,
      () =>
        Effect.gen(function*() {
          for (let i = 0; i < WARMUP; i++) yield* cycle(i)
          const before = { fds: openFds(), cgroups: sessionCgroups(), heap: heapMiB(), rss: rssMiB(), at: Date.now() }
          const kinds = new Set<string>()
          const heaps: Array<string> = []
          for (let i = WARMUP; i < WARMUP + cycles; i++) {
            kinds.add(yield* cycle(i))
            if ((i - WARMUP + 1) % 50 === 0) heaps.push(heapMiB().toFixed(1))
          }
          const after = { fds: openFds(), cgroups: sessionCgroups(), heap: heapMiB(), rss: rssMiB(), at: Date.now() }
          const left = tagged(tag)
          const perCycle = (after.at - before.at) / cycles
          process.stderr.write(
            `soak: ${cycles} cycles (${[...kinds].join(", ")}) in ${after.at - before.at} ms (${
              perCycle.toFixed(1)
            } ms/cycle); fds ${before.fds} → ${after.fds}; session cgroups ${before.cgroups} → ${after.cgroups}; ` +
              `heap ${before.heap.toFixed(1)} → ${after.heap.toFixed(1)} MiB (every 50: ${heaps.join(", ")}); ` +
              `rss ${before.rss.toFixed(1)} → ${after.rss.toFixed(1)} MiB; processes left ${left.length}\n`
          )
          expect(left).toEqual([])
          expect(after.fds).toBeLessThanOrEqual(before.fds)
          expect(after.cgroups).toBe(0)
          expect([...kinds]).toEqual([containment])
          // Generous bounds (700 cycles measured: the heap after GC levels off near +2 MiB, RSS near +16 MiB):
          // what they catch is growth per session — a scope, an emulator or a tracked tree kept after close.
          expect(after.heap - before.heap).toBeLessThan(16)
          expect(after.rss - before.rss).toBeLessThan(150)
        }),
      { timeout: 180_000 }
    )
  })
}
