import type { Emulator } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Probe, ProcessInspector } from "../ProcessInspector.js"
import type { WaitReason } from "../Session.js"
import * as StdinEvidence from "../StdinEvidence.js"
import type { TerminalConfig } from "../TerminalConfig.js"
import type { CancelSignal, SessionRuntime } from "./session.js"
import { commandStart, continuationAfter, promptAfter } from "./shellState.js"

/** How a send ended: the reason, where its output ends, and what the prompt reported. */
export interface Settled {
  readonly reason: WaitReason
  readonly end: Emulator.Position
  readonly exitCode?: number | undefined
  readonly continuation?: boolean
  /** The send was cancelled while it waited: it ends interrupted (`reason` is only a placeholder). */
  readonly cancelled?: boolean
}

/** The facts of one send the tiers look at. */
export interface Watch {
  readonly session: SessionRuntime
  readonly inspector: ProcessInspector["Type"]
  readonly config: TerminalConfig
  readonly promptText: string
  /** Marker sequence number at the write: only later markers count. */
  readonly baseline: number
  /** A command was running at the write, so the first prompt after it is that command's, not ours. */
  readonly runningAtStart: boolean
  readonly writtenAt: number
  readonly timeoutMs: number
  /** An explicit silence bound for this send (applies even while a command runs). */
  readonly idleMs: number | undefined
  /** The probe taken just before the write (the `stdin_read` tier needs evidence beyond it). */
  readonly before: Probe | undefined
  /** How many bytes were written. */
  readonly written: number
  /** The session's output byte count at the write. */
  readonly bytesAtWrite: number
  readonly capture: Emulator.Capture
  /** The input leaves the shell's command line open (keys or text without Enter): the shell reading on is the answer. */
  readonly lineOpen?: boolean
  /** A cancel of the send ends the wait (`Settled.cancelled`). */
  readonly cancel?: CancelSignal | undefined
  /**
   * The input is one command line, Enter at its end, written to a shell at its prompt: the shell starting a
   * command (its `C` marker) proves all of it was consumed, so no probe before the write is needed.
   */
  readonly shellLine?: boolean
}

/** Wait for the next change of the session's output after `changed` was taken, or `ms`, whichever comes first. */
const changeOrSleep = (session: SessionRuntime, changed: number, ms: number) =>
  ms <= 0 ? Effect.void : Effect.asVoid(session.activity.changeOrSleep(changed, ms))

/** One turn of the event loop: I/O that is ready now (output already in the pty) has been read after it. */
const nextLoopTurn = Effect.async<void>((resume) => {
  setImmediate(() => setImmediate(() => resume(Effect.void)))
})

/**
 * A program found waiting has written everything it will print before its wait, but those bytes may still
 * sit in the pty: let the reader take them before the send's output is cut. Where the backend can, they are
 * first pulled out of the kernel (`flushOutput`), which a turn of the event loop alone does not guarantee:
 * the kernel moves a pty's output to our side with deferred work that, under load, can run after the
 * program is already blocked reading.
 */
const drainOutput = (session: SessionRuntime) =>
  Effect.gen(function*() {
    const { flushOutput } = session.process
    for (let turn = 0; turn < 8; turn++) {
      const bytes = session.activity.bytes
      if (flushOutput !== undefined) yield* flushOutput
      yield* nextLoopTurn
      yield* Effect.yieldNow()
      if (session.activity.bytes === bytes) return
    }
  })

/**
 * A program that is still writing is not waiting for input: before a probe, let output that keeps arriving
 * finish (one event-loop turn without new bytes), but probe at the latest at `until` (a program that prints
 * continuously while it reads, and a flood that would otherwise cost one `/proc` probe per chunk).
 */
const outputPause = (session: SessionRuntime, until: number) =>
  Effect.gen(function*() {
    while (Date.now() < until) {
      const bytes = session.activity.bytes
      yield* nextLoopTurn
      if (session.activity.bytes === bytes) return
    }
  })

/** True when nothing changes for `ms` after `changed` was taken. */
const quietFor = (session: SessionRuntime, changed: number, ms: number) =>
  Effect.map(session.activity.changeOrSleep(changed, ms), (moved) => !moved)

/** Whether the capture has been moved past the command line's echo (done once per send: see `Capture.rebase`). */
interface PromptProgress {
  rebased: boolean
}

