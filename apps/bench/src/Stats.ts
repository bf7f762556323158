/**
 * Summaries of timing samples: percentiles by linear interpolation between closest ranks (the method of
 * numpy's default and of most benchmark tools), so p50 of an even-sized sample is the mean of the middle two.
 */

/** The usual summary of a distribution. */
export interface Summary {
  readonly n: number
  readonly p50: number
  readonly p99: number
  readonly mean: number
  readonly min: number
  readonly max: number
}

/** The `p`-th percentile (0–100) of samples already sorted ascending; `NaN` for no samples. */
export const percentileSorted = (sorted: ReadonlyArray<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  if (sorted.length === 1) return sorted[0]!
  const rank = Math.min(Math.max(p, 0), 100) / 100 * (sorted.length - 1)
  const low = Math.floor(rank)
  const high = Math.ceil(rank)
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low)
}

/** The `p`-th percentile (0–100) of samples in any order. */
export const percentile = (samples: ReadonlyArray<number>, p: number): number =>
  percentileSorted([...samples].sort((a, b) => a - b), p)

/** n, p50, p99, mean, min, max of samples in any order (`NaN` fields for no samples). */
export const summarize = (samples: ReadonlyArray<number>): Summary => {
  const sorted = [...samples].sort((a, b) => a - b)
  const sum = sorted.reduce((total, value) => total + value, 0)
  return {
    n: sorted.length,
    p50: percentileSorted(sorted, 50),
    p99: percentileSorted(sorted, 99),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    min: sorted.length === 0 ? Number.NaN : sorted[0]!,
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!
  }
}

/** `value / baseline`, or `null` when either is unknown or the baseline is zero. */
export const ratio = (value: number | null | undefined, baseline: number | null | undefined): number | null =>
  value === null || value === undefined || baseline === null || baseline === undefined || !Number.isFinite(value) ||
    !Number.isFinite(baseline) || baseline === 0
    ? null
    : value / baseline

/** Round to `digits` significant decimals for display and JSON (keeps small numbers readable). */
export const round = (value: number, digits = 3): number => {
  if (!Number.isFinite(value) || value === 0) return value
  const magnitude = Math.floor(Math.log10(Math.abs(value)))
  const decimals = Math.max(0, digits - 1 - magnitude)
  return Number(value.toFixed(Math.min(decimals, 6)))
}
