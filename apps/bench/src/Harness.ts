/**
 * What every benchmark group shares: the run's options and progress line, the service opened the way a
 * user opens it (`NodeTerminal.layer(config)`), a clock, and a guard that turns a failure into a row that
 * says so instead of ending the run.
 */
import { Ids, type ProcessInspector, PtyService, type TerminalConfig } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Metric } from "./Metric.js"
import * as MetricRow from "./Metric.js"

/** The options of one run. */
export interface RunOptions {
  /** Fewer iterations and smaller payloads; every metric still runs. */
  readonly quick: boolean
  /** A line of progress (stderr). */
  readonly progress: (text: string) => void
}

/** A group of metrics run together (`--group <name>`). */
export interface Group {
  readonly name: string
  readonly description: string
  readonly run: (options: RunOptions) => Effect.Effect<ReadonlyArray<Metric>>
}

/** The owner of every bench session. */
export const owner = Ids.OwnerId.make("bench")

/**
 * The owner of the `i`-th of many sessions at once: one agent each, as many agents at once would run them
 * (an owner holds at most `maxTerminalsPerOwner` terminals, 32 by default).
 */
export const agent = (i: number) => Ids.OwnerId.make(`bench-agent-${i}`)

/** `full` or `quick` by the run's mode. */
export const size = (options: RunOptions, full: number, quick: number): number => options.quick ? quick : full

/** Milliseconds since an arbitrary origin, sub-millisecond. */
export const now = (): number => performance.now()

/** Run `effect` and return its result with the wall time it took in ms. */
export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, number], E, R> =>
  Effect.suspend(() => {
    const started = now()
    return Effect.map(effect, (value) => [value, now() - started] as const)
  })

/** Run `program` against the real service on this host, wired as a user wires it. */
export const withTerminal = <A, E>(
  config: TerminalConfig.TerminalConfigInput,
  program: Effect.Effect<A, E, PtyService.PtyService | ProcessInspector.ProcessInspector | Scope.Scope>,
  options: { readonly containment?: "auto" | "sweep" } = {}
) =>
  program.pipe(
    Effect.scoped,
    Effect.provide(NodeTerminal.layer(config, options.containment ? { containment: options.containment } : {}))
  )

/** Open a shell for the rest of the scope; closed with it. */
export const openShell = (request: { readonly name?: string; readonly shell?: string } = {}) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* Effect.acquireRelease(
      service.open(owner, request),
      (opened) => service.close(owner, Ids.SessionId.make(opened.sessionId)).pipe(Effect.ignore)
    )
    const id = Ids.SessionId.make(opened.sessionId)
    const send = (text: string, extra: { readonly timeoutMs?: number } = {}) =>
      service.send(owner, id, { text, ...extra })
    return { service, id, opened, send }
  })

const firstLine = (cause: Cause.Cause<unknown>) => {
  const text = Cause.pretty(cause).split("\n").find((line) => line.trim() !== "") ?? "failed"
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/**
 * Run the metrics of `effect`; if it fails or dies, one row per expected name says why (so a capability
 * that does not exist yet shows as skipped, and the rest of the run goes on).
 */
export const guard = (
  rows: ReadonlyArray<
    { readonly name: string; readonly group: string; readonly unit: string; readonly target?: string }
  >,
  effect: Effect.Effect<ReadonlyArray<Metric>, unknown>
): Effect.Effect<ReadonlyArray<Metric>> =>
  effect.pipe(
    Effect.catchAllCause((cause) =>
      Effect.succeed(
        rows.map((row) =>
          MetricRow.skipped(
            { name: row.name, group: row.group, kind: "ours", unit: row.unit },
            `error: ${firstLine(cause)}`,
            row.target
          )
        )
      )
    )
  )

/** Count occurrences (e.g. of wait reasons). */
export const tally = (values: ReadonlyArray<string>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1
  return counts
}

/** Await a promise in an effect; a rejection is a defect of the benchmark (caught by `guard`). */
export const promise = <A>(thunk: () => Promise<A>): Effect.Effect<A> => Effect.promise(thunk)

/** Let the machine settle between phases. */
export const pause = (ms: number) => Effect.sleep(`${ms} millis`)
