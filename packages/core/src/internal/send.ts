/**
 * A send: the input encoded and classified once, then either a foreground send in the session's slot (in the
 * caller's fiber: probe, write, the readiness race, the result) or a background one handed to a task
 * (`background.ts`).
 */
import { Capture } from "@agent-terminal/terminal"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { SessionExited } from "../Errors.js"
import type { OwnerId, SessionId } from "../Ids.js"
import type { SendRequest, SendResult, WaitReason } from "../Session.js"
import { startBackground } from "./background.js"
import { begin } from "./begin.js"
import * as Input from "./input.js"
import { interruptForeground } from "./interrupt.js"
import { settle } from "./readiness.js"
import { endOf, type Outcome, outputOf, resultOf, textOf } from "./results.js"
import { type SessionRuntime, statusOf } from "./session.js"
import { type Deps, lookup } from "./sessions.js"
import type { Watch } from "./settled.js"
import { withoutPadding } from "./shells.js"
import { type ActiveSend, exclusive, type Restore } from "./slot.js"

/**
 * A command sent as one unit left the shell at its continuation prompt, so it is incomplete: discard it
 * the way a person would, Ctrl-C (a real SIGINT to the terminal's foreground group, the shell; the
 * interrupt character when the group cannot be resolved), and wait for the prompt. Nothing of it ran, and
 * no half-typed command is left for the next send to complete by accident.
 */
const abandonLine = (deps: Deps, runtime: SessionRuntime, watch: Watch): Effect.Effect<Outcome | undefined> =>
  Effect.gen(function*() {
    const baseline = runtime.shell.seq
    const group = yield* deps.inspector.foregroundGroup(runtime.terminal)
    yield* Option.isSome(group) ? runtime.process.signalGroup(group.value, "SIGINT") : runtime.process.write("\x03")
    const after = yield* settle({
      ...watch,
      baseline,
      kind: Input.InputKind.Other,
      before: undefined,
      waitFor: undefined,
      output: undefined
    })
    return after._tag === "Cancelled" ? undefined : { _tag: "Abandoned", after } satisfies Outcome
  })

/**
 * A foreground send, run in its caller's fiber. Interrupting that fiber, or a cancel (a signal its waits
 * listen to), stops it: before the write nothing is written; once the write has begun it lands whole,
 * and then the foreground group gets a real SIGINT before the send ends interrupted (so the send's slot
 * is held until the signal is delivered). It runs inside `exclusive`'s uninterruptible region: `restore`
 * makes its waits (the probe before the write, the readiness race) interruptible.
 */
const runSend = (
  deps: Deps,
  runtime: SessionRuntime,
  request: SendRequest,
  input: string,
  send: ActiveSend,
  restore: Restore
) =>
  Effect.gen(function*() {
    const { baseline, capture, started, watch } = yield* begin(
      deps,
      runtime,
      request,
      input,
      request.timeoutMs ?? deps.config.timeoutMs,
      restore,
      send.cancel
    )
    send.progress.written = true
    // Built only when needed: building the interruption (its span) costs more than a quick send's wait.
    const unwatch = () => {
      if (watch.output !== undefined) runtime.emulator.unwatch(watch.output)
    }
    const stop = Effect.suspend(() => {
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
    const waited = yield* Effect.exit(restore(
      Effect.flatMap(settle(watch), (first): Effect.Effect<Outcome | undefined> => {
        if (first._tag === "Cancelled") return Effect.succeed(undefined)
        return first._tag === "Continuation" && watch.kind._tag === "Unit"
          ? abandonLine(deps, runtime, watch)
          : Effect.succeed(first)
      })
    ))
    if (Exit.isFailure(waited)) {
      // interrupted while it waited (a caller's timeout, a disconnect): the program gets its SIGINT first
      if (Cause.isInterruptedOnly(waited.cause)) yield* stop
      unwatch()
      return yield* Effect.failCause(waited.cause)
    }
    const outcome = waited.value
    unwatch()
    if (outcome === undefined) {
      yield* stop
      return yield* Effect.interrupt
    }
    const captured = runtime.emulator.finish(capture, endOf(runtime, outcome))
    const text = textOf(outcome, withoutPadding(runtime, outcome, outputOf(runtime, request, captured, baseline)))
    return resultOf(deps.config, runtime, outcome, text, captured.truncated, deps.timers.now() - started)
  })

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
    return {
      output: cut.text,
      waitReason,
      sessionStatus: statusOf(runtime),
      truncated: cut.truncated,
      taskId,
      ...(view.match !== undefined ? { match: view.match } : {}),
      elapsedMs: view.elapsedMs
    }
  })

/** A send, untraced (`tracing.ts` adds the span when someone would see it). */
export const send = (deps: Deps) =>
  Effect.fnUntraced(function*(owner: OwnerId, id: SessionId, request: SendRequest) {
    const runtime = yield* lookup(deps, owner, id)
    if (runtime.exit !== undefined) {
      return yield* new SessionExited({ sessionId: id, exitCode: runtime.exit.exitCode, signal: runtime.exit.signal })
    }
    const shellReading = runtime.type === "shell" && runtime.shell.state !== "running"
    const input = Input.encode(request, runtime.emulator.modes, shellReading)
    if (Either.isLeft(input)) return yield* input.left
    if (request.background === true) {
      const started = yield* startBackground(deps, owner, runtime, request, input.right)
      return request.waitFor === undefined ? started : yield* firstReturn(deps, owner, runtime, request, started)
    }
    return yield* exclusive(
      runtime.id,
      runtime.slot,
      (active, restore) => runSend(deps, runtime, request, input.right, active, restore)
    )
  })
