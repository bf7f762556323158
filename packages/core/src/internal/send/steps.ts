/**
 * A batch (`steps`): several inputs sent in order in one call, the session's slot held once for all of
 * them. Each step is a foreground send with its own wait; the first that ends by `timeout`,
 * `inferred_idle` or `session_exit` stops the rest. The outputs share `maxResultBytes`, the last step's
 * kept first.
 */
import { Capture, Utf8 } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { InvalidInput } from "../../Errors.js"
import { type SendRequest, type SendResult, type Step, type StepResult, stopsBatch } from "../../Session.js"
import type { Deps } from "../session/registry.js"
import type { SessionRuntime } from "../session/runtime.js"
import { runSend } from "./foreground.js"
import * as Input from "./input.js"
import { fullScreenNote, fullScreenStepNote } from "./results.js"
import { exclusive } from "./slot.js"

/** The fields a batch replaces: with `steps`, none of them may be given. */
const replaced = ["text", "keys", "paste", "submit", "waitFor", "background"] as const

/** Each step's input, encoded now to refuse a bad one before anything is written (`steps.N.field`). */
export const checkSteps = (
  request: SendRequest,
  steps: ReadonlyArray<Step>,
  runtime: SessionRuntime
): InvalidInput | undefined => {
  const clash = replaced.find((field) => request[field] !== undefined)
  if (clash !== undefined) {
    return new InvalidInput({ field: clash, reason: "cannot be given with steps (each step has its own input)" })
  }
  for (const [index, step] of steps.entries()) {
    const encoded = Input.encode(step, runtime.emulator.modes)
    if (Either.isLeft(encoded)) {
      return new InvalidInput({ field: `steps.${index}.${encoded.left.field}`, reason: encoded.left.reason })
    }
  }
  return undefined
}

/**
 * A step's part of the result. Only the last step's screen is in the result: an earlier step's output says
 * a full-screen program held the terminal, without pointing at a screen that is not there.
 */
const stepOf = (result: SendResult, last: boolean): StepResult => ({
  output: !last && result.output === fullScreenNote ? fullScreenStepNote : result.output,
  waitReason: result.waitReason,
  ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
  ...(result.match !== undefined ? { match: result.match } : {}),
  truncated: result.truncated,
  ...(result.continuation === true ? { continuation: true } : {}),
  elapsedMs: result.elapsedMs
})

/** The outputs within `maxBytes` together: the last step's first, then the earlier ones, newest first. */
const shareBudget = (steps: ReadonlyArray<StepResult>, maxBytes: number): Array<StepResult> => {
  let room = maxBytes
  const shared: Array<StepResult> = []
  for (let index = steps.length - 1; index >= 0; index--) {
    const step = steps[index]!
    const cut = Capture.fit(step.output, Math.max(0, room))
    room -= Utf8.byteLength(cut.text)
    shared.unshift({ ...step, output: cut.text, truncated: step.truncated || cut.truncated })
  }
  return shared
}

/** Run a batch in the session's slot (one `SendActive` for the whole of it; a cancel ends the step running). */
export const runSteps = (deps: Deps, runtime: SessionRuntime, request: SendRequest, steps: ReadonlyArray<Step>) =>
  exclusive(runtime.id, runtime.slot, (active, restore) =>
    Effect.gen(function*() {
      const started = deps.timers.now()
      const results: Array<SendResult> = []
      let stoppedAt: number | undefined
      for (const [index, step] of steps.entries()) {
        const shellReading = runtime.type === "shell" && runtime.shell.state !== "running"
        // encoded again now: the program may have changed its modes (bracketed paste, cursor keys) meanwhile
        const input = Input.encode(step, runtime.emulator.modes, shellReading)
        if (Either.isLeft(input)) {
          return yield* new InvalidInput({ field: `steps.${index}.${input.left.field}`, reason: input.left.reason })
        }
        const result = yield* runSend(
          deps,
          runtime,
          { ...step, idleMs: step.idleMs ?? request.idleMs, timeoutMs: step.timeoutMs ?? request.timeoutMs },
          input.right,
          active,
          restore
        )
        results.push(result)
        if (stopsBatch(result.waitReason) || runtime.exit !== undefined) {
          if (index < steps.length - 1) stoppedAt = index
          break
        }
      }
      const last = results[results.length - 1]!
      const shared = shareBudget(
        results.map((result, index) => stepOf(result, index === results.length - 1)),
        deps.config.maxResultBytes
      )
      return {
        ...last,
        output: shared[shared.length - 1]!.output,
        truncated: shared[shared.length - 1]!.truncated,
        steps: shared,
        ...(stoppedAt !== undefined ? { stoppedAt } : {}),
        elapsedMs: deps.timers.now() - started
      } satisfies SendResult
    }))