/** What the markers since the write show right now, looked at without waiting. */
type PromptLook =
  | { readonly _tag: "none" }
  /** Our prompt, complete and under the cursor; whether the shell holds the foreground is not checked yet. */
  | { readonly _tag: "prompt"; readonly settled: Settled; readonly commandStarted: boolean }
  | { readonly _tag: "continuation"; readonly settled: Settled }
  | { readonly _tag: "cancelled"; readonly settled: Settled }

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
  const cursor = session.emulator.cursor()
  const prompt = promptAfter(markers)
  if (
    prompt !== undefined && samePosition(cursor, prompt.end.at) &&
    session.emulator.textBetween(prompt.start.at, prompt.end.at) === watch.promptText
  ) {
    return {
      _tag: "prompt",
      settled: { reason: "prompt", end: prompt.start.at, exitCode: prompt.exitCode },
      commandStarted: markers.some((marker) => marker.kind === "C")
    }
  }
  const continuation = continuationAfter(markers)
  // Past the marker: after bash's and zsh's `> ` on its row, or on the new line fish adds to the command
  // line (fish has no continuation prompt; its Enter prints the marker, then the line editor moves on).
  if (continuation !== undefined && after(cursor, continuation.at)) {
    return { _tag: "continuation", settled: { reason: "prompt", end: continuation.at, continuation: true } }
  }
  return { _tag: "none" }
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
const promptTier = (watch: Watch, progress: PromptProgress) =>
  Effect.gen(function*() {
    const { inspector } = watch
    const { session } = watch
    while (true) {
      const changed = session.activity.version
      const look = lookForPrompt(watch, progress)
      if (look._tag === "continuation") return look.settled
      if (look._tag === "prompt") {
        if (watch.runningAtStart && !look.commandStarted) {
          // The command that ran at the write ended: this prompt is ours only if the shell does not go on
          // to read input typed ahead (which it does at once, echoing it and starting a command).
          const quiet = yield* quietFor(session, changed, watch.config.pollIntervalMs)
          if (!quiet) continue
        }
        if (yield* shellInForeground(inspector, session)) return look.settled
        yield* changeOrSleep(session, changed, watch.config.pollIntervalMs)
        continue
      }
      yield* session.activity.change(changed)
    }
  })

/**
 * The common case first, without the race: a command line sent to a shell at its prompt whose prompt comes
 * back before anything else could be decided. It answers `undefined` as soon as the race could decide
 * something else, and the race then probes at once:
 * - for one line sent to a shell at its prompt (`shellLine`), no probe can show a wait for new input before
 *   the shell starts the command (its `C` marker is the evidence the line was taken): it waits for that,
 *   then for the prompt while output keeps coming, until 1 ms passes without output;
 * - otherwise until the `stdin_read` tier's first probe would be due (output paused for an event-loop turn,
 *   or 1 ms without output);
 * - never past the first moment the idle or timeout tier could fire, nor `pollIntervalMs`.
 *
 * Plain callbacks on the session's activity: no fiber is forked or woken per chunk of output, and no
 * `/proc` read but the foreground check at the end.
 */
const promptFirst = (watch: Watch, progress: PromptProgress) =>
  Effect.flatMap(
    Effect.async<PromptLook>((resume) => {
      const { config, session } = watch
      const until = watch.writtenAt +
        Math.min(config.pollIntervalMs, watch.idleMs ?? config.idleSilenceMs, watch.timeoutMs)
      const none: PromptLook = { _tag: "none" }
      let timer: ReturnType<typeof setTimeout> | undefined
      let deadline: ReturnType<typeof setTimeout> | undefined
      let pause: ReturnType<typeof setImmediate> | undefined
      let finished = false
      const stop = () => {
        finished = true
        clearTimeout(timer)
        clearTimeout(deadline)
        if (pause !== undefined) clearImmediate(pause)
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
        else if (session.exit !== undefined || Date.now() >= until) finish(none)
        return finished
      }
      const quiet = () => {
        if (!decided()) finish(none)
      }
      // Output pauses for an event-loop turn without a prompt: the `stdin_read` tier's probe is due.
      const pauseFrom = (bytes: number) => {
        pause = setImmediate(() => {
          pause = setImmediate(() => {
            pause = undefined
            if (decided()) return
            if (session.activity.bytes === bytes) finish(none)
            else pauseFrom(session.activity.bytes)
          })
        })
      }
      const onChange = watch.shellLine === true
        ? () => {
          if (decided() || !progress.rebased) return
          clearTimeout(timer)
          timer = setTimeout(quiet, 1)
        }
        : () => {
          clearTimeout(timer)
          if (!decided() && pause === undefined) pauseFrom(session.activity.bytes)
        }
      if (watch.cancel?.cancelled === true) return resume(Effect.succeed(cancelledLook(watch)))
      const unlisten = session.activity.listen(onChange)
      const unlistenCancel = watch.cancel?.listen(() => finish(cancelledLook(watch))) ?? (() => {})
      if (decided()) return
      if (watch.shellLine === true) {
        deadline = setTimeout(quiet, until - Date.now())
        if (progress.rebased) timer = setTimeout(quiet, 1)
      } else timer = setTimeout(quiet, 1)
      return Effect.sync(stop)
    }),
    (look): Effect.Effect<Settled | undefined> => {
      if (look._tag === "none") return Effect.succeed(undefined)
      if (look._tag === "continuation" || look._tag === "cancelled") return Effect.succeed(look.settled)
      return Effect.map(shellInForeground(watch.inspector, watch.session), (held) => held ? look.settled : undefined)
    }
  )

