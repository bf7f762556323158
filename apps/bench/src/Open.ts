/**
 * Opening a session until its first prompt is recognized (and closing an idle one), against spawning a raw
 * bash on node-pty until its marker prompt shows.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { guard, owner, promise, size, timed, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { compare, distribution } from "./Metric.js"
import { RawTerminal } from "./RawPty.js"

const group = "open"

const measure = (options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const n = size(options, 30, 10)
      const floor: Array<number> = []
      const opens: Array<number> = []
      const closes: Array<number> = []
      const containment = new Set<string>()
      for (let i = 0; i < n + 2; i++) {
        const raw = yield* promise(async () => {
          const started = performance.now()
          const terminal = RawTerminal.bash()
          await terminal.next()
          const ms = performance.now() - started
          await terminal.kill()
          return ms
        })
        const [opened, openMs] = yield* timed(service.open(owner, { name: `open-${i}` }))
        containment.add(opened.containment)
        const [, closeMs] = yield* timed(service.close(owner, Ids.SessionId.make(opened.sessionId)))
        if (i < 2) continue
        floor.push(raw)
        opens.push(openMs)
        closes.push(closeMs)
      }
      options.progress(`open: ${n}/${n}`)
      return { floor, opens, closes, containment: [...containment] }
    })
  )

/** The group. */
export const open: Group = {
  name: group,
  description: "open a shell session until its prompt, and close it idle, vs a raw bash on node-pty",
  run: (options) =>
    guard(
      [{ name: "open.shell", group, unit: "ms" }],
      Effect.map(measure(options), (m): Array<Metric> => {
        const floor: Metric = {
          name: "open.shell.floor",
          group,
          kind: "baseline",
          unit: "ms",
          ...distribution(m.floor),
          compared: [],
          notes: ["node-pty spawn of bash --norc --noprofile (PS1='#P#') until the marker shows"]
        }
        const opens = distribution(m.opens)
        return [
          {
            name: "open.shell",
            group,
            kind: "ours",
            unit: "ms",
            ...opens,
            compared: [compare(opens.value, floor)],
            notes: [`PtyService.open until the first prompt is recognized; containment ${m.containment.join(", ")}`]
          },
          floor,
          {
            name: "open.close-idle",
            group,
            kind: "ours",
            unit: "ms",
            ...distribution(m.closes),
            compared: [],
            notes: ["PtyService.close of a session that runs nothing but its shell"]
          }
        ]
      })
    )
}
