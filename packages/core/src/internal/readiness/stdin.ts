/**
 * The `stdin_read` tier: the terminal's foreground group is blocked reading this terminal, with evidence
 * that it consumed the input since the write (`StdinEvidence`), confirmed once its output is in.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as StdinEvidence from "../../StdinEvidence.js"
import { Cadence, onAfterPoll, type Timers } from "../clock/wake.js"
import { drainOutput } from "../session/reader.js"
import type { SessionRuntime } from "../session/runtime.js"
import { commandStart } from "../session/shellState.js"
import type { Decisive, Watch } from "./settled.js"

/**
 * A send whose output passed this many bytes is a flood: its pauses no longer call for a probe, which comes
 * `pollIntervalMs` after the last one. A program settling into its read prints little and is re-probed at each
 * pause; a flood pauses for an event-loop turn every ten milliseconds or so (the reader is faster than the
 * program), and each pause cost a `/proc` probe of the whole foreground group (~0.5 ms: 14 % of the CPU of a
 * flood of 100-byte lines).
 */
const FLOOD_BYTES = 64 * 1024

/**
 * A program that is still writing is not waiting for input: before a probe, let output that keeps arriving
 * finish (one event-loop turn without new bytes), but probe at the latest at `until` — and, once the output
 * passed `floodFrom` bytes, at `until` only: a flood, and a program that prints continuously while it reads,
 * cost one `/proc` probe per `pollIntervalMs`, not one per pause.
 */
const outputPause = (session: SessionRuntime, timers: Timers, until: number, floodFrom: number) =>
  Effect.async<void>((resume) => {
    // one fiber wake for the whole pause: the turns are counted with callbacks, not a fiber resumed per turn
    let cancel = () => {}
    const done = () => resume(Effect.void)
    const check = (bytes: number) => {
      if (bytes > floodFrom) {
        cancel = timers.after(until - timers.now(), done)
        return
      }
      cancel = onAfterPoll(() => {
        if (session.activity.bytes === bytes || timers.now() >= until) done()
        else check(session.activity.bytes)
      })
    }
    if (timers.now() >= until) return done()
    check(session.activity.bytes)
    return Effect.sync(() => cancel())
  })

/**
 * The shell itself reading its command line is the prompt tier's to judge (it knows the exit status and
 * the controlled prompt); the shell reading for a builtin such as `read` while a command runs is a wait, and
 * so is the shell reading on after keys that left its line open (no prompt will come for those).
 */
const shellAtPrompt = (watch: Watch, pgid: number): boolean => {
  if (watch.session.nonce === undefined || pgid !== watch.session.process.pid || watch.kind._tag === "LeftOpen") {
    return false
  }
  const markers = watch.session.shell.since(watch.baseline)
  return markers[markers.length - 1]?.kind !== "C"
}

/**
 * The probe cadence while nothing is printed: 1 ms, doubling, at most `pollIntervalMs` (started over when
 * output moves). It reaches the cap within 1 + 2 + … + 32 ms, so the first probes on a timer come well
 * before `exactProbeAfterMs`.
 */
export const probeCadence = (pollIntervalMs: number): Schedule.Schedule<unknown> =>
  Schedule.union(Schedule.exponential("1 millis"), Schedule.spaced(pollIntervalMs))

/** The first wait after the write, before any probe: nothing can have consumed the input sooner. */
const FIRST_PROBE_MS = 1

const stdinRead = (session: SessionRuntime): Decisive => ({ _tag: "StdinRead", end: session.emulator.cursor() })

/**
 * `stdin_read`: the foreground group is blocked reading this terminal, with evidence that it consumed
 * input since the write. Probes once output pauses (re-probing quickly while the program settles into its
 * read; during a flood at most every `pollIntervalMs`) and, while nothing is printed, on `probeCadence`,
 * woken early by output. Nothing polls between sends.
 */
export const stdinTier = (watch: Watch, options: { readonly probeAtOnce?: boolean } = {}): Effect.Effect<Decisive> =>
  Effect.gen(function*() {
    const { inspector } = watch
    if (!inspector.exact) return yield* Effect.never
    const { config, session, timers } = watch
    let evidence = StdinEvidence.initial(
      watch.before ?? { _tag: "Miss", reason: "no probe before the write" },
      watch.written
    )
    const cadence = new Cadence(probeCadence(config.pollIntervalMs), timers)
    let seenBytes = session.activity.bytes
    let probedAt = 0
    // Right after the write nothing can have consumed it yet (the write itself is still on its way): the
    // first probe waits for output, or for the first step of the cadence (unless that wait is behind us).
    if (options.probeAtOnce !== true) yield* session.activity.changeOrSleep(session.activity.version, FIRST_PROBE_MS)
    while (true) {
      if (session.activity.bytes !== seenBytes) {
        yield* outputPause(session, timers, probedAt + config.pollIntervalMs, watch.bytesAtWrite + FLOOD_BYTES)
      }
      const changed = session.activity.version
      probedAt = timers.now()
      const probe = yield* inspector.probe(session.terminal)
      if (watch.kind._tag === "Line" && commandStart(session.shell.since(watch.baseline)) !== undefined) {
        evidence = StdinEvidence.witness(evidence, "line_taken")
      }
      if (watch.signalled === true && session.activity.bytes > watch.bytesAtWrite) {
        evidence = StdinEvidence.witness(evidence, "signal_handled")
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
          const sinceAnswers = () => timers.now() - session.activity.repliedAt
          for (let round = 0; round < 10 && sinceAnswers() < config.pollIntervalMs; round++) {
            yield* timers.sleep(config.pollIntervalMs - sinceAnswers())
            yield* drainOutput(session)
          }
          // No answer beyond the echo of the input: the program may be acting on it without printing (or
          // exiting): give it a moment before trusting the wait.
          if (session.activity.bytes - watch.bytesAtWrite <= watch.written + 2) {
            yield* timers.sleep(config.pollIntervalMs)
          }
          const again = yield* inspector.probe(session.terminal)
          if (again._tag === "Snapshot" && again.pgid === probe.pgid && again.waitingOnTerminal) {
            return stdinRead(session)
          }
          continue
        }
        // The shell itself waits: a builtin such as `read` — or the prompt of the command that just ended,
        // whose markers are still on their way. Only a quiet moment with no new marker tells them apart, and
        // only once what the shell printed before its read is in: it may still sit in the kernel, and after
        // a stall of the event loop the quiet moment's timer runs before the turn that reads it.
        if (!(yield* session.activity.quietFor(changed, config.pollIntervalMs))) continue
        yield* drainOutput(session)
        if (session.activity.version === changed && !shellAtPrompt(watch, probe.pgid)) return stdinRead(session)
        continue
      }
      // Output moved since the last probe: the cadence starts over (the next probe within 1 ms, or at the next
      // pause). Not at once: a probe a few microseconds after this one sees what this one saw.
      if (session.activity.bytes !== seenBytes) cadence.reset()
      seenBytes = session.activity.bytes
      const delay = yield* cadence.next()
      yield* session.activity.changeOrSleep(changed, delay ?? config.pollIntervalMs)
    }
  })