/**
 * The shell itself reading its command line is the prompt tier's to judge (it knows the exit status and
 * the controlled prompt); the shell reading for a builtin such as `read` while a command runs is a wait, and
 * so is the shell reading on after keys that left its line open (no prompt will come for those).
 */
const shellAtPrompt = (watch: Watch, pgid: number): boolean => {
  if (watch.session.nonce === undefined || pgid !== watch.session.process.pid || watch.lineOpen === true) return false
  const markers = watch.session.shell.since(watch.baseline)
  return markers[markers.length - 1]?.kind !== "C"
}

const samePosition = (a: Emulator.Position, b: Emulator.Position) => a.row === b.row && a.col === b.col

const after = (a: Emulator.Position, b: Emulator.Position) => a.row > b.row || (a.row === b.row && a.col > b.col)

/**
 * `stdin_read`: the foreground group is blocked reading this terminal, with evidence that it consumed
 * input since the write. Probes once output pauses (re-probing quickly while the program settles into its
 * read; during a flood at most every `pollIntervalMs`) and on a timer from `exactProbeAfterMs`, every
 * `pollIntervalMs`. Nothing polls between sends.
 */
const stdinTier = (watch: Watch, options: { readonly probeAtOnce?: boolean } = {}) =>
  Effect.gen(function*() {
    const { inspector } = watch
    if (!inspector.exact) return yield* Effect.never
    const { config, session } = watch
    let evidence = StdinEvidence.initial(
      watch.before ?? { _tag: "Miss", reason: "no probe before the write" },
      watch.written
    )
    let backoff = 1
    let seenBytes = session.activity.bytes
    let probedAt = 0
    // Right after the write nothing can have consumed it yet (the write itself is still on its way): the
    // first probe waits for output, or for the first step of the backoff (unless that wait is behind us).
    if (options.probeAtOnce !== true) yield* changeOrSleep(session, session.activity.version, backoff)
    while (true) {
      if (session.activity.bytes !== seenBytes) yield* outputPause(session, probedAt + config.pollIntervalMs)
      const changed = session.activity.version
      probedAt = Date.now()
      const probe = yield* inspector.probe(session.terminal)
      if (watch.shellLine === true && commandStart(session.shell.since(watch.baseline)) !== undefined) {
        evidence = StdinEvidence.witness(evidence, "line_taken")
      }
      const step = StdinEvidence.step(evidence, probe)
      evidence = step.state
      if (step.ready && probe._tag === "Snapshot" && !shellAtPrompt(watch, probe.pgid)) {
        if (probe.pgid !== session.process.pid || session.nonce === undefined) {
          // Confirm after its output is in: a program that read its input and went back to its event loop
          // before acting on it (node's `.exit`) is caught leaving.
          yield* drainOutput(session)
          // Answers to its terminal queries (vim asks for the cursor, colors, capabilities) went out just now:
          // it is about to wake up, read them and redraw. Trust a wait only once they are a while behind (a
          // program that never stops asking is trusted after ten rounds).
          const sinceAnswers = () => Date.now() - session.activity.repliedAt
          for (let round = 0; round < 10 && sinceAnswers() < config.pollIntervalMs; round++) {
            yield* Effect.sleep(Duration.millis(config.pollIntervalMs - sinceAnswers()))
            yield* drainOutput(session)
          }
          // No answer beyond the echo of the input: the program may be acting on it without printing (or
          // exiting): give it a moment before trusting the wait.
          if (session.activity.bytes - watch.bytesAtWrite <= watch.written + 2) {
            yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
          }
          const again = yield* inspector.probe(session.terminal)
          if (again._tag === "Snapshot" && again.pgid === probe.pgid && again.waitingOnTerminal) {
            return { reason: "stdin_read", end: session.emulator.cursor() } satisfies Settled
          }
          continue
        }
        // The shell itself waits: a builtin such as `read` — or the prompt of the command that just ended,
        // whose markers are still on their way. Only a quiet moment with no new marker tells them apart.
        const quiet = yield* quietFor(session, changed, config.pollIntervalMs)
        if (quiet && !shellAtPrompt(watch, probe.pgid)) {
          return { reason: "stdin_read", end: session.emulator.cursor() } satisfies Settled
        }
        continue
      }
      const elapsed = Date.now() - watch.writtenAt
      const outputMoved = session.activity.bytes !== seenBytes
      seenBytes = session.activity.bytes
      const delay = outputMoved ? 0 : Math.min(
        backoff,
        Math.max(config.pollIntervalMs, config.exactProbeAfterMs - elapsed)
      )
      backoff = outputMoved ? 1 : Math.min(backoff * 2, config.pollIntervalMs)
      if (delay === 0) yield* Effect.yieldNow()
      else yield* changeOrSleep(session, changed, delay)
    }
  })

