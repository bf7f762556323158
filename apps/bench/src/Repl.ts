/**
 * A line to a REPL that is already waiting: Python `print(1)`, node `1+1`, gdb `p 1`. Ours through
 * `PtyService.send` (which tier settled it, counted), against the same REPL on a raw node-pty waiting for
 * its prompt in the raw bytes.
 */
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { guard, openShell, promise, size, tally, timed, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, compare, distribution } from "./Metric.js"
import { cleanEnv, RawTerminal } from "./RawPty.js"

const group = "repl"

interface Repl {
  readonly key: string
  readonly start: string
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly line: string
  /** What the REPL prints when it is back at its prompt after the line (raw bytes). */
  readonly prompt: string
  /** The first prompt (raw bytes). */
  readonly firstPrompt: string
  readonly quit: string
  readonly targetMs: number
  readonly target: string
}

const repls: ReadonlyArray<Repl> = [
  {
    key: "python",
    start: "python3 -q",
    file: "python3",
    args: ["-q"],
    line: "print(1)",
    prompt: "\n>>> ",
    firstPrompt: ">>> ",
    quit: "exit()",
    targetMs: 10,
    target: "median ≤ 10 ms, every send settled by stdin_read"
  },
  {
    key: "node",
    start: "node",
    file: "node",
    args: [],
    line: "1+1",
    prompt: "\n\x1b[1G\x1b[0J> ",
    firstPrompt: "> ",
    quit: ".exit",
    targetMs: 15,
    target: "median < 15 ms, every send settled by stdin_read"
  },
  {
    key: "gdb",
    start: "gdb -q -nx",
    file: "gdb",
    args: ["-q", "-nx"],
    line: "p 1",
    prompt: "(gdb) ",
    firstPrompt: "(gdb) ",
    quit: "quit",
    targetMs: 15,
    target: "median < 15 ms, every send settled by stdin_read"
  }
]

const floorOf = (repl: Repl, n: number) =>
  Effect.acquireUseRelease(
    Effect.sync(() => new RawTerminal(repl.file, repl.args, { env: cleanEnv() })),
    (raw) =>
      Effect.gen(function*() {
        yield* promise(() => raw.next(repl.firstPrompt, 15_000))
        const samples: Array<number> = []
        for (let i = 0; i < n + 5; i++) {
          const ms = yield* promise(() => raw.roundTrip(`${repl.line}\r`, repl.prompt))
          if (i >= 5) samples.push(ms)
        }
        return samples
      }),
    (raw) => promise(() => raw.kill())
  )

const oursOf = (repl: Repl, n: number) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const { send } = yield* openShell({ name: `repl-${repl.key}` })
      const started = yield* send(repl.start, { timeoutMs: 20_000 })
      const samples: Array<number> = []
      const reasons: Array<string> = []
      for (let i = 0; i < n + 5; i++) {
        const [result, ms] = yield* timed(send(repl.line))
        if (i < 5) continue
        samples.push(ms)
        reasons.push(result.waitReason)
      }
      yield* send(repl.quit).pipe(Effect.ignore)
      return { samples, reasons: tally(reasons), startedBy: started.waitReason }
    })
  )

const measure = (repl: Repl, options: RunOptions) =>
  Effect.gen(function*() {
    const n = size(options, 100, 30)
    const floor = yield* floorOf(repl, n)
    const ours = yield* oursOf(repl, n)
    options.progress(`repl: ${repl.key} ${n}/${n}`)
    const floorRow: Metric = {
      name: `repl.${repl.key}.floor`,
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(floor),
      compared: [],
      notes: [
        `raw node-pty running ${[repl.file, ...repl.args].join(" ")}: write '${repl.line}\\r', wait for its prompt`
      ]
    }
    const stats = distribution(ours.samples)
    const allStdin = ours.reasons["stdin_read"] === ours.samples.length
    return [
      {
        name: `repl.${repl.key}`,
        group,
        kind: "ours",
        unit: "ms",
        ...stats,
        compared: [compare(stats.value, floorRow)],
        target: {
          text: repl.target,
          met: allMet([
            stats.value !== null &&
            (repl.key === "python" ? stats.value <= repl.targetMs : stats.value < repl.targetMs),
            allStdin
          ])
        },
        notes: [`'${repl.start}' in a shell session (settled by ${ours.startedBy}), then '${repl.line}' × ${n}`],
        detail: { waitReason: ours.reasons }
      },
      floorRow
    ] satisfies Array<Metric>
  })

/** The group. */
export const repl: Group = {
  name: group,
  description: "a line to an already-waiting REPL (python, node, gdb): ours and which tier settled it vs the floor",
  run: (options) =>
    Effect.forEach(
      repls,
      (r) => guard([{ name: `repl.${r.key}`, group, unit: "ms", target: r.target }], measure(r, options)),
      { concurrency: 1 }
    ).pipe(Effect.map((rows) => rows.flat()))
}
