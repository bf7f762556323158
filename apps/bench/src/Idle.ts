/**
 * What idle sessions cost: CPU over an interval with 64 open sessions and no send (our node process via
 * `process.cpuUsage()`, plus the shells and their descendants from `/proc`), against the same interval
 * with the service up and no session.
 */
import { PtyService } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { agent, guard, now, pause, size, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, compare } from "./Metric.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "idle"
const SESSIONS = 64
const TARGET = "≤ 1 % of one core (64 idle sessions: our process + their processes)"

const window = (ms: number, shells: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const self = Proc.selfCpuMs()
    const children = Proc.treeCpuMs(shells)
    const started = now()
    yield* pause(ms)
    const wall = now() - started
    return {
      self: (Proc.selfCpuMs() - self) / wall * 100,
      children: (Proc.treeCpuMs(shells) - children) / wall * 100
    }
  })

const measure = (options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const ms = size(options, 10_000, 3000)
      const service = yield* PtyService.PtyService
      yield* pause(500)
      const empty = yield* window(ms, [])
      options.progress(`idle: no session, ${ms} ms`)
      const opened = yield* Effect.forEach(
        Array.from({ length: SESSIONS }, (_, i) => i),
        (i) => service.open(agent(i), { name: `idle-${i}` }),
        { concurrency: 16 }
      )
      yield* pause(1000)
      const busy = yield* window(ms, opened.map((o) => o.pid))
      options.progress(`idle: ${SESSIONS} sessions, ${ms} ms`)
      yield* Effect.forEach(Array.from({ length: SESSIONS }, (_, i) => agent(i)), service.closeOwner, { discard: true })
      return { empty, busy, ms }
    })
  )

/** The group. */
export const idle: Group = {
  name: group,
  description: "CPU of 64 idle sessions over 10 s (our process + theirs) vs no session",
  run: (options) =>
    guard(
      [{ name: "idle.64-sessions", group, unit: "% of a core", target: TARGET }],
      Effect.map(measure(options), (m): Array<Metric> => {
        const baseline: Metric = {
          name: "idle.no-session",
          group,
          kind: "baseline",
          unit: "% of a core",
          value: Stats.round(m.empty.self),
          compared: [],
          notes: [`our node process over ${m.ms / 1000} s with the service up and no session`]
        }
        const total = Stats.round(m.busy.self + m.busy.children)
        return [
          {
            name: "idle.64-sessions",
            group,
            kind: "ours",
            unit: "% of a core",
            value: total,
            compared: [compare(total, baseline)],
            target: { text: TARGET, met: allMet([total <= 1]) },
            notes: [
              `${SESSIONS} open sessions, no send, over ${m.ms / 1000} s: our process ${
                Stats.round(m.busy.self)
              } %, the shells and their descendants ${Stats.round(m.busy.children)} % (/proc utime+stime)`,
              ...(options.quick ? [`--quick: ${m.ms / 1000} s, not 10`] : [])
            ],
            detail: { selfPercent: Stats.round(m.busy.self), childrenPercent: Stats.round(m.busy.children) }
          },
          baseline
        ]
      })
    )
}
