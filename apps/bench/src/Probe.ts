/**
 * What the `/proc` probe costs: one probe of a waiting REPL (DESIGN §5 says ≈ 0.1–0.5 ms), and the CPU
 * our process burns while a send waits on a command that runs 2 s (the stdin tier polls every
 * `pollIntervalMs`) against the same 2 s with the session idle (no send: nothing may poll).
 */
import { ProcessInspector } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { guard, now, openShell, pause, size, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { compare, distribution } from "./Metric.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "probe"
const SEND_MS = 2000

const cpuPercent = (cpuMs: number, wallMs: number) => Stats.round(cpuMs / wallMs * 100, 3)

const measure = (options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const inspector = yield* ProcessInspector.ProcessInspector
      const { opened, send } = yield* openShell({ name: "probe" })
      const terminal = { shellPid: opened.pid, ttyPath: Proc.ttyOf(opened.pid) }

      yield* send("python3 -q", { timeoutMs: 20_000 })
      const n = size(options, 2000, 300)
      const probes: Array<number> = []
      const tags: Array<string> = []
      for (let i = 0; i < n + 50; i++) {
        const started = now()
        const probe = yield* inspector.probe(terminal)
        if (i >= 50) {
          probes.push(now() - started)
          tags.push(probe._tag === "Snapshot" ? `waiting=${probe.waitingOnTerminal}` : `miss: ${probe.reason}`)
        }
      }
      yield* send("exit()")
      options.progress(`probe: ${n} probes`)

      const rounds = size(options, 3, 1)
      const idle: Array<number> = []
      const active: Array<number> = []
      const reasons: Array<string> = []
      for (let round = 0; round < rounds; round++) {
        let cpu = Proc.selfCpuMs()
        let wall = now()
        yield* pause(SEND_MS)
        idle.push(cpuPercent(Proc.selfCpuMs() - cpu, now() - wall))
        cpu = Proc.selfCpuMs()
        wall = now()
        const result = yield* send(`sleep ${SEND_MS / 1000}`, { timeoutMs: 20_000 })
        active.push(cpuPercent(Proc.selfCpuMs() - cpu, now() - wall))
        reasons.push(result.waitReason)
        options.progress(`probe: cpu round ${round + 1}/${rounds}`)
      }
      return { probes, tags, idle, active, reasons }
    })
  )

/** The group. */
export const probe: Group = {
  name: group,
  description: "cost of the /proc probe: one probe, and our CPU during a 2 s send vs idle",
  run: (options) =>
    guard(
      [{ name: "probe.call", group, unit: "ms" }, { name: "probe.cpu.send", group, unit: "% of a core" }],
      Effect.map(measure(options), (m): Array<Metric> => {
        const idle: Metric = {
          name: "probe.cpu.idle",
          group,
          kind: "baseline",
          unit: "% of a core",
          ...distribution(m.idle),
          compared: [],
          notes: [`our process over ${SEND_MS} ms with one idle session and no send`]
        }
        const active = distribution(m.active)
        const tags = [...new Set(m.tags)]
        return [
          {
            name: "probe.call",
            group,
            kind: "ours",
            unit: "ms",
            ...distribution(m.probes),
            compared: [],
            notes: [
              "ProcessInspector.probe of a python3 REPL blocked reading the terminal (LinuxInspector, /proc)",
              `probe results: ${tags.join("; ")}`
            ]
          },
          {
            name: "probe.cpu.send",
            group,
            kind: "ours",
            unit: "% of a core",
            ...active,
            compared: [compare(active.value, idle)],
            notes: [
              `our process while send('sleep ${
                SEND_MS / 1000
              }') waits (prompt tier waiting, stdin tier probing every pollIntervalMs after exactProbeAfterMs; defaults 50/150 ms)`,
              `settled by: ${[...new Set(m.reasons)].join(", ")}`
            ]
          },
          idle
        ]
      })
    )
}
