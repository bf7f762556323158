/**
 * Output throughput: a command that prints a lot, through `PtyService` (pty → reader → emulator → line
 * log and capture → prompt) against the raw node-pty floor (pty → a marker search), same command, same
 * run, interleaved.
 */
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { guard, openShell, promise, size, tally, timed, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, compare, distribution } from "./Metric.js"
import { RawTerminal } from "./RawPty.js"
import * as Stats from "./Stats.js"

const group = "ingest"
const MiB = 2 ** 20

interface Shape {
  readonly key: string
  readonly command: (options: RunOptions) => string
  readonly describe: (options: RunOptions) => string
  readonly target: boolean
}

const shapes: ReadonlyArray<Shape> = [
  {
    key: "lines",
    command: (options) => `head -c ${size(options, 100, 20)}M /dev/zero | tr '\\0' a | fold -w 99`,
    describe: (options) => `${size(options, 100, 20)} MiB of 99-character lines`,
    target: true
  },
  {
    key: "seq",
    command: (options) => `seq 1 ${size(options, 2_000_000, 500_000)}`,
    describe: (options) => `seq 1 ${size(options, 2_000_000, 500_000)} (short lines)`,
    // the issue's "ingest ≥ 50 % of the floor" names no line length: short lines are judged too
    target: true
  }
]

const TARGET = "≥ 50 % of the raw node-pty floor (MB/s)"

const measure = (shape: Shape, options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const command = shape.command(options)
      const raw = RawTerminal.bash()
      yield* Effect.addFinalizer(() => promise(() => raw.kill()))
      yield* promise(() => raw.next())
      const { send } = yield* openShell({ name: `ingest-${shape.key}` })
      const rounds = size(options, 3, 1)
      const floor: Array<number> = []
      const ours: Array<number> = []
      const reasons: Array<string> = []
      let bytes = 0
      for (let round = 0; round < rounds; round++) {
        const before = raw.bytes
        const floorMs = yield* promise(() => raw.roundTrip(`${command}\r`, undefined, 600_000))
        bytes = raw.bytes - before
        floor.push(bytes / MiB / (floorMs / 1000))
        const [result, ms] = yield* timed(send(command, { timeoutMs: 600_000 }))
        ours.push(bytes / MiB / (ms / 1000))
        reasons.push(`${result.waitReason}${result.exitCode !== undefined ? ` ${result.exitCode}` : ""}`)
        options.progress(`ingest: ${shape.key} round ${round + 1}/${rounds}`)
      }
      return { floor, ours, reasons: tally(reasons), bytes, command }
    })
  )

const rows = (shape: Shape, options: RunOptions) =>
  Effect.map(measure(shape, options), (m): Array<Metric> => {
    const floor: Metric = {
      name: `ingest.${shape.key}.floor`,
      group,
      kind: "baseline",
      unit: "MiB/s",
      ...distribution(m.floor),
      compared: [],
      notes: ["raw node-pty read loop (marker search only), same command in bash --norc"]
    }
    const ours = distribution(m.ours)
    const comparison = compare(ours.value, floor)
    return [
      {
        name: `ingest.${shape.key}`,
        group,
        kind: "ours",
        unit: "MiB/s",
        ...ours,
        compared: [comparison],
        ...(shape.target
          ? { target: { text: TARGET, met: allMet([comparison.ratio === null ? null : comparison.ratio >= 0.5]) } }
          : {}),
        notes: [
          `${shape.describe(options)}: \`${m.command}\`, ${Stats.round(m.bytes / MiB)} MiB through the pty per run`,
          "wall time from the write until the send settles (emulator parse, line log, capture)"
        ],
        detail: { settledBy: m.reasons }
      },
      floor
    ]
  })

/** The group. */
export const ingest: Group = {
  name: group,
  description: "output throughput through the emulator vs the raw node-pty floor",
  run: (options) =>
    Effect.forEach(
      shapes,
      (shape) =>
        guard(
          [{ name: `ingest.${shape.key}`, group, unit: "MiB/s", ...(shape.target ? { target: TARGET } : {}) }],
          rows(shape, options)
        ),
      { concurrency: 1 }
    ).pipe(Effect.map((all) => all.flat()))
}
