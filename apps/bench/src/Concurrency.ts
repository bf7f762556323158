/**
 * 64 sessions at once, each sending `true` in a loop: latency under load and errors. Against 64 raw
 * node-pty loops doing the same at once (the floor under the same load on this machine).
 */
import { Ids, PtyService } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { agent, guard, now, promise, size, tally, timed, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, compare, distribution } from "./Metric.js"
import { RawTerminal } from "./RawPty.js"

const group = "concurrency"
const SESSIONS = 64
/**
 * The raw node-pty floor itself misses an absolute 25 ms p99 on two cores (docs/performance.md): the target
 * is relative to the floors' own p99, measured in the same run — the larger of the plain bash's and the bash
 * with our shell integration's (the integration alone costs the shell more than the library does).
 */
const P99_OVER_FLOOR = 1.25
const TARGET =
  `p99 ≤ ${P99_OVER_FLOOR} × the larger of the two floors' p99 (plain bash, bash with our markers) in the same run, ` +
  "0 errors (64 sessions × 100 sends)"
/**
 * Rounds of one send per session before measuring, for both sides: the steady state of a long-running
 * process, not its start. A server's JIT is warm after its first few thousand sends: after 20 rounds
 * (1280 sends) the first 6400 measured sends still ran ~20 % slower than the next 6400; after 100 rounds
 * (6400 sends) they run as fast (docs/performance.md).
 */
const WARMUP_ROUNDS = 100

const floor = (sends: number, make: () => RawTerminal) =>
  Effect.acquireUseRelease(
    Effect.sync(() => Array.from({ length: SESSIONS }, make)),
    (terminals) =>
      Effect.gen(function*() {
        yield* promise(() => Promise.all(terminals.map((t) => t.next())))
        yield* promise(() =>
          Promise.all(terminals.map(async (t) => {
            for (let i = 0; i < WARMUP_ROUNDS; i++) await t.roundTrip("true\r", undefined, 10_000)
          }))
        )
        const samples: Array<number> = []
        let errors = 0
        yield* promise(() =>
          Promise.all(terminals.map(async (t) => {
            for (let i = 0; i < sends; i++) {
              try {
                samples.push(await t.roundTrip("true\r", undefined, 10_000))
              } catch {
                errors++
              }
            }
          }))
        )
        return { samples, errors }
      }),
    (terminals) => promise(() => Promise.all(terminals.map((t) => t.kill())))
  )

const ours = (sends: number, options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      // one owner (agent) per session
      const [sessions, openMs] = yield* timed(Effect.forEach(
        Array.from({ length: SESSIONS }, (_, i) => i),
        (i) =>
          Effect.acquireRelease(
            service.open(agent(i), { name: `concurrent-${i}` }).pipe(
              Effect.map((opened) => ({ owner: agent(i), id: Ids.SessionId.make(opened.sessionId) }))
            ),
            ({ id, owner }) => service.close(owner, id).pipe(Effect.ignore)
          ),
        { concurrency: 16 }
      ))
      options.progress(`concurrency: ${SESSIONS} sessions open in ${Math.round(openMs)} ms`)
      for (let round = 0; round < WARMUP_ROUNDS; round++) {
        yield* Effect.forEach(sessions, ({ id, owner }) => service.send(owner, id, { text: "true" }), {
          concurrency: "unbounded"
        })
      }
      const samples: Array<number> = []
      const reasons: Array<string> = []
      let errors = 0
      const errorTags: Array<string> = []
      const started = now()
      yield* Effect.forEach(sessions, ({ id, owner }) =>
        Effect.gen(function*() {
          for (let i = 0; i < sends; i++) {
            const outcome = yield* timed(service.send(owner, id, { text: "true", timeoutMs: 10_000 })).pipe(
              Effect.either
            )
            if (outcome._tag === "Left") {
              errors++
              errorTags.push(outcome.left._tag)
              continue
            }
            const [result, ms] = outcome.right
            samples.push(ms)
            reasons.push(result.waitReason)
            if (result.waitReason !== "prompt" || result.exitCode !== 0) {
              errors++
              errorTags.push(`${result.waitReason}/${result.exitCode}`)
            }
          }
        }), { concurrency: "unbounded", discard: true })
      return { samples, errors, reasons: tally(reasons), errorTags: tally(errorTags), openMs, wallMs: now() - started }
    })
  )

const measure = (options: RunOptions) =>
  Effect.gen(function*() {
    const sends = size(options, 100, 25)
    const raw = yield* floor(sends, () => RawTerminal.bash())
    options.progress(`concurrency: floor ${SESSIONS} × ${sends}`)
    const marked = yield* floor(sends, () => RawTerminal.bashWithMarkers())
    options.progress(`concurrency: floor with our shell integration ${SESSIONS} × ${sends}`)
    const m = yield* ours(sends, options)
    options.progress(`concurrency: ours ${SESSIONS} × ${sends}`)
    const stats = distribution(m.samples)
    const baseline = (name: string, run: { readonly samples: Array<number>; readonly errors: number }, what: string) =>
      ({
        name,
        group,
        kind: "baseline",
        unit: "ms",
        ...distribution(run.samples),
        compared: [],
        notes: [`${SESSIONS} raw node-pty loops at once × ${sends} 'true' round trips, ${what}; errors ${run.errors}`]
      }) satisfies Metric
    const floorRow = baseline("concurrency.64x.floor", raw, "each over a plain bash (`PS1='#P#'`)")
    const markedRow = baseline(
      "concurrency.64x.floor-markers",
      marked,
      "each over bash with our shell integration (the prompt hook and its markers, launched as a session launches it), waiting for the prompt-end marker in the raw bytes: the shell's and the kernel's share of a send, none of the library's"
    )
    const againstP99 = (row: Metric) => ({
      ...compare(stats.p99, { ...row, value: row.p99 ?? null }),
      baseline: `${row.name} p99`
    })
    return [
      {
        name: "concurrency.64x",
        group,
        kind: "ours",
        unit: "ms",
        ...stats,
        compared: [
          compare(stats.value, floorRow),
          againstP99(floorRow),
          compare(stats.value, markedRow),
          againstP99(markedRow)
        ],
        target: {
          text: TARGET,
          met: allMet([
            stats.p99 === undefined || floorRow.p99 === undefined || markedRow.p99 === undefined ||
              raw.errors > 0 || marked.errors > 0
              ? null
              : stats.p99 <= P99_OVER_FLOOR * Math.max(floorRow.p99, markedRow.p99),
            m.errors === 0
          ])
        },
        notes: [
          `${SESSIONS} sessions × ${sends} sends of 'true' at once; errors ${m.errors}; ${
            Math.round(m.samples.length / (m.wallMs / 1000))
          } sends/s overall; opening the ${SESSIONS} sessions took ${
            Math.round(m.openMs)
          } ms; after ${WARMUP_ROUNDS} rounds of warm-up (both sides)`,
          ...(sends < 100 ? [`--quick: ${sends} sends per session, not 100`] : [])
        ],
        detail: { waitReason: m.reasons, errors: m.errorTags }
      },
      floorRow,
      markedRow
    ] satisfies Array<Metric>
  })

/** The group. */
export const concurrency: Group = {
  name: group,
  description: "64 concurrent sessions × 100 sends (p50/p99, errors) vs 64 raw loops",
  run: (options) => guard([{ name: "concurrency.64x", group, unit: "ms", target: TARGET }], measure(options))
}
