/**
 * A background send (`background: true`): the session's slot is reserved, the task is started (its place
 * within the owner's cap taken before anything is written), then the input is written and the task runs
 * until the prompt is back, reporting meanwhile whether the program waits for input and taking input
 * through the task runtime. The task releases the slot when it ends.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { OwnerId } from "../Ids.js"
import type { SendRequest, SendResult } from "../Session.js"
import { begin } from "./begin.js"
import * as Input from "./input.js"
import { interruptForeground } from "./interrupt.js"
import { settleBackground } from "./readiness.js"
import { endOf, outputOf, resultOf } from "./results.js"
import { statusOf } from "./session.js"
import type { SessionRuntime } from "./session.js"
import type { Deps } from "./sessions.js"
import { withoutPadding } from "./shells.js"
import { reserved } from "./slot.js"

type Begun = Effect.Effect.Success<ReturnType<typeof begin>>

export const startBackground = (
  deps: Deps,
  owner: OwnerId,
  runtime: SessionRuntime,
  request: SendRequest,
  input: string
) =>
  reserved(runtime.id, runtime.slot, (reservation, restore) =>
    Effect.gen(function*() {
      const { inspector, tasks } = deps
      const written = yield* Deferred.make<Begun>()
      /** The write, once it happened (the task exists before it). */
      const sent: { begun: Begun | undefined } = { begun: undefined }
      let waiting = false
      /** The task's race began: a kill from then on interrupts the program through `run`'s own handler. */
      let racing = false
      const run = Effect.flatMap(Deferred.await(written), ({ baseline, capture, started, watch }) =>
        Effect.suspend(() => {
          racing = true
          return settleBackground(watch, (now) => {
            waiting = now
          })
        }).pipe(
          Effect.map((settled) => {
            const captured = runtime.emulator.finish(capture, endOf(runtime, settled))
            const output = withoutPadding(runtime, settled, outputOf(runtime, request, captured, baseline))
            return resultOf(deps.config, runtime, settled, output, captured.truncated, deps.timers.now() - started)
          }),
          Effect.onInterrupt(() => interruptForeground(runtime, inspector))
        ))
      const taskId = yield* tasks.start(owner, {
        kind: "send",
        label: request.text ?? request.paste ?? (request.keys ?? []).join(" "),
        sessionId: runtime.id,
        run,
        output: () =>
          sent.begun === undefined
            ? ""
            : outputOf(runtime, request, runtime.emulator.peek(sent.begun.capture), sent.begun.baseline),
        waitingForInput: () => waiting,
        input: (taskInput) => {
          const humanInControl = runtime.control.refusal(runtime.id)
          if (humanInControl !== undefined) return Effect.fail(humanInControl)
          const bytes = Input.encode(taskInput, runtime.emulator.modes)
          return Either.isLeft(bytes) ? Effect.fail(bytes.left) : runtime.process.write(bytes.right)
        },
        finalOutput: (result) => result.output,
        // Killed before its race began but after the write, the command was never interrupted: interrupt it now.
        onEnd: Effect.suspend(() =>
          racing || sent.begun === undefined ? Effect.void : Effect.asVoid(interruptForeground(runtime, inspector))
        ).pipe(
          Effect.ensuring(Effect.sync(() => {
            if (sent.begun !== undefined) runtime.emulator.finish(sent.begun.capture)
            runtime.slot.release(reservation)
          }))
        )
      })
      const begun = sent.begun = yield* begin(
        deps,
        runtime,
        request,
        input,
        request.timeoutMs ?? Number.POSITIVE_INFINITY,
        restore
      ).pipe(Effect.onError(() => Effect.ignore(tasks.remove(owner, taskId))))
      yield* Deferred.succeed(written, begun)
      runtime.slot.handOff(reservation, taskId)
      return {
        output: "",
        waitReason: "background",
        sessionStatus: statusOf(runtime),
        truncated: false,
        taskId,
        elapsedMs: deps.timers.now() - begun.started
      } satisfies SendResult
    }))
