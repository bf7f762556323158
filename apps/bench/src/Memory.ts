/**
 * RSS growth after a lot of output, each measurement in a fresh forked node (`MemoryChild`) so nothing
 * else of the run is in the number: ours against a raw node-pty read loop, against the bound of the
 * issue (3 × scrollbackMaxBytes + 50 MiB).
 */
import { TerminalConfig } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Forked from "./Forked.js"
import type { Group, RunOptions } from "./Harness.js"
import { guard, size } from "./Harness.js"
import type { MemoryReport } from "./MemoryChild.js"
import type { Metric } from "./Metric.js"
import { compare } from "./Metric.js"
import * as Stats from "./Stats.js"

const group = "memory"
const MiB = 2 ** 20

const child = (mode: "ours" | "floor", mib: number) =>
  Forked.report<MemoryReport>("./MemoryChild.js", [mode, String(mib)], ["--expose-gc"])

const TARGET = "RSS growth after 200 MiB of output ≤ 3 × scrollbackMaxBytes + 50 MiB"

const measure = (options: RunOptions) =>
  Effect.gen(function*() {
    const settings = yield* TerminalConfig.make({})
    const mib = size(options, 200, 50)
    const bound = (3 * settings.scrollbackMaxBytes + 50 * MiB) / MiB
    const floor = yield* child("floor", mib)
    options.progress(`memory: floor done (${Stats.round(floor.seconds)} s)`)
    const ours = yield* child("ours", mib)
    options.progress(`memory: ours done (${Stats.round(ours.seconds)} s)`)
    const growth = (report: MemoryReport) => Stats.round((report.rssAfter - report.rssBefore) / MiB)
    const floorRow: Metric = {
      name: "memory.rss-growth.floor",
      group,
      kind: "baseline",
      unit: "MiB",
      value: growth(floor),
      compared: [],
      notes: [`raw node-pty read loop, ${mib} MiB of output; peak RSS ${Stats.round(floor.maxRss / MiB)} MiB`]
    }
    const value = growth(ours)
    return [
      {
        name: "memory.rss-growth",
        group,
        kind: "ours",
        unit: "MiB",
        value,
        compared: [compare(value, floorRow)],
        target: {
          text: `${TARGET} (= ${Stats.round(bound)} MiB here)`,
          met: options.quick ? null : value <= bound
        },
        notes: [
          `fresh node (--expose-gc), one session, RSS after GC before and after ${mib} MiB of 99-character lines; scrollbackMaxBytes ${
            settings.scrollbackMaxBytes / MiB
          } MiB`,
          `RSS ${Stats.round(ours.rssBefore / MiB)} → ${Stats.round(ours.rssAfter / MiB)} MiB, peak ${
            Stats.round(ours.maxRss / MiB)
          } MiB; heap ${Stats.round(ours.heapBefore / MiB)} → ${Stats.round(ours.heapAfter / MiB)} MiB; ${
            Stats.round(mib / ours.seconds)
          } MiB/s`,
          ...(options.quick ? [`--quick pushes ${mib} MiB, not 200: the target is not judged`] : [])
        ],
        detail: {
          rssBefore: ours.rssBefore,
          rssAfter: ours.rssAfter,
          maxRss: ours.maxRss,
          heapAfter: ours.heapAfter,
          externalAfter: ours.externalAfter,
          settledBy: ours.settledBy,
          boundMiB: Stats.round(bound)
        }
      },
      floorRow
    ] satisfies Array<Metric>
  })

/** The group. */
export const memory: Group = {
  name: group,
  description: "RSS growth after 200 MiB of output (forked child) vs a raw node-pty reader",
  run: (options) => guard([{ name: "memory.rss-growth", group, unit: "MiB", target: TARGET }], measure(options))
}