/**
 * `inferred_idle`: no output for `idleSilenceMs` (plus `handoffGraceMs` while a prompt waits for the
 * foreground hand-back). A guess. While the shell reports a command running, silence only counts when
 * configured, asked for by the send, or when no exact tier can tell a waiting program from a busy one.
 */
const idleTier = (watch: Watch) =>
  Effect.gen(function*() {
    const { inspector } = watch
    const { config, session } = watch
    const bound = watch.idleMs ?? config.idleSilenceMs
    while (true) {
      const changed = session.activity.version
      const markers = session.shell.since(watch.baseline)
      const running = session.nonce !== undefined &&
        (markers.length === 0 ? watch.runningAtStart : markers[markers.length - 1]!.kind === "C")
      const allowed = !running || config.idleWhileRunning || watch.idleMs !== undefined || !inspector.exact
      const pendingPrompt = promptAfter(markers) !== undefined
      const wait = bound + (pendingPrompt ? config.handoffGraceMs : 0)
      const silentFor = Date.now() - Math.max(session.activity.lastOutputAt, watch.writtenAt)
      if (allowed && silentFor >= wait) {
        return { reason: "inferred_idle", end: session.emulator.cursor() } satisfies Settled
      }
      yield* changeOrSleep(session, changed, allowed ? wait - silentFor : config.pollIntervalMs * 4)
    }
  })

const timeoutTier = (watch: Watch) =>
  Effect.sleep(Duration.millis(Math.max(0, watch.writtenAt + watch.timeoutMs - Date.now()))).pipe(
    Effect.map((): Settled => ({ reason: "timeout", end: watch.session.emulator.cursor() }))
  )

const exitTier = (watch: Watch) =>
  Deferred.await(watch.session.drained).pipe(
    Effect.map((): Settled => ({ reason: "session_exit", end: watch.session.emulator.cursor() }))
  )

const cancelledAt = (watch: Watch): Settled => ({
  reason: "timeout",
  end: watch.session.emulator.cursor(),
  cancelled: true
})

const cancelledLook = (watch: Watch): PromptLook => ({ _tag: "cancelled", settled: cancelledAt(watch) })

/** A cancel of the send, as a tier: it ends the race with `Settled.cancelled`. */
const cancelTier = (watch: Watch, cancel: CancelSignal) => Effect.map(cancel.await, () => cancelledAt(watch))

/**
 * The readiness race: every tier runs as its own fiber; the first decisive one wins and the others are
 * interrupted. A shell's quick command is settled before the race (`promptFirst`), which then starts
 * only when that could not decide.
 */
export const settle = (watch: Watch): Effect.Effect<Settled> => {
  const progress: PromptProgress = { rebased: false }
  const first = watch.session.nonce !== undefined && !watch.runningAtStart && watch.lineOpen !== true
  const race = (): Effect.Effect<Settled> => {
    const tiers: Array<Effect.Effect<Settled>> = [
      exitTier(watch),
      timeoutTier(watch),
      idleTier(watch),
      stdinTier(watch, { probeAtOnce: first })
    ]
    if (watch.session.nonce !== undefined) tiers.unshift(promptTier(watch, progress))
    if (watch.cancel !== undefined) tiers.unshift(cancelTier(watch, watch.cancel))
    return Effect.raceAll(tiers)
  }
  if (!first) return race()
  return Effect.flatMap(
    promptFirst(watch, progress),
    (settled) => settled !== undefined ? Effect.succeed(settled) : race()
  )
}

/**
 * The race of a background send: it ends only when the shell's prompt is back, the session ends, or its
 * explicit deadline passes. Meanwhile the `stdin_read` tier keeps telling whether the program waits for
 * input (`onWaiting`), re-armed after every change of output.
 */
export const settleBackground = (
  watch: Watch,
  onWaiting: (waiting: boolean) => void
): Effect.Effect<Settled> => {
  const monitor = Effect.gen(function*() {
    let current = watch
    while (true) {
      yield* stdinTier(current)
      onWaiting(true)
      yield* watch.session.activity.change(watch.session.activity.version)
      onWaiting(false)
      current = {
        ...watch,
        before: undefined,
        written: 0,
        bytesAtWrite: watch.session.activity.bytes,
        shellLine: false
      }
    }
  })
  const tiers: Array<Effect.Effect<Settled>> = [exitTier(watch), monitor]
  if (watch.session.nonce !== undefined) tiers.push(promptTier(watch, { rebased: false }))
  if (Number.isFinite(watch.timeoutMs)) tiers.push(timeoutTier(watch))
  return Effect.raceAll(tiers)
}
