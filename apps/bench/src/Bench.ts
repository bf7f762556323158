/**
 * `pnpm bench` (`node apps/bench/dist/bin.js`): run the benchmark groups, print the table (stdout), show progress (stderr),
 * write `bench-results.json` at the repository root.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { close } from "./Close.js"
import { concurrency } from "./Concurrency.js"
import { contract } from "./Contract.js"
import { daemon } from "./Daemon.js"
import type { Group, RunOptions } from "./Harness.js"
import { idle } from "./Idle.js"
import { ingest } from "./Ingest.js"
import { lean } from "./Lean.js"
import { live } from "./Live.js"
import { mcpPath } from "./McpPath.js"
import { memory } from "./Memory.js"
import type { Metric } from "./Metric.js"
import { open } from "./Open.js"
import { probe } from "./Probe.js"
import { repl } from "./Repl.js"
import * as Report from "./Report.js"
import { roundTrip } from "./RoundTrip.js"
import { sandbox } from "./Sandbox.js"
import { transcript } from "./Transcript.js"
import { waitForGroup } from "./WaitFor.js"

/** The fleet group, loaded when it runs: it brings the NATS client, which no other command needs. */
const fleet: Group = {
  name: "fleet",
  description: "many machines: RPC and a stream over NATS beside a Unix socket, a machine's death, failover, join",
  run: (options) => Effect.flatMap(Effect.promise(() => import("./Fleet.js")), (module) => module.fleet.run(options))
}

/** Every group, in the order a full run takes them. */
export const groups: ReadonlyArray<Group> = [
  open,
  roundTrip,
  repl,
  probe,
  ingest,
  memory,
  close,
  concurrency,
  idle,
  transcript,
  contract,
  waitForGroup,
  mcpPath,
  sandbox,
  daemon,
  live,
  fleet,
  lean
]

/** The groups named in `--group` (repeatable, or comma-separated); all when none is named. */
export const select = (names: ReadonlyArray<string>): Array<Group> | { readonly unknown: ReadonlyArray<string> } => {
  const wanted = names.flatMap((name) => name.split(",")).map((name) => name.trim()).filter((name) => name !== "")
  if (wanted.length === 0) return [...groups]
  const unknown = wanted.filter((name) => !groups.some((group) => group.name === name))
  if (unknown.length > 0) return { unknown }
  return groups.filter((group) => wanted.includes(group.name))
}

/** Options of `pnpm bench`. */
export interface BenchOptions {
  readonly groups: ReadonlyArray<string>
  readonly quick: boolean
  readonly markdown: boolean
}

const stderrProgress = (started: number) => (text: string) => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`)
}

/** Run the selected groups and report. */
export const run = (options: BenchOptions) =>
  Effect.gen(function*() {
    const selected = select(options.groups)
    if (!Array.isArray(selected)) {
      const unknown = (selected as { readonly unknown: ReadonlyArray<string> }).unknown
      return yield* Effect.fail(
        new Error(`unknown group ${unknown.join(", ")}; groups: ${groups.map((group) => group.name).join(", ")}`)
      )
    }
    const started = performance.now()
    const progress = stderrProgress(started)
    const runOptions: RunOptions = { quick: options.quick, progress }
    const metrics: Array<Metric> = []
    progress(`bench${options.quick ? " --quick" : ""}: ${selected.map((g) => g.name).join(", ")}`)
    for (const group of selected) {
      progress(`${group.name}: ${group.description}`)
      const rows = yield* group.run(runOptions)
      metrics.push(...rows)
      for (const row of rows) {
        progress(`  ${row.name} = ${row.skipped ?? `${Report.formatNumber(row.value)} ${row.unit}`}`)
      }
    }
    const results: Report.Results = {
      command: ["pnpm bench", ...process.argv.slice(2)].join(" "),
      quick: options.quick,
      groups: selected.map((group) => group.name),
      machine: Report.machine(),
      durationMs: Math.round(performance.now() - started),
      summary: Report.summarize(metrics),
      metrics
    }
    const file = Report.write(results)
    const m = results.machine
    yield* Console.log(options.markdown ? Report.markdown(metrics) : Report.table(metrics))
    yield* Console.log(
      `\n${m.cpuModel} × ${m.cores}, ${m.memoryGiB} GiB, node ${m.node}, ${m.kernel}, load ${
        m.loadAverage.join(" ")
      }, ${m.date}`
    )
    yield* Console.log(
      `\ntargets: ${results.summary.met} met, ${results.summary.missed} missed, ${results.summary.unknown} unknown`
    )
    yield* Console.log(Report.targets(metrics))
    yield* Console.log(`\nwrote ${file}`)
  }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
