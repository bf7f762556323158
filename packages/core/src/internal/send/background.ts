/**
 * A background send (`background: true`): the session's slot is reserved, the task is started (its place
 * within the owner's cap taken before anything is written), then the input is written and the task runs
 * until the prompt is back, reporting meanwhile whether the program waits for input and taking input
 * through the task runtime. The task releases the slot when it ends.
 */
import type { Emulator } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { OwnerId } from "../../Ids.js"
import type { Match, SendRequest, SendResult, WaitFor } from "../../Session.js"
import { awaitListening, listenersNow } from "../readiness/listening.js"
import { awaitMatch, awaitStableScreen, openWatch, patternOf } from "../readiness/match.js"
import { settleBackground } from "../readiness/race.js"
import type { Deps } from "../session/registry.js"
import { statusOf } from "../session/runtime.js"
import type { SessionRuntime } from "../session/runtime.js"
import { withoutPadding } from "../session/shells.js"
import { begin } from "./begin.js"
import * as Input from "./input.js"
import { interruptForeground } from "./interrupt.js"
import { endOf, outputOf, resultOf } from "./results.js"
import { reserved } from "./slot.js"

type Begun = Effect.Effect.Success<ReturnType<typeof begin>>

/**
 * Where the task's output ends: at the prompt the shell printed once the task's command was over (a killed
 * task's shell, back after its ^C: the prompt is not the task's output, whether or not its text has been read
 * yet when the task is looked at), else at the cursor.
 */
const promptStartSince = (runtime: SessionRuntime, baseline: number): Emulator.Position => {
  const markers = runtime.shell.since(baseline)
  const last = markers[markers.length - 1]
  const start = last?.kind === "D" ? last : last?.kind === "B" ? markers[markers.length - 2] : undefined
  return start?.kind === "D" ? start.at : runtime.emulator.cursor()
}
/** Completes (with `undefined`) once the task waits for input. */
const waitingForInput = (now: () => boolean, listeners: Set<() => void>): Effect.Effect<undefined> =>
  Effect.async<undefined>((resume) => {
    if (now()) return resume(Effect.succeed(undefined))
    const wake = () => resume(Effect.succeed(undefined))
    listeners.add(wake)
    return Effect.sync(() => listeners.delete(wake))
  })

/**
 * Wait for `condition` in the output of a background send: from the send's start through its own watch
 * (`since` absent: the first look, for the send's own `waitFor`), through a watch of the send's output
 * from its start (`since` is the send's capture: the first look, for another condition — like the send's
 * own watch, it leaves out the typed command line, which may well contain the text looked for), or since
 * the previous look. What scrolled off meanwhile is in the capture (`since`: bounded, its head and tail),
 * looked at once, and a new watch takes the rest.
 */
const awaitOutputSince = (
  deps: Deps,
  runtime: SessionRuntime,
  request: SendRequest,
  begun: Begun,
  since: Emulator.Capture | undefined,
  condition: WaitFor,
  listenersBefore: ReadonlySet<string>
): Effect.Effect<Match> => {
  if (condition.screenStableMs !== undefined) {
    return awaitStableScreen(runtime, deps.timers, condition.screenStableMs, undefined)
  }
  if (condition.listening !== undefined) {
    return awaitListening(
      deps.inspector,
      runtime.terminal.shellPid,
      condition.listening,
      listenersBefore,
      (ms) => runtime.activity.changeOrSleep(runtime.activity.version, ms)
    )
  }
  if (since === undefined) return awaitMatch(runtime, begun.watch.output!)
  const fromStart = since === begun.capture
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      const top = runtime.emulator.screenTop()
      const scrolled = top.row > since.start.row
      if (fromStart && !scrolled) {
        return openWatch(runtime, since.start, begun.watch.kind, { ...request, waitFor: condition }, begun.baseline)!
      }
      const seed = !scrolled
        ? ""
        : fromStart
        ? outputOf(runtime, request, runtime.emulator.peek(since, top), begun.baseline)
        : runtime.emulator.peek(since, top).text
      return runtime.emulator.watch(scrolled ? top : since.start, patternOf(condition), { seed })
    }),
    (output) => awaitMatch(runtime, output),
    (output) => Effect.sync(() => runtime.emulator.unwatch(output))
  )
}

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
      /** What listened before the write: a `listening` look leaves it out. */
      const listenersBefore = yield* listenersNow(inspector, runtime.terminal.shellPid)
      /** The write, once it happened (the task exists before it). */
      const sent: { begun: Begun | undefined } = { begun: undefined }
      let waiting = false
      /** Looks with `waitFor` waiting for the task to wait for input. */
      const onWaitingInput = new Set<() => void>()
      /** Where the output since the previous look begins (none yet: the send's own capture and watch). */
      let look: Emulator.Capture | undefined
      /** The send's own watch of its `waitFor` is for the first look only. */
      let looked = false
      /** The task's race began: a kill from then on interrupts the program through `run`'s own handler. */
      let racing = false
      const run = Effect.flatMap(Deferred.await(written), ({ baseline, capture, started, watch }) =>
        Effect.suspend(() => {
          racing = true
          return settleBackground(watch, (now) => {
            waiting = now
            if (now) { for (const wake of [...onWaitingInput]) wake() }
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
            : outputOf(
              runtime,
              request,
              runtime.emulator.peek(sent.begun.capture, promptStartSince(runtime, sent.begun.baseline)),
              sent.begun.baseline
            ),
        waitingForInput: () => waiting,
        input: (taskInput) => {
          const humanInControl = runtime.control.refusal(runtime.id)
          if (humanInControl !== undefined) return Effect.fail(humanInControl)
          const bytes = Input.encode(taskInput, runtime.emulator.modes)
          return Either.isLeft(bytes) ? Effect.fail(bytes.left) : runtime.process.write(bytes.right)
        },
        finalOutput: (result) => result.output,
        awaitOutput: (condition) =>
          Effect.flatMap(Deferred.await(written), (begun) => {
            const own = !looked && begun.watch.output !== undefined && condition === request.waitFor
            return Effect.raceFirst(
              awaitOutputSince(
                deps,
                runtime,
                request,
                begun,
                own ? undefined : look ?? begun.capture,
                condition,
                listenersBefore
              ),
              waitingForInput(() => waiting, onWaitingInput)
            )
          }),
        onLook: () => {
          looked = true
          if (look !== undefined) runtime.emulator.finish(look)
          look = runtime.emulator.capture({ row: runtime.emulator.cursor().row, col: 0 }, deps.config.maxResultBytes)
        },
        // Killed before its race began but after the write, the command was never interrupted: interrupt it now.
        onEnd: Effect.suspend(() =>
          racing || sent.begun === undefined ? Effect.void : Effect.asVoid(interruptForeground(runtime, inspector))
        ).pipe(
          Effect.ensuring(Effect.sync(() => {
            if (sent.begun !== undefined) {
              runtime.emulator.finish(sent.begun.capture)
              if (sent.begun.watch.output !== undefined) runtime.emulator.unwatch(sent.begun.watch.output)
            }
            if (look !== undefined) runtime.emulator.finish(look)
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
