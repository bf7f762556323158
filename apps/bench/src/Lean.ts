/**
 * `--group lean`: what every agent pays for the server — its start, what it holds, what a flood and a send
 * cost it — each row a ratio to a floor measured in the same run (docs/performance.md, "Lean").
 */
import * as Effect from "effect/Effect"
import { footprint } from "./Footprint.js"
import type { Group, RunOptions } from "./Harness.js"
import { guard } from "./Harness.js"
import { flood } from "./LeanFlood.js"
import { memory } from "./LeanMemory.js"
import { send } from "./LeanSend.js"
import { coldStart, help } from "./LeanStart.js"
import type { Metric } from "./Metric.js"

const group = "lean"

const parts: ReadonlyArray<
  readonly [
    ReadonlyArray<{ readonly name: string; readonly unit: string; readonly target?: string }>,
    (
      options: RunOptions
    ) => Effect.Effect<ReadonlyArray<Metric>, unknown>
  ]
> = [
  [[{ name: "lean.cold-start", unit: "ms", target: "≤ 1.5 × the SDK's no-op server" }], coldStart],
  [[{ name: "lean.help", unit: "ms", target: "≤ 3 × node -e 0" }], help],
  [[{ name: "lean.rss.server", unit: "MiB", target: "≤ 1.5 × a bare Node holding node-pty" }], memory],
  [[{ name: "lean.flood.seq", unit: "ms CPU/MiB", target: "≤ 1.5 × tmux" }], flood],
  [[{ name: "lean.send-cpu", unit: "µs CPU/send", target: "≤ 4 × bare node-pty" }], send],
  [[{ name: "lean.footprint", unit: "MiB" }], footprint]
]

/** The group. */
export const lean: Group = {
  name: group,
  description: "start, memory, flood and send cost of the server, each against its floor in the same run",
  run: (options) =>
    Effect.map(
      Effect.forEach(
        parts,
        ([rows, part]) => guard(rows.map((row) => ({ ...row, group })), part(options)),
        { concurrency: 1 }
      ),
      (all) => all.flat()
    )
}
