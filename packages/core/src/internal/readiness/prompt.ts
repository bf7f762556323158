/**
 * The `prompt` tier: the shell is back at its own prompt (the markers since the write, the controlled prompt
 * text under the cursor, the shell holding the terminal's foreground). Two forms: `promptTier`, one racer of
 * the race, and `promptFirst`, the quick path before it.
 */
import type { Emulator } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ProcessInspector } from "../../ProcessInspector.js"
import { onAfterPoll } from "../clock/wake.js"
import { runningAtStart } from "../send/input.js"
import type { SessionRuntime } from "../session/runtime.js"
import { commandStart, continuationAfter, promptAfter } from "../session/shellState.js"
import type { Decisive, Settled, Watch } from "./settled.js"

/** Whether the capture has been moved past the command line's echo (done once per send: see `Capture.rebase`). */
export interface PromptProgress {
  rebased: boolean
}

/** What the markers since the write show right now, looked at without waiting. */
type PromptLook =
  | { readonly _tag: "none" }
  /** Our prompt, complete and under the cursor; whether the shell holds the foreground is not checked yet. */
  | { readonly _tag: "prompt"; readonly settled: Decisive; readonly commandStarted: boolean }
  | { readonly _tag: "continuation"; readonly settled: Decisive }
  | { readonly _tag: "cancelled" }

const none: PromptLook = { _tag: "none" }
const cancelled: PromptLook = { _tag: "cancelled" }
const cancelledSettled: Settled = { _tag: "Cancelled" }

const samePosition = (a: Emulator.Position, b: Emulator.Position) => a.row === b.row && a.col === b.col

const lookForPrompt = (watch: Watch, progress: PromptProgress): PromptLook => {
  const { session } = watch
  const markers = session.shell.since(watch.baseline)
  if (!progress.rebased) {
    const start = commandStart(markers)
    if (start !== undefined) {
      watch.capture.rebase(start.at)
      progress.rebased = true
    }
  }
  // the cursor is read only when a marker asks for it: reading it parses the output the emulator holds back
  const prompt = promptAfter(markers)
  if (
    prompt !== undefined && samePosition(session.emulator.cursor(), prompt.end.at) &&
    session.emulator.textBetween(prompt.start.at, prompt.end.at) === watch.promptText
  ) {
    const commandStarted = markers.some((marker) => marker.kind === "C")
    // Input to a shell at its prompt that started no command: a prompt that begins before where the cursor was
    // at the write is the prompt the shell was at, drawn again (readline redraws its line at a resize), not the
    // one after this input, which comes below the input's echo (an empty line, ^C and C-l each end on a later
    // row). A program running at the write (a pager's `q`) may end with the prompt anywhere: not looked at.
    if (commandStarted || runningAtStart(watch.kind) || !before(prompt.start.at, watch.from)) {
      return {
        _tag: "prompt",
        settled: { _tag: "Prompt", end: prompt.start.at, exitCode: prompt.exitCode },
        commandStarted
      }
    }
  }
  const continuation = continuationAfter(markers)
  // Past the marker: after bash's and zsh's `> ` on its row, or on the new line fish adds to the command
  // line (fish has no continuation prompt; its Enter prints the marker, then the line editor moves on).
  if (continuation !== undefined && after(session.emulator.cursor(), continuation.at)) {
    return { _tag: "continuation", settled: { _tag: "Continuation", end: continuation.at } }
  }
  return none
}

/** The shell holds the terminal's foreground (or, where that cannot be read, no exact tier could tell). */
const shellInForeground = (inspector: ProcessInspector["Type"], session: SessionRuntime) =>
  Effect.map(
    inspector.foregroundGroup(session.terminal),
    (foreground) => Option.isNone(foreground) ? !inspector.exact : foreground.value === session.process.pid
  )

/**
 * `prompt`: the newest markers since the write are our prompt (start then end), nothing was printed
 * after it, it is exactly the controlled prompt text, and the shell holds the terminal's foreground.
 * Also settles on a continuation prompt (an unfinished command line), which is reported as such.
 */
export const promptTier = (watch: Watch, progress: PromptProgress): Effect.Effect<Decisive> =>
  Effect.gen(function*() {
    const { inspector, session } = watch
    const afterRunning = runningAtStart(watch.kind)
    while (true) {
      const changed = session.activity.version
      const look = lookForPrompt(watch, progress)
      if (look._tag === "continuation") return look.settled
      if (look._tag === "prompt") {
        if (afterRunning && !look.commandStarted) {
          // The command that ran at the write ended: this prompt is ours only if the shell does not go on
          // to read input typed ahead (which it does at once, echoing it and starting a command).
          const quiet = yield* session.activity.quietFor(changed, watch.config.pollIntervalMs)
          if (!quiet) continue
        }
        if (yield* shellInForeground(inspector, session)) return look.settled
        yield* session.activity.changeOrSleep(changed, watch.config.pollIntervalMs)
        continue
      }
      // looked at again in each change's callback: while output streams, the fiber wakes only for a prompt
      yield* session.activity.relevantChangeOrSleep(
        changed,
        Number.POSITIVE_INFINITY,
        () => lookForPrompt(watch, progress)._tag !== "none"
      )
    }
  })

