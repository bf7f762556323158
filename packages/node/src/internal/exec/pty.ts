/**
 * Pty mode: the command runs on its own pseudo-terminal through the `PtyBackend` (the same backend,
 * containment and sandbox confinement as sessions), read by a terminal emulator so the output is what a
 * person would see. No shell integration: the run ends when its program exits. While it is silent, the
 * process inspector tells whether it waits reading the terminal.
 */
import { Errors, type Exec, type ProcessInspector, type PtyBackend } from "@agent-terminal/core"
import { Capture, Emulator, Keys, Paste, Utf8 } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { Activity } from "./deadline.js"
import type { Started, Transcript } from "./process.js"
import { inputPayload, readPending, waitAtMost } from "./process.js"

/** How long without output before the inspector is asked whether the program waits for input. */
const PROBE_AFTER_SILENCE_MS = 250
/** Probes back off while nothing changes (a quiet server costs one probe every few seconds), up to this. */
const PROBE_MAX_INTERVAL_MS = 2000

/** The options of one pty-mode run. */
export interface PtyOptions {
  readonly budget: number
  readonly scrollbackLines: number
  readonly scrollbackMaxBytes: number
  readonly cols: number
  readonly rows: number
}

/** The views of an emulator's output: the whole run from its first row, and what is new since the last look. */
const emulatorTranscript = (emulator: Emulator.Emulator, budget: number): Transcript => {
  const whole = emulator.capture({ row: 0, col: 0 }, budget)
  let recent = emulator.capture({ row: 0, col: 0 }, budget)
  let seenLine = ""
  let disposed = false
  const bounded = (captured: Emulator.Captured) => {
    // the capture's own omission line (the middle of a long run) absorbs this cut: one line counts it all
    const cut = Capture.fit(captured.text, budget)
    return { text: cut.text, truncated: captured.truncated || cut.truncated }
  }
  return {
    full: () => disposed ? { text: "", truncated: false } : bounded(emulator.peek(whole)),
    takeNew: () => {
      if (disposed) return { text: "", truncated: false }
      const cursor = emulator.cursor()
      const captured = emulator.finish(recent)
      // the next look starts at the beginning of the cursor's row: a line still being written (or redrawn
      // with `\r`) is returned again, whole, minus what was already returned of it
      recent = emulator.capture({ row: cursor.row, col: 0 }, budget)
      let text = captured.text
      if (seenLine !== "" && text.startsWith(seenLine)) text = text.slice(seenLine.length)
      const lastBreak = captured.text.lastIndexOf("\n")
      seenLine = cursor.col > 0 ? captured.text.slice(lastBreak + 1) : ""
      return bounded({ ...captured, text })
    },
    page: (request) => emulator.page(request),
    watch: (target) => {
      if (disposed) return { check: () => undefined, close: () => {} }
      const top = emulator.screenTop()
      const seed = top.row > 0 ? emulator.peek(whole, top).text : ""
      const found = emulator.watch(top.row > 0 ? top : { row: 0, col: 0 }, target, { seed })
      return { check: () => found.check(), close: () => emulator.unwatch(found) }
    },
    dispose: () => {
      if (disposed) return
      disposed = true
      emulator.dispose()
    }
  }
}

