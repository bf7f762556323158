import { describe, expect, it } from "@effect/vitest"
import { groups, select } from "../src/Bench.js"
import { groupNames } from "../src/BenchCommand.js"
import type { Metric } from "../src/Metric.js"
import { allMet, compare, comparePaired, distribution, skipped } from "../src/Metric.js"
import { RawTerminal } from "../src/RawPty.js"
import * as Report from "../src/Report.js"
import { percentile, ratio, round, summarize } from "../src/Stats.js"

describe("bench statistics", () => {
  it("percentiles interpolate between closest ranks", () => {
    expect(percentile([3, 1, 2], 50)).toBe(2)
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5)
    expect(percentile([1, 2, 3, 4], 0)).toBe(1)
    expect(percentile([1, 2, 3, 4], 100)).toBe(4)
    expect(percentile(Array.from({ length: 101 }, (_, i) => i), 99)).toBe(99)
    expect(percentile([7], 99)).toBe(7)
    expect(percentile([], 50)).toBeNaN()
  })

  it("summaries, ratios and rounding", () => {
    const summary = summarize([5, 1, 4, 2, 3])
    expect(summary).toEqual({ n: 5, p50: 3, p99: 4.96, mean: 3, min: 1, max: 5 })
    expect(ratio(3, 1.5)).toBe(2)
    expect(ratio(3, 0)).toBeNull()
    expect(ratio(null, 2)).toBeNull()
    expect(round(0.0123456)).toBe(0.0123)
    expect(round(123.456)).toBe(123)
    expect(round(1.23456)).toBe(1.23)
  })
})

describe("bench rows", () => {
  const floor: Metric = {
    name: "roundtrip.true.floor",
    group: "roundtrip",
    kind: "baseline",
    unit: "ms",
    ...distribution([0.2, 0.1, 0.3]),
    compared: [],
    notes: []
  }
  const ours: Metric = {
    name: "roundtrip.true",
    group: "roundtrip",
    kind: "ours",
    unit: "ms",
    ...distribution([0.5, 0.4, 0.6]),
    compared: [compare(0.5, floor)],
    target: { text: "median ≤ 1 ms", met: allMet([true]) },
    notes: []
  }
  const missing = skipped(
    { name: "roundtrip.true.pexpect", group: "roundtrip", kind: "baseline", unit: "ms" },
    "not installed"
  )

  it("a distribution's headline is its median, compared with the baseline's", () => {
    expect(ours.value).toBe(0.5)
    expect(ours.n).toBe(3)
    expect(ours.compared).toEqual([{ baseline: "roundtrip.true.floor", value: 0.2, ratio: 2.5 }])
    expect(compare(1, undefined)).toEqual({ baseline: "(not measured)", value: null, ratio: null })
  })

  it("paired: the ratio is the median of the rounds' own ratios, not the ratio of the medians", () => {
    const baseline = [10, 20, 30]
    const ours = [9, 19, 24]
    const row: Metric = { ...floor, name: "x.plain", ...distribution(baseline) }
    // the rounds' ratios are 0.9, 0.95 and 0.8; the medians' ratio would be 19 / 20
    expect(comparePaired(ours, baseline, row)).toEqual({ baseline: "x.plain", value: 20, ratio: 0.9 })
    expect(compare(distribution(ours).value, row).ratio).toBe(0.95)
    expect(comparePaired([], baseline, row).ratio).toBeNull()
  })

  it("targets: any miss is a miss, an unknown check leaves it unknown", () => {
    expect(allMet([true, true])).toBe(true)
    expect(allMet([true, false])).toBe(false)
    expect(allMet([null, false])).toBe(false)
    expect(allMet([true, null])).toBeNull()
    expect(allMet([])).toBeNull()
  })

  it("the results file has the machine, a summary and every metric as JSON", () => {
    const metrics = [ours, floor, missing]
    const results: Report.Results = {
      command: "agent-terminal bench --quick",
      quick: true,
      groups: ["roundtrip"],
      machine: Report.machine(),
      durationMs: 1,
      summary: Report.summarize(metrics),
      metrics
    }
    const parsed = JSON.parse(JSON.stringify(results))
    expect(Object.keys(parsed.machine)).toEqual(
      expect.arrayContaining(["cpuModel", "cores", "node", "kernel", "date"])
    )
    expect(parsed.summary).toEqual({ targets: 1, met: 1, missed: 0, unknown: 0 })
    for (const metric of parsed.metrics) {
      expect(metric).toEqual(expect.objectContaining({ name: expect.any(String), group: "roundtrip", unit: "ms" }))
      expect(Array.isArray(metric.compared)).toBe(true)
    }
    expect(parsed.metrics[2]).toEqual(expect.objectContaining({ value: null, skipped: "not installed" }))
  })

  it("the table shows skipped baselines and verdicts", () => {
    const table = Report.table([ours, floor, missing])
    expect(table.split("\n")[0]).toContain("metric")
    expect(table).toContain("2.5× floor")
    expect(table).toContain("skipped")
    expect(table).toContain("not installed")
    expect(Report.markdown([ours]).split("\n")).toHaveLength(3)
  })

  it("the command's list of groups (what --help shows without loading them) is the groups', in order", () => {
    expect(groupNames).toEqual(groups.map((group) => group.name))
  })

  it("groups are selected by name, repeated or comma-separated", () => {
    expect(select([])).toHaveLength(groups.length)
    const two = select(["roundtrip,repl"])
    expect(Array.isArray(two) && two.map((group) => group.name)).toEqual(["roundtrip", "repl"])
    expect(select(["nope"])).toEqual({ unknown: ["nope"] })
  })
})

describe("bench floors", () => {
  it("the floor with our shell integration is a real bash whose prompt carries the session's markers", async () => {
    const terminal = RawTerminal.bashWithMarkers()
    try {
      await terminal.next()
      // Waited on the prompt-end marker, never on a plain prompt text.
      expect(terminal.defaultMarker.startsWith("\x1b]")).toBe(true)
      expect(terminal.defaultMarker).toContain(";B;")
      expect(await terminal.roundTrip("true\r")).toBeGreaterThan(0)
      // The hook's prompt-start marker reports the status of the command just run.
      const failed = terminal.defaultMarker.replace(";B;", ";D;").replace("\x07", ";1\x07")
      await terminal.roundTrip("false\r", failed, 10_000)
    } finally {
      await terminal.kill()
    }
  })
})
