/**
 * A foreground send in the session's slot, run in its caller's fiber: the probe and the write (`begin`),
 * the readiness race, an unfinished command line discarded, the result. `steps` runs it once per step.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { SendRequest, SendResult } from "../../Session.js"
import { settle } from "../readiness/race.js"
import type { Watch } from "../readiness/settled.js"
import type { Deps } from "../session/registry.js"
import type { SessionRuntime } from "../session/runtime.js"
import { withoutPadding } from "../session/shells.js"
import { begin, type Delivery } from "./begin.js"
import * as Input from "./input.js"
import { interruptForeground } from "./interrupt.js"
import { endOf, type Outcome, outputOf, resultOf, textOf, withForeground } from "./results.js"
import type { ActiveSend, Restore } from "./slot.js"

/** Ctrl-C rounds an abandoned command line gets before its wait's end is reported as it is. */
const ABANDON_ROUNDS = 3

/**
 * A command sent as one unit left the shell at its continuation prompt, so it is incomplete: discard it
 * the way a person would, Ctrl-C (a real SIGINT to the terminal's foreground group, the shell; the
 * interrupt character when the group cannot be resolved), and wait for the prompt. Nothing of it ran, and
 * no half-typed command is left for the next send to complete by accident. A person presses Ctrl-C again
 * when the prompt does not come back (seen once in a loaded CI run with fish: the wait after the first one
 * ended `inferred_idle`), and so does this, up to `ABANDON_ROUNDS` times while the shell is silent or still
 * at its continuation prompt.
 */
const abandonLine = (deps: Deps, runtime: SessionRuntime, watch: Watch): Effect.Effect<Outcome | undefined> =>
  Effect.gen(function*() {
    for (let round = 1;; round++) {
      const baseline = runtime.shell.seq
      const group = yield* deps.inspector.foregroundGroup(runtime.terminal)
      yield* Option.isSome(group) ? runtime.process.signalGroup(group.value, "SIGINT") : runtime.process.write("\x03")
      // Silence counts from this Ctrl-C; the send's own deadline stays.
      const now = deps.timers.now()
      const after = yield* settle({
        ...watch,
        writtenAt: now,
        timeoutMs: Math.max(0, watch.writtenAt + watch.timeoutMs - now),
        baseline,
        kind: Input.InputKind.Other,
        before: undefined,
        waitFor: undefined,
        output: undefined
      })
      if (after._tag === "Cancelled") return undefined
      const again = after._tag === "InferredIdle" || after._tag === "Continuation"
      if (!again || round === ABANDON_ROUNDS) return { _tag: "Abandoned", after } satisfies Outcome
    }
  })

/**
 * A foreground send, run in its caller's fiber. Interrupting that fiber, or a cancel (a signal its waits
 * listen to), stops it: before the write nothing is written; once the write has begun it lands whole,
 * and then the foreground group gets a real SIGINT before the send ends interrupted (so the send's slot
 * is held until the signal is delivered). It runs inside `exclusive`'s uninterruptible region: `restore`
 * makes its waits (the probe before the write, the readiness race) interruptible.
 */
export const runSend = (
  deps: Deps,
  runtime: SessionRuntime,
  request: Pick<SendRequest, "text" | "paste" | "submit" | "waitFor" | "idleMs" | "timeoutMs">,
  input: string,
  send: ActiveSend,
  restore: Restore,
  delivery?: Delivery
) =>
  // Combinators rather than a generator, as in `begin`: this runs once per send.
  Effect.flatMap(
    begin(deps, runtime, request, input, request.timeoutMs ?? deps.config.timeoutMs, restore, send.cancel, delivery),
    ({ baseline, capture, started, watch }) => {
      send.progress.written = true
      const unwatch = () => {
        if (watch.output !== undefined) runtime.emulator.unwatch(watch.output)
      }
      // Built only when needed: building the interruption (its span) costs more than a quick send's wait.
      const stop = () =>
        Effect.suspend(() => {
          runtime.emulator.finish(capture)
          unwatch()
          return interruptForeground(runtime, deps.inspector)
        }).pipe(
          Effect.tap((interrupted) =>
            Effect.sync(() => {
              send.progress.interrupted = interrupted
            })
          )
        )
      const waiting = restore(
        Effect.flatMap(settle(watch), (first): Effect.Effect<Outcome | undefined> => {
          if (first._tag === "Cancelled") return Effect.succeed(undefined)
          return first._tag === "Continuation" && watch.kind._tag === "Unit"
            ? abandonLine(deps, runtime, watch)
            : Effect.succeed(first)
        })
      )
      return Effect.flatMap(Effect.exit(waiting), (waited): Effect.Effect<SendResult> => {
        if (Exit.isFailure(waited)) {
          // interrupted while it waited (a caller's timeout, a disconnect): the program gets its SIGINT first
          const before: Effect.Effect<unknown> = Cause.isInterruptedOnly(waited.cause)
            ? stop()
            : Effect.sync(() => runtime.emulator.finish(capture))
          return Effect.flatMap(before, () => {
            unwatch()
            return Effect.failCause(waited.cause)
          })
        }
        const outcome = waited.value
        unwatch()
        if (outcome === undefined) return stop().pipe(Effect.zipRight(Effect.interrupt))
        const captured = runtime.emulator.finish(capture, endOf(runtime, outcome))
        const text = textOf(outcome, withoutPadding(runtime, outcome, outputOf(runtime, request, captured, baseline)))
        return withForeground(
          deps.inspector,
          runtime,
          resultOf(deps.config, runtime, outcome, text, captured.truncated, deps.timers.now() - started)
        )
      })
    }
  )
