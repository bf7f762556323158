/**
 * A send: the input encoded and classified once, then either a foreground send in the session's slot (in the
 * caller's fiber: `foreground.ts`), a batch of them (`steps.ts`), or a background one handed to a task
 * (`background.ts`, then `firstReturn` when it waits for something).
 */
import { Capture } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { HumanInControl, LimitReached, SendActive, SessionExited, SignalRefused } from "../../Errors.js"
import { InvalidInput } from "../../Errors.js"
import type { OwnerId, SessionId } from "../../Ids.js"
import type { SendRequest, SendResult, SignalName, WaitReason } from "../../Session.js"
import { unsupported } from "../readiness/listening.js"
import { type Deps, lookup } from "../session/registry.js"
import { exitedError, type SessionRuntime, statusOf } from "../session/runtime.js"
import { signalTarget } from "../session/signalTarget.js"
import { startBackground } from "./background.js"
import { runSend } from "./foreground.js"
import * as Input from "./input.js"
import { withForeground } from "./results.js"
import { exclusive } from "./slot.js"
import { checkSteps, runSteps } from "./steps.js"

/**
 * The first return of a background send with `waitFor`: the task's first look, waiting until its output
 * shows the pattern (`matched`, the task runs on), the task waits for input (`stdin_read`), it ends (its
 * result: a server that failed before its banner settles by `prompt` with its exit code), or `timeoutMs`
 * (the task's own deadline too, when given; else the default) passes (`timeout`, the task runs on).
 */
const firstReturn = (
  deps: Deps,
  owner: OwnerId,
  runtime: SessionRuntime,
  request: SendRequest,
  started: SendResult
): Effect.Effect<SendResult> =>
  Effect.gen(function*() {
    const taskId = started.taskId!
    const found = yield* deps.tasks.output(owner, taskId, {
      waitFor: request.waitFor,
      timeoutMs: request.timeoutMs ?? deps.config.timeoutMs
    }).pipe(Effect.option)
    // removed meanwhile (a `process remove` of the owner's): nothing more to tell than the start
    if (found._tag === "None") return started
    const view = found.value
    const result = view.result as SendResult | undefined
    if (view.status === "completed" && result !== undefined) return { ...result, taskId }
    const cut = Capture.fit(view.output, deps.config.maxResultBytes)
    const waitReason: WaitReason = view.match !== undefined
      ? "matched"
      : view.status === "waiting_input"
      ? "stdin_read"
      : view.status === "running"
      ? "timeout"
      : "background"
    return yield* withForeground(deps.inspector, runtime, {
      output: cut.text,
      waitReason,
      sessionStatus: statusOf(runtime),
      truncated: cut.truncated,
      taskId,
      ...(view.match !== undefined ? { match: view.match } : {}),
      elapsedMs: view.elapsedMs
    })
  })

/** The fields a send of a signal cannot have: it sends no input, in the foreground. */
const notWithSignal = ["text", "keys", "paste", "submit", "steps", "background"] as const

/**
 * A send of a signal: in the session's slot, the signal goes to the foreground group (resolved now, as
 * `PtyService.signal` does) in place of the write, and the wait is a send's: the interrupted command's
 * prompt and exit status, a REPL back at its prompt, or what the program is doing when it does not come back.
 */
const sendSignal = (deps: Deps, runtime: SessionRuntime, request: SendRequest & { readonly signal: SignalName }) => {
  const clash = notWithSignal.find((field) => request[field] !== undefined)
  if (clash !== undefined) {
    return Effect.fail(
      new InvalidInput({ field: clash, reason: "cannot be given with signal (a signal is sent instead of input)" })
    )
  }
  return exclusive(
    runtime.id,
    runtime.slot,
    (active, restore) =>
      Effect.flatMap(signalTarget(deps, runtime, request.signal), (targetPgid) => {
        let delivered = false
        const kind = runtime.type !== "shell"
          ? Input.InputKind.Command
          : runtime.shell.state === "running"
          ? Input.InputKind.OtherWhileRunning
          : Input.InputKind.Other
        const effect = Effect.map(runtime.process.signalGroup(targetPgid, request.signal), (done) => {
          delivered = done
        })
        return Effect.map(
          runSend(deps, runtime, request, "", active, restore, { effect, kind }),
          (result): SendResult => ({ ...result, signalled: { signal: request.signal, targetPgid, delivered } })
        )
      })
  )
}

/**
 * A send, untraced (`tracing.ts` adds the span when someone would see it). Combinators rather than a
 * generator: this runs once per send.
 */
export const send = (deps: Deps) => (owner: OwnerId, id: SessionId, request: SendRequest) =>
  Effect.flatMap(lookup(deps, owner, id), (runtime): Effect.Effect<
    SendResult,
    SendActive | SessionExited | InvalidInput | LimitReached | HumanInControl | SignalRefused
  > => {
    if (runtime.exit !== undefined) return Effect.fail(exitedError(runtime))
    const humanInControl = runtime.control.refusal(id)
    if (humanInControl !== undefined) return Effect.fail(humanInControl)
    const cannotTell = unsupported(deps.inspector, request.waitFor) ??
      request.steps?.map((step, i) => unsupported(deps.inspector, step.waitFor, `steps.${i}.waitFor`))
        .find((refused) => refused !== undefined)
    if (cannotTell !== undefined) return Effect.fail(cannotTell)
    if (request.signal !== undefined) return sendSignal(deps, runtime, request as SendRequest & { signal: SignalName })
    if (request.steps !== undefined) {
      const refused = checkSteps(request, request.steps, runtime)
      if (refused !== undefined) return Effect.fail(refused)
      return runSteps(deps, runtime, request, request.steps)
    }
    const shellReading = runtime.type === "shell" && runtime.shell.state !== "running"
    const input = Input.encode(request, runtime.emulator.modes, shellReading)
    if (Either.isLeft(input)) return Effect.fail(input.left)
    if (request.background === true) {
      return Effect.flatMap(
        startBackground(deps, owner, runtime, request, input.right),
        (started) =>
          request.waitFor === undefined
            ? Effect.succeed(started)
            // a caller that gives up on the first return never got the task's id: the task goes with it
            : firstReturn(deps, owner, runtime, request, started).pipe(
              Effect.onInterrupt(() => Effect.ignore(deps.tasks.remove(owner, started.taskId!)))
            )
      )
    }
    return exclusive(
      runtime.id,
      runtime.slot,
      (active, restore) => runSend(deps, runtime, request, input.right, active, restore)
    )
  })
