/**
 * What `waitFor.regex` costs per MiB of output, on the engine it runs on (RE2, `re2js`, through `Matcher`:
 * bounded windows, the DFA asked first) beside JavaScript's own `RegExp` over the same windows, in the same
 * run. Pure CPU in this process: the output is made here (log lines with numbers, ~1 MiB), appended as a
 * terminal's rows are, and the wait's pattern never matches, so every byte is looked at. A third row: the
 * backtracking class that froze the old engine (`(a|a)+$` over lines of `a`), on RE2 only — JavaScript's
 * engine does not finish it. No target: the rows say what the engine costs.
 */
import { Matcher } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import type { RunOptions } from "./Harness.js"
import { size } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { distribution } from "./Metric.js"

const group = "waitfor"
const MiB = 1024 * 1024

/** ~1 MiB of a build's log: 120-character lines with paths and numbers. */
const logLines = (() => {
  const lines: Array<string> = []
  let bytes = 0
  for (let i = 0; bytes < MiB; i++) {
    const line = `[${(i * 0.013).toFixed(3)}] compiling src/module-${i % 97}/file-${i}.ts (${i * 37 % 9973} ms) ` +
      `warnings=${i % 7} cache=${i % 3 === 0 ? "hit" : "miss"} ${"x".repeat(i % 23)}`
    lines.push(line)
    bytes += line.length + 1
  }
  return lines
})()

/** ~1 MiB of 200 `a` and a `!` a line: `(a|a)+$` has no match, and backtracks exponentially in JavaScript. */
const aLines = Array.from({ length: Math.ceil(MiB / 202) }, () => `${"a".repeat(200)}!`)

/** The pattern a wait for a server's banner uses, which this output never shows. */
const banner = "listening on (?:port )?(\\d+) at ([\\d.]+)"

/** Feed the lines as final text, then one last look: ms for the whole. */
const throughMatcher = (source: string, lines: ReadonlyArray<string>): number => {
  const started = performance.now()
  const matcher = new Matcher.Matcher(Matcher.pattern({ regex: source }))
  for (const line of lines) matcher.append(`${line}\n`)
  matcher.check("")
  return performance.now() - started
}

/** The same text through JavaScript's `RegExp`, in the same windows (`WINDOW_CHARS`, `OVERLAP_CHARS`). */
const throughRegExp = (source: string, lines: ReadonlyArray<string>): number => {
  const started = performance.now()
  const regex = new RegExp(source)
  const text = lines.join("\n")
  let carry = ""
  for (let from = 0; from < text.length;) {
    const to = Math.min(text.length, from + Matcher.WINDOW_CHARS - carry.length)
    const window = carry + text.slice(from, to)
    regex.exec(window)
    carry = window.slice(window.length - Matcher.OVERLAP_CHARS)
    from = to
  }
  return performance.now() - started
}

const row = (name: string, kind: Metric["kind"], samples: ReadonlyArray<number>, note: string): Metric => ({
  name,
  group,
  kind,
  unit: "ms/MiB",
  ...distribution(samples),
  compared: [],
  notes: [note]
})

/** The rows: per MiB of output, the median of `n` runs each. */
export const regexCost = (options: RunOptions): Effect.Effect<ReadonlyArray<Metric>> =>
  Effect.sync(() => {
    const n = size(options, 9, 3)
    const perMiB = (lines: ReadonlyArray<string>) => (ms: number) =>
      ms / (lines.reduce((sum, line) => sum + line.length + 1, 0) / MiB)
    // warm both engines (JIT) before anything is measured
    throughMatcher(banner, logLines.slice(0, 2000))
    throughRegExp(banner, logLines.slice(0, 2000))
    const re2: Array<number> = []
    const js: Array<number> = []
    const nested: Array<number> = []
    for (let i = 0; i < n; i++) {
      // interleaved, so a slow minute of the machine falls on both
      re2.push(perMiB(logLines)(throughMatcher(banner, logLines)))
      js.push(perMiB(logLines)(throughRegExp(banner, logLines)))
      nested.push(perMiB(aLines)(throughMatcher("(a|a)+$", aLines)))
    }
    options.progress(`waitfor: regex cost ${n}/${n}`)
    return [
      row(
        "waitfor.regex.re2",
        "ours",
        re2,
        `RE2 (re2js) through Matcher: /${banner}/ over 1 MiB of log lines, no match; × ${n}`
      ),
      row("waitfor.regex.js", "baseline", js, `JavaScript RegExp over the same windows, same pattern and text; × ${n}`),
      row(
        "waitfor.regex.re2.nested",
        "ours",
        nested,
        `RE2 through Matcher: /(a|a)+$/ over 1 MiB of 200 'a' + '!' lines (JavaScript's engine does not finish it); × ${n}`
      )
    ]
  })