/** Start a confined spawn request on a pty; closing the scope ends its tree. */
export const spawnPty = (
  backend: PtyBackend.PtyBackend["Type"],
  inspector: ProcessInspector.ProcessInspector["Type"],
  request: PtyBackend.SpawnRequest,
  attach: (
    process: PtyBackend.PtyProcess
  ) => Effect.Effect<PtyBackend.PtyProcess, Errors.SpawnFailed | Errors.SandboxUnavailable>,
  options: PtyOptions
): Effect.Effect<
  Started,
  Errors.SpawnFailed | Errors.SandboxUnavailable | Errors.InvalidInput | Errors.LimitReached,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const process = yield* backend.spawn(request).pipe(Effect.flatMap(attach))
    const replies: Array<string> = []
    const emulator = new Emulator.Emulator({
      cols: options.cols,
      rows: options.rows,
      scrollbackLines: options.scrollbackLines,
      scrollbackMaxBytes: options.scrollbackMaxBytes
    }, { onReply: (data) => replies.push(data), onMarker: () => {} })
    const transcript = emulatorTranscript(emulator, options.budget)
    // the run's activity on the fiber's clock, read in the callbacks below
    const clock = yield* Effect.clock
    const activity = new Activity(clock.unsafeCurrentTimeMillis())
    const drained = yield* Deferred.make<PtyBackend.ExitStatus>()
    let waiting = false
    let frozen = false

    const reader = Effect.gen(function*() {
      while (true) {
        const [chunks, done] = yield* process.output.takeAll
        if (!frozen) { for (const chunk of chunks) emulator.write(chunk) }
        if (replies.length > 0) {
          const answer = replies.join("")
          replies.length = 0
          yield* process.write(answer)
        }
        if (chunks.length > 0 && !frozen) {
          waiting = false
          activity.notify(clock.unsafeCurrentTimeMillis())
        }
        if (done) return
      }
    })
    yield* reader.pipe(
      Effect.catchAllCause(() => Effect.void),
      Effect.zipRight(process.exited),
      Effect.flatMap((status) => Deferred.succeed(drained, status)),
      Effect.zipRight(Effect.sync(() => {
        waiting = false
        activity.notify(undefined)
      })),
      Effect.forkScoped
    )

    if (inspector.exact) {
      const terminal = { shellPid: process.pid, ttyPath: process.ttyPath }
      const watch = Effect.gen(function*() {
        let interval = PROBE_AFTER_SILENCE_MS
        let seen = activity.version
        while (!(yield* Deferred.isDone(drained))) {
          yield* Effect.sleep(interval)
          if (activity.version !== seen) interval = PROBE_AFTER_SILENCE_MS
          seen = activity.version
          if (clock.unsafeCurrentTimeMillis() - activity.lastAt < PROBE_AFTER_SILENCE_MS) continue
          const probe = yield* inspector.probe(terminal)
          const now = probe._tag === "Snapshot" && probe.waitingOnTerminal
          if (now !== waiting) {
            waiting = now
            activity.notify(undefined)
            seen = activity.version
          } else {
            interval = Math.min(interval * 2, PROBE_MAX_INTERVAL_MS)
          }
        }
      })
      yield* watch.pipe(Effect.catchAllCause(() => Effect.void), Effect.forkScoped)
    }

    const input = (request: Exec.ExecInput) =>
      Effect.gen(function*() {
        const payload = inputPayload(request)
        if (payload._tag === "invalid") return yield* new Errors.InvalidInput({ field: "text", reason: payload.reason })
        const modes = emulator.modes
        let bytes = ""
        if (payload._tag === "text") bytes = payload.text
        if (payload._tag === "paste") bytes = Paste.encodePaste(payload.text, { bracketed: modes.bracketedPaste })
        if (payload._tag === "keys") {
          const keys = Keys.encodeKeys(payload.keys, { applicationCursor: modes.applicationCursor })
          if (Either.isLeft(keys)) return yield* new Errors.InvalidInput({ field: "keys", reason: keys.left.message })
          bytes = keys.right
        }
        if (request.submit === true) bytes += "\r"
        if (request.eof === true) bytes += "\x04"
        if (yield* Deferred.isDone(drained)) {
          return yield* new Errors.InvalidInput({ field: "taskId", reason: "the program has exited" })
        }
        if (bytes !== "") yield* process.write(bytes)
        waiting = false
        activity.notify(clock.unsafeCurrentTimeMillis())
        return Utf8.byteLength(bytes)
      })

    const terminate = process.terminate.pipe(
      Effect.catchTag("CleanupFailed", (error) =>
        Effect.succeed<PtyBackend.TeardownReport>({
          containment: process.containment,
          signalled: 0,
          survivors: error.survivors
        }))
    )

    yield* Effect.addFinalizer((exit) => Exit.isFailure(exit) ? Effect.sync(() => transcript.dispose()) : Effect.void)

    return {
      mode: "pty",
      pid: process.pid,
      transcript,
      activity,
      ended: Deferred.await(drained),
      drained: Deferred.await(drained).pipe(waitAtMost(1000)),
      input,
      freeze: readPending.pipe(Effect.zipRight(Effect.sync(() => {
        frozen = true
      }))),
      terminate,
      waitingForInput: () => waiting
    } satisfies Started
  })
