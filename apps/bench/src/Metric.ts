/**
 * One measured number and what it is compared with: the shape of every row of the table and of every
 * entry of `bench-results.json`.
 */
import * as Stats from "./Stats.js"

/** A comparison of a metric with a baseline measured in the same run. */
export interface Comparison {
  /** The baseline metric's name (a row of the same results). */
  readonly baseline: string
  /** The baseline's value (same unit), `null` when it was skipped or failed. */
  readonly value: number | null
  /** metric / baseline; `null` when the baseline is missing. */
  readonly ratio: number | null
}

/** A target from the issue, and whether this run met it (`null`: not measurable here). */
export interface Target {
  readonly text: string
  readonly met: boolean | null
}

/** One row. `value` is the headline number (the median for distributions). */
export interface Metric {
  readonly name: string
  readonly group: string
  /** `ours` is agent-terminal; `baseline` is a floor or a peer measured for comparison. */
  readonly kind: "ours" | "baseline"
  readonly unit: string
  readonly value: number | null
  readonly p50?: number | undefined
  readonly p99?: number | undefined
  readonly mean?: number | undefined
  readonly max?: number | undefined
  readonly n?: number | undefined
  readonly compared: ReadonlyArray<Comparison>
  readonly target?: Target | undefined
  /** Why there is no value: a baseline not installed, a capability missing, an error. */
  readonly skipped?: string | undefined
  readonly notes: ReadonlyArray<string>
  /** Extra facts (e.g. which readiness tier settled each send). */
  readonly detail?: Readonly<Record<string, unknown>> | undefined
}

/** Fields for a distribution of samples: headline = median. */
export const distribution = (samples: ReadonlyArray<number>) => {
  const summary = Stats.summarize(samples)
  return {
    value: samples.length === 0 ? null : Stats.round(summary.p50),
    p50: Stats.round(summary.p50),
    p99: Stats.round(summary.p99),
    mean: Stats.round(summary.mean),
    max: Stats.round(summary.max),
    n: summary.n
  }
}

/** Compare `value` with a baseline row (by its headline value). */
export const compare = (value: number | null | undefined, baseline: Metric | undefined): Comparison => ({
  baseline: baseline?.name ?? "(not measured)",
  value: baseline?.value ?? null,
  ratio: baseline?.value === undefined ? null : roundRatio(Stats.ratio(value, baseline.value))
})

/**
 * Compare samples with a baseline's, taken in pairs (sample i of each back to back, in the same round): the
 * ratio is the median of the pairs' ratios, so a drift of the machine's speed between rounds (on a shared
 * machine the baseline alone moves by ±15 % from one round to the next) cancels within each pair.
 */
export const comparePaired = (
  samples: ReadonlyArray<number>,
  baselineSamples: ReadonlyArray<number>,
  baseline: Metric
): Comparison => {
  const ratios = samples.flatMap((sample, i) => {
    const paired = Stats.ratio(sample, baselineSamples[i])
    return paired === null ? [] : [paired]
  })
  return {
    baseline: baseline.name,
    value: baseline.value ?? null,
    ratio: ratios.length === 0 ? null : roundRatio(Stats.percentile(ratios, 50))
  }
}

const roundRatio = (ratio: number | null) => ratio === null ? null : Stats.round(ratio, 3)

/** A row with no value: why it was skipped. */
export const skipped = (
  fields: { readonly name: string; readonly group: string; readonly kind: Metric["kind"]; readonly unit: string },
  reason: string,
  target?: string
): Metric => ({
  ...fields,
  value: null,
  compared: [],
  skipped: reason,
  notes: [],
  ...(target !== undefined ? { target: { text: target, met: null } } : {})
})

/** Every check true → met; any false → not met; no checks (nothing measurable) → null. */
export const allMet = (checks: ReadonlyArray<boolean | null>): boolean | null => {
  if (checks.length === 0 || checks.some((check) => check === null)) {
    return checks.some((check) => check === false) ? false : null
  }
  return checks.every(Boolean)
}
