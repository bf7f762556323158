import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type { ProcessInfo, ProcessInspector } from "../../ProcessInspector.js"
import type { SessionRuntime } from "../session/runtime.js"

/**
 * What stopping a send did to the terminal.
 */
export interface Interrupted {
  /** Bytes of input no program had read yet, dropped (the flush a real ^C does). */
  readonly discarded: number
  /** The process groups that received SIGINT, in order; empty when the foreground group was unresolvable. */
  readonly signalled: ReadonlyArray<number>
}

/** How long, after the SIGINT, a job that the shell was starting in that instant is still caught. */
const FOLLOW_MS = 250
const POLL_MS = 5

/** The follow-up's looks: every `POLL_MS`, for `FOLLOW_MS`. */
const follow = Schedule.spaced(POLL_MS).pipe(Schedule.upTo(FOLLOW_MS))

const identity = (info: ProcessInfo) => `${info.pid}:${info.startTime}:${info.comm}`

/**
 * Stop what a send started, as a person's ^C would, but with a real `SIGINT` (a program that turned
 * `ISIG` off stops too): drop the input nobody read yet, then signal the terminal's foreground group
 * resolved now (never a guessed pid). A job the shell was starting at that instant escapes a single
 * signal (a forked child still running the shell's handlers, or a group not yet in the foreground), so
 * for a short while any foreground process not signalled yet — a new group, or a child that exec'd since —
 * gets the SIGINT too; the watch ends as soon as the shell shows a prompt again, or the foreground group
 * waits for input.
 */
export const interruptForeground = (
  runtime: SessionRuntime,
  inspector: Context.Tag.Service<typeof ProcessInspector>
): Effect.Effect<Interrupted> =>
  Effect.gen(function*() {
    if (runtime.exit !== undefined) return { discarded: 0, signalled: [] }
    const home = runtime.process.pid
    const terminal = runtime.terminal
    const discarded = yield* runtime.process.discardInput
    const signalled: Array<number> = []
    const seen = new Set<string>()
    const members = (pgid: number) =>
      Effect.map(
        inspector.processTree(home),
        (tree) => tree.filter((info) => info.pgid === pgid && info.state !== "Z" && info.state !== "X")
      )
    const hit = (pgid: number) =>
      Effect.gen(function*() {
        const targets = yield* members(pgid)
        if (yield* runtime.process.signalGroup(pgid, "SIGINT")) {
          signalled.push(pgid)
          for (const info of targets) seen.add(identity(info))
        }
      })

    const first = yield* inspector.foregroundGroup(terminal)
    if (Option.isNone(first)) {
      yield* Effect.logWarning("cancel: the terminal's foreground group cannot be resolved; nothing signalled")
      return { discarded, signalled }
    }
    const baseline = runtime.shell.seq
    yield* hit(first.value)

    const backAtPrompt = () =>
      runtime.nonce !== undefined && runtime.shell.since(baseline).some((marker) => marker.kind === "D")
    const waitingForInput = inspector.exact
      ? Effect.map(inspector.probe(terminal), (probe) => probe._tag === "Snapshot" && probe.waitingOnTerminal)
      : Effect.succeed(false)
    /** One look at the terminal after the signal: `true` once the follow-up can end. */
    const look = Effect.gen(function*() {
      if (runtime.exit !== undefined) return true
      const group = yield* inspector.foregroundGroup(terminal)
      if (Option.isNone(group)) return false
      if (group.value === home) return backAtPrompt() || (yield* waitingForInput)
      const fresh = (yield* members(group.value)).some((info) => !seen.has(identity(info)))
      if (!fresh) return yield* waitingForInput
      yield* hit(group.value)
      return false
    })
    yield* Effect.sleep(POLL_MS)
    yield* Effect.repeat(look, { schedule: follow, until: (done) => done })
    return { discarded, signalled }
  }).pipe(Effect.withSpan("PtyService.interruptForeground"))
