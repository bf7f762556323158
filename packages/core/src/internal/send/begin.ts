/**
 * What every send starts with: the input classified, the probe before the write (unless the shell's own
 * marker will be the evidence), the capture opened at the cursor, the write, and the watch its race reads.
 */
import { Utf8 } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import type { SendRequest } from "../../Session.js"
import type { CancelSignal } from "../clock/wake.js"
import { listenersNow } from "../readiness/listening.js"
import { openWatch } from "../readiness/match.js"
import type { Watch } from "../readiness/settled.js"
import type { Deps } from "../session/registry.js"
import type { SessionRuntime } from "../session/runtime.js"
import * as Input from "./input.js"
import type { Restore } from "./slot.js"

/** Fails as an interruption once the send is cancelled (raced against a wait that is not a listener). */
const cancelled = (cancel: CancelSignal): Effect.Effect<never> => Effect.zipRight(cancel.await, Effect.interrupt)

/**
 * What a send delivers instead of input (a signal to the foreground group), and the kind of input the race
 * judges it as.
 */
export interface Delivery {
  readonly effect: Effect.Effect<void>
  readonly kind: Input.InputKind
}

/**
 * Probe, open the capture at the cursor, write: what both a foreground and a background send start with. It runs
 * inside the slot's uninterruptible region (`exclusive`, `reserved`), whose `restore` it takes to make the probe
 * interruptible: the capture and the watch it opens before the write are closed again if the write fails, and no
 * interruption can come between.
 */
export const begin = (
  deps: Deps,
  runtime: SessionRuntime,
  request: Pick<SendRequest, "text" | "paste" | "submit" | "waitFor" | "idleMs">,
  input: string,
  timeoutMs: number,
  interruptible: Restore,
  cancel?: CancelSignal,
  delivery?: Delivery
) =>
  // Combinators rather than a generator: this runs once per send (a generator and its yields cost more here
  // than the rest of the function's work).
  Effect.suspend(() => {
    const kind = delivery?.kind ?? Input.classify(runtime.type, runtime.shell, input)
    const go = (listeners: ReadonlySet<string> | undefined) => {
      // A line for a shell at its prompt is proven consumed by the shell's own marker; anything else needs
      // the group's read counters from just before the write.
      if (!deps.inspector.exact || kind._tag === "Line") {
        return write(deps, runtime, request, input, timeoutMs, kind, undefined, cancel, listeners, delivery)
      }
      const probe = deps.inspector.probe(runtime.terminal)
      return Effect.flatMap(
        interruptible(cancel === undefined ? probe : Effect.raceFirst(probe, cancelled(cancel))),
        (before) => write(deps, runtime, request, input, timeoutMs, kind, before, cancel, listeners, delivery)
      )
    }
    // a `listening` wait leaves out what listened before the write
    return request.waitFor?.listening === undefined
      ? go(undefined)
      : Effect.flatMap(listenersNow(deps.inspector, runtime.terminal.shellPid), go)
  })

const write = (
  deps: Deps,
  runtime: SessionRuntime,
  request: Pick<SendRequest, "text" | "paste" | "submit" | "waitFor" | "idleMs">,
  input: string,
  timeoutMs: number,
  kind: Input.InputKind,
  before: Watch["before"],
  cancel: CancelSignal | undefined,
  listenersBefore: ReadonlySet<string> | undefined,
  delivery: Delivery | undefined
) => {
  // A cancel that won before the write: nothing is written, the send ends interrupted.
  if (cancel?.cancelled === true) return Effect.interrupt
  const { config, inspector, timers } = deps
  const start = runtime.emulator.cursor()
  const capture = runtime.emulator.capture(start, config.maxResultBytes)
  const output = openWatch(runtime, start, kind, request)
  const baseline = runtime.shell.seq
  const bytesAtWrite = runtime.activity.bytes
  const started = timers.now()
  // One match rather than `onError` and `map` (a mask and five more runtime operations a send): this runs in the
  // slot's uninterruptible region (see `begin`), so the failure's clean-up is not skipped by an interruption.
  return Effect.matchCauseEffect(delivery?.effect ?? runtime.process.write(input), {
    onFailure: (cause) => {
      runtime.emulator.finish(capture)
      if (output !== undefined) runtime.emulator.unwatch(output)
      return Effect.failCause(cause)
    },
    onSuccess: () => {
      const watch: Watch = {
        session: runtime,
        inspector,
        config,
        timers,
        promptText: runtime.dialect?.promptText ?? "",
        kind,
        baseline,
        writtenAt: timers.now(),
        timeoutMs,
        idleMs: request.idleMs,
        before,
        written: delivery === undefined ? Utf8.byteLength(input) : 0,
        bytesAtWrite,
        capture,
        from: start,
        waitFor: request.waitFor,
        output,
        cancel,
        listenersBefore,
        signalled: delivery !== undefined
      }
      return Effect.succeed({ watch, capture, baseline, started })
    }
  })
}
