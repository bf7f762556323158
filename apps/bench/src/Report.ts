/**
 * The run's results: the machine they were measured on, the table printed to stdout, and
 * `bench-results.json` at the repository root.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Metric } from "./Metric.js"
import * as Stats from "./Stats.js"

/** Where the numbers come from. */
export interface Machine {
  readonly cpuModel: string
  readonly cores: number
  readonly memoryGiB: number
  readonly node: string
  readonly kernel: string
  readonly platform: string
  readonly loadAverage: ReadonlyArray<number>
  readonly date: string
}

/** Everything written to `bench-results.json`. */
export interface Results {
  readonly command: string
  readonly quick: boolean
  readonly groups: ReadonlyArray<string>
  readonly machine: Machine
  readonly durationMs: number
  readonly summary: {
    readonly targets: number
    readonly met: number
    readonly missed: number
    readonly unknown: number
  }
  readonly metrics: ReadonlyArray<Metric>
}

/** Facts about this machine, now. */
export const machine = (): Machine => {
  const cpus = os.cpus()
  return {
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    memoryGiB: Stats.round(os.totalmem() / 2 ** 30),
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    platform: `${process.platform}-${process.arch}`,
    loadAverage: os.loadavg().map((load) => Stats.round(load, 2)),
    date: new Date().toISOString()
  }
}

/** How the targets fared. */
export const summarize = (metrics: ReadonlyArray<Metric>): Results["summary"] => {
  const targets = metrics.filter((metric) => metric.target !== undefined)
  return {
    targets: targets.length,
    met: targets.filter((metric) => metric.target?.met === true).length,
    missed: targets.filter((metric) => metric.target?.met === false).length,
    unknown: targets.filter((metric) => metric.target?.met === null).length
  }
}

/** The repository root (where `pnpm-workspace.yaml` is), looked up from this module, else the cwd. */
export const repositoryRoot = (): string => {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (true) {
    if (fs.existsSync(path.join(dir, "pnpm-workspace.yaml"))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return process.cwd()
    dir = parent
  }
}

/** Write the results as JSON; returns the file's path. */
export const write = (results: Results, file = path.join(repositoryRoot(), "bench-results.json")): string => {
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  return file
}

/** A number for the table: three significant digits, `—` when unknown. */
export const formatNumber = (value: number | null | undefined): string =>
  value === null || value === undefined || Number.isNaN(value) ? "—" : String(Stats.round(value, 3))

const shortName = (baseline: string, metric: string) => {
  const parts = metric.split(".")
  const other = baseline.split(".")
  let common = 0
  while (common < parts.length && common < other.length && parts[common] === other[common]) common++
  return other.slice(common).join(".") || baseline
}

const comparedText = (metric: Metric) =>
  metric.compared
    .map((c) => `${c.ratio === null ? "—" : `${formatNumber(c.ratio)}×`} ${shortName(c.baseline, metric.name)}`)
    .join(", ")

const metText = (metric: Metric) =>
  metric.target === undefined ? "" : metric.target.met === true ? "yes" : metric.target.met === false ? "NO" : "?"

/** The results as rows of cells (header first). */
export const rows = (metrics: ReadonlyArray<Metric>): Array<Array<string>> => [
  ["group", "metric", "value", "unit", "p50", "p99", "n", "vs (ratio)", "target met"],
  ...metrics.map((metric) =>
    metric.skipped !== undefined
      ? [metric.group, metric.name, "skipped", metric.unit, "", "", "", metric.skipped, metText(metric)]
      : [
        metric.group,
        metric.name,
        formatNumber(metric.value),
        metric.unit,
        metric.p50 === undefined ? "" : formatNumber(metric.p50),
        metric.p99 === undefined ? "" : formatNumber(metric.p99),
        metric.n === undefined ? "" : String(metric.n),
        comparedText(metric),
        metText(metric)
      ]
  )
]

/** A plain-text table with aligned columns. */
export const table = (metrics: ReadonlyArray<Metric>): string => {
  const cells = rows(metrics)
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  const line = (row: ReadonlyArray<string>) =>
    row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()
  return [line(cells[0]!), widths.map((width) => "-".repeat(width)).join("  "), ...cells.slice(1).map(line)].join("\n")
}

/** The same table in Markdown (for docs/performance.md). */
export const markdown = (metrics: ReadonlyArray<Metric>): string => {
  const cells = rows(metrics)
  const escape = (cell: string) => cell.replaceAll("|", "\\|")
  return [
    `| ${cells[0]!.join(" | ")} |`,
    `|${cells[0]!.map(() => "---").join("|")}|`,
    ...cells.slice(1).map((row) => `| ${row.map(escape).join(" | ")} |`)
  ].join("\n")
}

/** The targets with their verdicts, one line each. */
export const targets = (metrics: ReadonlyArray<Metric>): string =>
  metrics.filter((metric) => metric.target !== undefined).map((metric) =>
    `${metText(metric).padEnd(3)}  ${metric.name}: ${metric.target!.text} (measured ${
      formatNumber(metric.value)
    } ${metric.unit}${metric.p99 !== undefined ? `, p99 ${formatNumber(metric.p99)}` : ""})`
  ).join("\n")