/**
 * The common case first, without the race: a command line sent to a shell at its prompt whose prompt comes
 * back before anything else could be decided. It answers `undefined` as soon as the race could decide
 * something else, and the race then probes at once:
 * - for one line sent to a shell at its prompt (`Line`), no probe can show a wait for new input before the
 *   shell starts the command (its `C` marker is the evidence the line was taken): it waits for that, then
 *   for the prompt while output keeps coming, until 1 ms passes without output;
 * - otherwise until the `stdin_read` tier's first probe would be due (output paused for an event-loop turn,
 *   or 1 ms without output);
 * - never past the first moment the idle or timeout tier could fire, nor `pollIntervalMs`.
 *
 * Plain callbacks on the session's activity: no fiber is forked or woken per chunk of output, and no
 * `/proc` read but the foreground check at the end.
 */
export const promptFirst = (watch: Watch, progress: PromptProgress): Effect.Effect<Settled | undefined> =>
  Effect.flatMap(
    Effect.async<PromptLook>((resume) => {
      const { config, session, timers } = watch
      const line = watch.kind._tag === "Line"
      const until = watch.writtenAt +
        Math.min(config.pollIntervalMs, watch.idleMs ?? config.idleSilenceMs, watch.timeoutMs)
      let cancelTimer: (() => void) | undefined
      let cancelDeadline: (() => void) | undefined
      let cancelPause: (() => void) | undefined
      let finished = false
      const stop = () => {
        finished = true
        cancelTimer?.()
        cancelDeadline?.()
        cancelPause?.()
        unlisten()
        unlistenCancel()
      }
      const finish = (look: PromptLook) => {
        if (finished) return
        stop()
        resume(Effect.succeed(look))
      }
      /** Settles when the markers decide, or when the race must; `true` once finished. */
      const decided = (): boolean => {
        const look = lookForPrompt(watch, progress)
        if (look._tag !== "none") finish(look)
        else if (session.exit !== undefined || timers.now() >= until) finish(none)
        return finished
      }
      const quiet = () => {
        if (!decided()) finish(none)
      }
      /** When output last moved: the quiet timer, when it comes, waits on if output came since it was set. */
      let lastChange = timers.now()
      const quietCheck = () => {
        cancelTimer = undefined
        if (finished) return
        const since = timers.now() - lastChange
        if (since >= 1) quiet()
        else cancelTimer = timers.after(1 - since, quietCheck)
      }
      // one timer for a spell of output, not a timer set and cleared per chunk
      const quietSoon = () => {
        lastChange = timers.now()
        cancelTimer ??= timers.after(1, quietCheck)
      }
      // Output pauses for an event-loop turn without a prompt: the `stdin_read` tier's probe is due.
      const pauseFrom = (bytes: number) => {
        cancelPause = onAfterPoll(() => {
          cancelPause = undefined
          if (decided()) return
          if (session.activity.bytes === bytes) finish(none)
          else pauseFrom(session.activity.bytes)
        })
      }
      const onChange = line
        ? () => {
          if (decided() || !progress.rebased) return
          quietSoon()
        }
        : () => {
          cancelTimer?.()
          cancelTimer = undefined
          if (!decided() && cancelPause === undefined) pauseFrom(session.activity.bytes)
        }
      if (watch.cancel?.cancelled === true) return resume(Effect.succeed(cancelled))
      const unlisten = session.activity.listen(onChange)
      const unlistenCancel = watch.cancel?.listen(() => finish(cancelled)) ?? (() => {})
      if (decided()) return
      if (line) {
        cancelDeadline = timers.after(until - timers.now(), quiet)
        if (progress.rebased) quietSoon()
      } else quietSoon()
      return Effect.sync(stop)
    }),
    (look): Effect.Effect<Settled | undefined> => {
      switch (look._tag) {
        case "none":
          return Effect.succeed(undefined)
        case "cancelled":
          return Effect.succeed(cancelledSettled)
        case "continuation":
          return Effect.succeed(look.settled)
        case "prompt":
          return Effect.map(
            shellInForeground(watch.inspector, watch.session),
            (held) => held ? look.settled : undefined
          )
      }
    }
  )

const after = (a: Emulator.Position, b: Emulator.Position) => a.row > b.row || (a.row === b.row && a.col > b.col)

const before = (a: Emulator.Position, b: Emulator.Position) => a.row < b.row || (a.row === b.row && a.col < b.col)
