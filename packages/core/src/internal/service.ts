import { Capture, Emulator, Keys, Paste, Utf8 } from "@agent-terminal/terminal"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import { identity } from "effect/Function"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import * as EnvPolicy from "../EnvPolicy.js"
import {
  CleanupFailed,
  DuplicateName,
  ForeignSession,
  InvalidInput,
  SendActive,
  SessionExited,
  SessionNotFound,
  SignalRefused,
  SpawnFailed
} from "../Errors.js"
import type { OwnerId } from "../Ids.js"
import { SessionId } from "../Ids.js"
import { ProcessInspector } from "../ProcessInspector.js"
import type { ExitStatus } from "../PtyBackend.js"
import { PtyBackend } from "../PtyBackend.js"
import type { CancelResult, PtyService } from "../PtyService.js"
import * as Sandbox from "../Sandbox.js"
import type { OpenRequest, ReadRequest, SendRequest, SendResult, SessionInfo, SignalName } from "../Session.js"
import { ShellDialect } from "../ShellDialect.js"
import { TaskRuntime } from "../TaskRuntime.js"
import { TerminalSettings } from "../TerminalConfig.js"
import type { WatchOptions } from "../Watch.js"
import { interruptForeground as interruptSend } from "./interrupt.js"
import type { Settled, Watch } from "./readiness.js"
import { settle, settleBackground } from "./readiness.js"
import type { SendProgress, SessionRuntime } from "./session.js"
import { Activity, CancelSignal, makeEmulator, makeNonce, SendDone, startReader, statusOf } from "./session.js"
import { ShellState } from "./shellState.js"
import { Watchers } from "./watchers.js"

/** Effect's own tracer, in place unless a program installs another: its spans are seen by no exporter. */
const builtInTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * Wait for `effect` at most `ms`, then go on either way. Made interruptible so that the timeout can end it
 * inside a finalizer too (a close runs in finalizers), where the wait would otherwise never time out.
 */
const waitAtMost = (ms: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  effect.pipe(Effect.interruptible, Effect.timeout(ms), Effect.ignore)

/** What `uninterruptibleMask` hands its body: makes a part of it interruptible again. */
type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

type Entry =
  | { readonly _tag: "opening"; readonly owner: OwnerId; readonly name: string }
  | { readonly _tag: "open"; readonly runtime: SessionRuntime }

const CLOSED_MEMORY = 1024
/** How long a close waits for the output to drain and a waiting send to settle before it moves on. */
const RELEASE_GRACE_MS = 2_000

const nameOf = (entry: Entry) => entry._tag === "opening" ? entry.name : entry.runtime.name
const ownerOf = (entry: Entry) => entry._tag === "opening" ? entry.owner : entry.runtime.owner

/**
 * The first line of a capture that began at the write is the line being typed: its echo (or nothing, when
 * the program turned echo off, as a password prompt does). Drop it when the input was submitted.
 */
const stripEcho = (output: string, request: SendRequest): string => {
  const text = request.text ?? request.paste
  const submitted = request.text !== undefined ? request.submit !== false : request.submit === true
  if (text === undefined || !submitted) return output
  const newline = output.indexOf("\n")
  const first = newline < 0 ? output : output.slice(0, newline)
  const typed = text.split(/\r?\n|\r/)[0] ?? ""
  if (first.trim() !== "" && first !== typed) return output
  return newline < 0 ? "" : output.slice(newline + 1)
}

/**
 * The bytes of a send. `text` is typed as its exact UTF-8 (every code point, ≥ U+0080 too, goes out as its
 * UTF-8 bytes, unchanged), then Enter unless `submit` is false; one trailing newline of a submitted text is
 * that Enter. A text of several lines, for a shell reading its command line (`shellReading`) with
 * bracketed paste on (bash 5.2's readline), goes as one bracketed paste (then Enter when submitted): the
 * shell takes the lines as one command line and runs them as one unit; none of them runs early, and they
 * never meet a continuation prompt line by line. `keys` are named keys (arrows per the application-cursor
 * mode); `paste` is bracketed when the program enabled bracketed paste.
 */
const encodeInput = (
  request: SendRequest,
  modes: Emulator.Modes,
  shellReading = false
): Either.Either<string, InvalidInput> => {
  const given = [request.text, request.keys, request.paste].filter((value) => value !== undefined).length
  if (given === 0) {
    return Either.left(new InvalidInput({ field: "text", reason: "give one of text, keys or paste" }))
  }
  if (given > 1) {
    return Either.left(new InvalidInput({ field: "text", reason: "give only one of text, keys or paste per send" }))
  }
  if (request.keys !== undefined) {
    if (request.keys.length === 0) {
      return Either.left(new InvalidInput({ field: "keys", reason: "is empty" }))
    }
    return Keys.encodeKeys(request.keys, { applicationCursor: modes.applicationCursor }).pipe(
      Either.mapLeft((error) => new InvalidInput({ field: "keys", reason: error.message })),
      Either.map((bytes) => request.submit === true ? `${bytes}\r` : bytes)
    )
  }
  if (request.paste !== undefined) {
    const pasted = Paste.encodePaste(request.paste, { bracketed: modes.bracketedPaste })
    return Either.right(request.submit === true ? `${pasted}\r` : pasted)
  }
  const submit = request.submit !== false
  const text = submit ? request.text!.replace(/\r?\n$/, "") : request.text!
  const enter = submit ? "\r" : ""
  if (shellReading && modes.bracketedPaste && /[\r\n]/.test(text)) {
    return Either.right(`${Paste.encodePaste(text, { bracketed: true })}${enter}`)
  }
  return Either.right(`${text}${enter}`)
}

/** Input without Enter, Ctrl-C or Ctrl-D (a bracketed paste's inside aside) leaves a command line open. */
const leavesLineOpen = (input: string): boolean => {
  let outside = input
  for (let start = outside.indexOf(Paste.pasteStart); start !== -1; start = outside.indexOf(Paste.pasteStart)) {
    const end = outside.indexOf(Paste.pasteEnd, start)
    if (end === -1) break
    outside = outside.slice(0, start) + outside.slice(end + Paste.pasteEnd.length)
  }
  return !["\r", "\n", "\x03", "\x04"].some((ends) => outside.includes(ends))
}

/**
 * One command line and Enter, nothing else: no other line break, no control character a line editor would
 * act on (a tab, for completion, is typed like any character).
 */
const singleLine = (input: string): boolean => {
  if (!input.endsWith("\r")) return false
  for (let i = 0; i < input.length - 1; i++) {
    const code = input.charCodeAt(i)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return false
  }
  return true
}

/** A submitted bracketed paste: the shell got it as one command line (see `encodeInput`). */
const sentAsUnit = (input: string): boolean => input.startsWith(Paste.pasteStart) && input.endsWith("\r")

/** What the model reads when a command sent as one unit was incomplete and has been discarded. */
const abandonedNote = "[nothing ran: the shell waited for more of this command (an unclosed quote, a heredoc " +
  "without its end line, an unfinished block), so it was discarded with Ctrl-C]"

/** What the model reads when a line left the shell at its continuation prompt (deliberately, perhaps). */
const continuationNote = "[the shell waits for the rest of this command at its continuation prompt: send the " +
  "rest, or keys [\"C-c\"] to drop it]"

/** How a send ended, as the result reports it (`abandoned`: an incomplete unit was discarded). */
type Outcome = Settled & { readonly abandoned?: boolean }

/** The output of a send whose program holds the screen and printed nothing before it. */
const fullScreenNote = "[a full-screen program holds the terminal: see screen]"

/**
 * A full-screen program holds the terminal: the alternate screen is on (vim, htop, less), or a program
 * waits for a key with application cursor keys set (a pager that keeps the main screen, `less -X`).
 */
const holdsScreen = (runtime: SessionRuntime, settled: Settled): boolean => {
  const modes = runtime.emulator.modes
  return modes.alternateScreen || (modes.applicationCursor && settled.reason === "stdin_read")
}

/** Fails as an interruption once the send is cancelled (raced against a wait that is not a listener). */
const cancelled = (cancel: CancelSignal): Effect.Effect<never> => Effect.zipRight(cancel.await, Effect.interrupt)

/** Build the service in the current scope; closing that scope closes every session. */
export const make: Effect.Effect<
  Context.Tag.Service<typeof PtyService>,
  never,
  | TerminalSettings
  | PtyBackend
  | ProcessInspector
  | ShellDialect
  | EnvPolicy.HostEnvironment
  | Sandbox.Sandbox
  | TaskRuntime
  | Scope.Scope
> = Effect.gen(function*() {
  const config = yield* TerminalSettings
  const backend = yield* PtyBackend
  const inspector = yield* ProcessInspector
  const dialect = yield* ShellDialect
  const tasks = yield* TaskRuntime
  const environment = yield* EnvPolicy.HostEnvironment
  const sandbox = yield* Sandbox.Sandbox
  const policies = new Map<OwnerId, Sandbox.Policy>()
  // Sessions live in a scope of their own, forked before the service's finalizer is added: closing the
  // service closes every session gracefully first (its reader still running, so its exit is seen), and only
  // then the scopes that hold them.
  const sessionsScope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  const sessions = new Map<SessionId, Entry>()
  const closed = new Map<SessionId, OwnerId>()
  let counter = 0

  const remember = (id: SessionId, owner: OwnerId) => {
    closed.set(id, owner)
    if (closed.size > CLOSED_MEMORY) closed.delete(closed.keys().next().value!)
  }

  const lookup = (owner: OwnerId, id: SessionId): Effect.Effect<SessionRuntime, SessionNotFound | ForeignSession> =>
    Effect.suspend((): Effect.Effect<SessionRuntime, SessionNotFound | ForeignSession> => {
      const entry = sessions.get(id)
      if (entry === undefined || entry._tag === "opening") {
        return Effect.fail(new SessionNotFound({ sessionId: id }))
      }
      if (entry.runtime.owner !== owner) return Effect.fail(new ForeignSession({ sessionId: id }))
      return Effect.succeed(entry.runtime)
    })

  const infoOf = (runtime: SessionRuntime): SessionInfo => ({
    sessionId: runtime.id,
    name: runtime.name,
    type: runtime.type,
    pid: runtime.process.pid,
    status: statusOf(runtime),
    cwd: runtime.cwd,
    containment: runtime.process.containment,
    busy: runtime.activeTask !== undefined
  })

  const watchFor = (
    runtime: SessionRuntime,
    capture: Emulator.Capture,
    options: {
      readonly timeoutMs: number
      readonly idleMs: number | undefined
      readonly before: Watch["before"]
      readonly written: number
      readonly bytesAtWrite: number
      readonly baseline: number
      readonly runningAtStart: boolean
      readonly lineOpen?: boolean
      readonly shellLine?: boolean
      readonly cancel?: CancelSignal | undefined
    }
  ): Watch => ({
    session: runtime,
    inspector,
    config,
    promptText: dialect.promptText,
    writtenAt: Date.now(),
    capture,
    ...options
  })

  const terminate = (runtime: SessionRuntime) =>
    runtime.process.terminate.pipe(
      Effect.tap((report) =>
        Effect.logDebug("session closed").pipe(
          Effect.annotateLogs({
            sessionId: runtime.id,
            containment: report.containment,
            signalled: report.signalled
          })
        )
      )
    )

  /**
   * After the tree is gone: let the reader drain (and a send waiting on the session settle with
   * `session_exit`), close the session's scope, and then make sure nobody waits for an exit event that
   * will never come (a backend whose exit never arrived).
   */
  const release = (runtime: SessionRuntime) =>
    Effect.gen(function*() {
      yield* Deferred.await(runtime.drained).pipe(waitAtMost(RELEASE_GRACE_MS))
      if (!(yield* Deferred.isDone(runtime.drained))) {
        yield* Effect.logWarning("close: the session's exit never arrived; its waiters are released")
        runtime.exit ??= { exitCode: null, signal: "SIGKILL" }
        yield* Deferred.succeed(runtime.drained, runtime.exit)
        runtime.activity.notify()
      }
      const active = runtime.activeSend
      if (active !== undefined) {
        yield* active.done.await.pipe(waitAtMost(RELEASE_GRACE_MS))
      }
      yield* Scope.close(runtime.scope, Exit.void)
    })

  const open = Effect.fn("PtyService.open")(function*(owner: OwnerId, request: OpenRequest) {
    const type = request.type ?? (request.argv !== undefined ? "command" : "shell")
    if (type === "command" && (request.argv === undefined || request.argv.length === 0)) {
      return yield* new InvalidInput({
        field: "argv",
        reason: "a command session needs argv (the program and its arguments)"
      })
    }
    if (type === "shell" && request.argv !== undefined) {
      return yield* new InvalidInput({ field: "argv", reason: "a shell session takes no argv; use type \"command\"" })
    }
    counter++
    const name = request.name ?? `${type}-${counter}`
    for (const [id, entry] of sessions) {
      if (ownerOf(entry) === owner && nameOf(entry) === name) {
        return yield* new DuplicateName({ name, sessionId: id })
      }
    }
    const id = SessionId.make(`s-${makeNonce().slice(0, 12)}`)
    // The owner's policy is read in the same step that registers the opening session, so a concurrent
    // `configureSandbox` either sees this session or is seen by it.
    const policy = policies.get(owner) ?? sandbox.policy
    sessions.set(id, { _tag: "opening", owner, name })
    const confined = Sandbox.isConfined(policy.mode) && policy.workspace !== undefined
    const requestedCwd = request.cwd ?? (confined ? policy.workspace! : config.defaultCwd ?? environment.cwd)
    const cols = request.cols ?? config.cols
    const rows = request.rows ?? config.rows
    const nonce = type === "shell" ? makeNonce() : undefined
    const launch = nonce !== undefined
      ? dialect.launch({ shell: config.shell, nonce })
      : { file: request.argv![0]!, args: request.argv!.slice(1), env: {} }
    const scope = yield* Scope.fork(sessionsScope, ExecutionStrategy.sequential)
    const started = Effect.gen(function*() {
      const confinement = yield* sandbox.confine({
        file: launch.file,
        args: launch.args,
        cwd: requestedCwd,
        cols,
        rows,
        label: `${name}-${id}`,
        disposeGraceMs: config.disposeGraceMs,
        env: EnvPolicy.build({ host: environment.host, trusted: environment.trusted, integration: launch.env })
      }, policy)
      const cwd = confinement.request.cwd
      const process = yield* backend.spawn(confinement.request).pipe(
        Scope.extend(scope),
        Effect.flatMap(confinement.attach)
      )
      const shell = new ShellState()
      const replies: Array<string> = []
      const emulator = makeEmulator(config, { cols, rows }, nonce, shell, replies)
      yield* Scope.addFinalizer(scope, Effect.sync(() => emulator.dispose()))
      const terminal = { shellPid: process.pid, ttyPath: process.ttyPath }
      if (inspector.release !== undefined) yield* Scope.addFinalizer(scope, inspector.release(terminal))
      const runtime: SessionRuntime = {
        id,
        owner,
        name,
        type,
        cwd,
        nonce,
        process,
        terminal,
        emulator,
        scope,
        shell,
        activity: new Activity(),
        busy: false,
        drained: yield* Deferred.make<ExitStatus>(),
        exit: undefined,
        closing: false,
        activeTask: undefined,
        activeSend: undefined,
        watchers: new Watchers() // the live view (PtyService.watch)
      }
      yield* Scope.addFinalizer(scope, Effect.sync(() => runtime.watchers.end())) // the live view
      yield* startReader(runtime, replies).pipe(Scope.extend(scope))
      const capture = emulator.capture({ row: 0, col: 0 }, config.maxResultBytes)
      const settled = yield* settle(watchFor(runtime, capture, {
        timeoutMs: config.openTimeoutMs,
        idleMs: undefined,
        before: undefined,
        written: 0,
        bytesAtWrite: 0,
        baseline: 0,
        runningAtStart: false
      }))
      const motd = emulator.finish(capture, emulator.cursor())
      if (type === "shell" && settled.reason !== "prompt") {
        return yield* new SpawnFailed({
          command: launch.file,
          reason: settled.reason === "session_exit"
            ? `the shell exited before its first prompt (${JSON.stringify(Utf8.cutTail(motd.text, 512))})`
            : `no prompt within ${config.openTimeoutMs} ms (${JSON.stringify(Utf8.cutTail(motd.text, 512))})`
        })
      }
      return { runtime, motd: motd.text }
    })
    const exit = yield* Effect.exit(started)
    if (Exit.isFailure(exit)) {
      sessions.delete(id)
      yield* Scope.close(scope, exit)
      return yield* Effect.failCause(exit.cause)
    }
    const { motd, runtime } = exit.value
    sessions.set(id, { _tag: "open", runtime })
    return { ...infoOf(runtime), motd }
  })

  /** Probe, open the capture at the cursor, write: what both a foreground and a background send start with. */
  const begin = (
    runtime: SessionRuntime,
    request: SendRequest,
    input: string,
    timeoutMs: number,
    interruptible: Restore = identity,
    cancel?: CancelSignal
  ) =>
    Effect.gen(function*() {
      // A line for a shell at its prompt is proven consumed by the shell's own marker; anything else needs
      // the group's read counters from just before the write.
      const shellLine = runtime.type === "shell" && runtime.shell.state === "prompt" && singleLine(input)
      const probe = () => inspector.probe(runtime.terminal)
      const before = inspector.exact && !shellLine
        ? yield* interruptible(cancel === undefined ? probe() : Effect.raceFirst(probe(), cancelled(cancel)))
        : undefined
      // A cancel that won before the write: nothing is written, the send ends interrupted.
      if (cancel?.cancelled === true) return yield* Effect.interrupt
      const capture = runtime.emulator.capture(runtime.emulator.cursor(), config.maxResultBytes)
      const baseline = runtime.shell.seq
      const runningAtStart = runtime.shell.state === "running"
      const bytesAtWrite = runtime.activity.bytes
      const started = Date.now()
      yield* runtime.process.write(input)
      const watch = watchFor(runtime, capture, {
        timeoutMs,
        idleMs: request.idleMs,
        before,
        written: Utf8.byteLength(input),
        bytesAtWrite,
        baseline,
        runningAtStart,
        lineOpen: runtime.type === "shell" && leavesLineOpen(input),
        shellLine,
        cancel
      })
      return { watch, capture, baseline, started }
    })

  /** The send's output up to where it settled: the echo dropped, bounded. */
  const outputOf = (runtime: SessionRuntime, request: SendRequest, captured: Emulator.Captured, baseline: number) => {
    const rebased = runtime.shell.since(baseline).some((marker) => marker.kind === "C")
    return rebased ? captured.text : stripEcho(captured.text, request)
  }

  /**
   * A foreground send, run in its caller's fiber. Interrupting that fiber, or `cancel` (a signal its waits
   * listen to), stops it: before the write nothing is written; once the write has begun it lands whole,
   * and then the foreground group gets a real SIGINT before the send ends interrupted (so the send's slot
   * is held until the signal is delivered). It runs inside `exclusive`'s uninterruptible region: `restore`
   * makes its waits (the probe before the write, the readiness race) interruptible.
   */
  const runSend = (
    runtime: SessionRuntime,
    request: SendRequest,
    input: string,
    progress: SendProgress,
    cancel: CancelSignal,
    restore: Restore
  ) =>
    Effect.gen(function*() {
      const { baseline, capture, started, watch } = yield* begin(
        runtime,
        request,
        input,
        request.timeoutMs ?? config.timeoutMs,
        restore,
        cancel
      )
      progress.written = true
      const unit = runtime.type === "shell" && sentAsUnit(input)
      // Built only when needed: building the interruption (its span) costs more than a quick send's wait.
      const stop = Effect.suspend(() => {
        runtime.emulator.finish(capture)
        return interruptSend(runtime, inspector)
      }).pipe(
        Effect.tap((interrupted) =>
          Effect.sync(() => {
            progress.interrupted = interrupted
          })
        )
      )
      const outcome = yield* Effect.exit(restore(
        settle(watch).pipe(
          Effect.flatMap((first): Effect.Effect<Outcome> =>
            unit && first.continuation === true && first.cancelled !== true
              ? abandonLine(runtime, watch)
              : Effect.succeed(first)
          )
        )
      ))
      if (Exit.isFailure(outcome)) {
        // interrupted while it waited (a caller's timeout, a disconnect): the program gets its SIGINT first
        if (Cause.isInterruptedOnly(outcome.cause)) yield* stop
        return yield* Effect.failCause(outcome.cause)
      }
      const settled = outcome.value
      if (settled.cancelled === true) {
        yield* stop
        return yield* Effect.interrupt
      }
      const captured = runtime.emulator.finish(capture, endOf(runtime, settled))
      const output = outputOf(runtime, request, captured, baseline)
      const text = settled.abandoned === true
        ? abandonedNote
        : settled.continuation === true
        ? `${output}${output === "" ? "" : "\n"}${continuationNote}`
        : output
      return resultOf(runtime, settled, text, captured.truncated, Date.now() - started)
    })

  /**
   * A command sent as one unit left the shell at its continuation prompt, so it is incomplete: discard it
   * the way a person would, Ctrl-C (a real SIGINT to the terminal's foreground group, the shell; the
   * interrupt character when the group cannot be resolved), and wait for the prompt. Nothing of it ran, and
   * no half-typed command is left for the next send to complete by accident.
   */
  const abandonLine = (runtime: SessionRuntime, watch: Watch): Effect.Effect<Outcome> =>
    Effect.gen(function*() {
      const baseline = runtime.shell.seq
      const group = yield* inspector.foregroundGroup(runtime.terminal)
      yield* Option.isSome(group) ? runtime.process.signalGroup(group.value, "SIGINT") : runtime.process.write("\x03")
      const settled = yield* settle({ ...watch, baseline, runningAtStart: false, before: undefined })
      const outcome: Outcome = {
        reason: settled.reason,
        end: settled.end,
        continuation: true,
        abandoned: true,
        ...(settled.cancelled === true ? { cancelled: true } : {})
      }
      return outcome
    })

  /**
   * A program that holds the screen without the alternate screen (`less` as git starts it, `LESS=FRX`:
   * it sets application cursor keys and waits for a key): what is on the screen goes in `screen`, the
   * output keeps only what scrolled above it.
   */
  const endOf = (runtime: SessionRuntime, settled: Settled): Emulator.Position => {
    if (!holdsScreen(runtime, settled) || runtime.emulator.modes.alternateScreen) return settled.end
    const top = runtime.emulator.screenTop()
    return top.row < settled.end.row ? top : settled.end
  }

  /**
   * Run a foreground send in the session's one slot, in its caller's fiber, recorded in `activeSend` with
   * the signal a cancel raises (no fiber is forked per send); interrupting the caller (a timeout, a
   * disconnected request) stops it too. The slot is released only after the send has finished, its SIGINT
   * included.
   */
  const exclusive = <A, E>(
    runtime: SessionRuntime,
    run: (
      progress: SendProgress,
      cancel: CancelSignal,
      restore: Restore
    ) => Effect.Effect<A, E>
  ) =>
    // One uninterruptible region for the slot and the send (its waits are restored to interruptible): the
    // slot is released however the send ends, with fewer runtime operations than `ensuring` around a mask.
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend((): Effect.Effect<A, E | SendActive> => {
        if (runtime.busy) return Effect.fail(sendActive(runtime))
        runtime.busy = true
        const progress: SendProgress = { written: false, interrupted: undefined }
        const cancel = new CancelSignal()
        const done = new SendDone()
        runtime.activeSend = { cancel, progress, done }
        return Effect.flatMap(Effect.exit(run(progress, cancel, restore)), (exit) => {
          if (runtime.activeSend?.done === done) runtime.activeSend = undefined
          runtime.busy = false
          done.open()
          return exit
        })
      })
    )

  const sendActive = (runtime: SessionRuntime) =>
    new SendActive({ sessionId: runtime.id, ...(runtime.activeTask ? { taskId: runtime.activeTask } : {}) })

  /**
   * A background send: the session's send slot is taken before the task id exists and kept until the task
   * ends (or until the start fails), then the task runs until the prompt is back, reporting meanwhile
   * whether the program waits for input, and taking input through the task runtime.
   */
  const runBackground = (owner: OwnerId, runtime: SessionRuntime, request: SendRequest, input: string) =>
    Effect.suspend(() => {
      if (runtime.busy) return Effect.fail(sendActive(runtime))
      runtime.busy = true
      let handedOff = false
      return startBackground(owner, runtime, request, input, () => {
        handedOff = true
      }).pipe(
        Effect.onExit(() =>
          Effect.sync(() => {
            if (!handedOff) runtime.busy = false
          })
        )
      )
    })

  const startBackground = (
    owner: OwnerId,
    runtime: SessionRuntime,
    request: SendRequest,
    input: string,
    handOff: () => void
  ) =>
    Effect.gen(function*() {
      const { baseline, capture, started, watch } = yield* begin(
        runtime,
        request,
        input,
        request.timeoutMs ?? Number.POSITIVE_INFINITY
      )
      let waiting = false
      let began = false
      const run = Effect.suspend(() => {
        began = true
        return settleBackground(watch, (now) => {
          waiting = now
        })
      }).pipe(
        Effect.map((settled) => {
          const captured = runtime.emulator.finish(capture, endOf(runtime, settled))
          return resultOf(
            runtime,
            settled,
            outputOf(runtime, request, captured, baseline),
            captured.truncated,
            Date.now() - started
          )
        }),
        Effect.onInterrupt(() => interruptSend(runtime, inspector))
      )
      const taskId = yield* tasks.start(owner, {
        kind: "send",
        label: request.text ?? request.paste ?? (request.keys ?? []).join(" "),
        sessionId: runtime.id,
        run,
        output: () => outputOf(runtime, request, runtime.emulator.peek(capture), baseline),
        waitingForInput: () => waiting,
        input: (taskInput) => {
          const bytes = encodeInput(taskInput, runtime.emulator.modes)
          return Either.isLeft(bytes) ? Effect.fail(bytes.left) : runtime.process.write(bytes.right)
        },
        finalOutput: (result) => result.output,
        // Killed before its work began, the command was written but never interrupted: interrupt it now.
        onEnd: Effect.suspend(() => began ? Effect.void : Effect.asVoid(interruptSend(runtime, inspector))).pipe(
          Effect.ensuring(Effect.sync(() => {
            runtime.emulator.finish(capture)
            runtime.activeTask = undefined
            runtime.busy = false
          }))
        )
      })
      handOff()
      runtime.activeTask = taskId
      return {
        output: "",
        waitReason: "background",
        sessionStatus: statusOf(runtime),
        truncated: false,
        taskId,
        elapsedMs: Date.now() - started
      } satisfies SendResult
    })

  /**
   * The send's result: the output over the cap cut to its head and tail (code points intact), and, while a
   * full-screen program holds the terminal, the screen as a person sees it instead of a byte stream.
   */
  const resultOf = (
    runtime: SessionRuntime,
    settled: Outcome,
    text: string,
    truncated: boolean,
    elapsedMs: number
  ): SendResult => {
    const cut = Capture.fit(text, config.maxResultBytes)
    const screen = holdsScreen(runtime, settled) ? runtime.emulator.screen() : undefined
    return {
      output: screen !== undefined && cut.text.trim() === "" ? fullScreenNote : cut.text,
      waitReason: settled.reason,
      ...(settled.exitCode !== undefined && settled.abandoned !== true ? { exitCode: settled.exitCode } : {}),
      sessionStatus: statusOf(runtime),
      ...(screen !== undefined ? { screen: { rows: screen.rows, cursor: screen.cursor } } : {}),
      truncated: truncated || cut.truncated,
      ...(settled.continuation === true ? { continuation: true } : {}),
      elapsedMs
    }
  }

  /**
   * The hot path's span is taken whenever a tracer that exports spans is installed (an OpenTelemetry layer),
   * without a stack trace per call (as `Effect.fn` and a plain `withSpan` take one: it cost more than the rest
   * of the span). Under Effect's built-in tracer, whose spans reach no one, it is skipped: it was a third of
   * a send's Effect operations (docs/performance.md).
   */
  const send = (owner: OwnerId, id: SessionId, request: SendRequest) =>
    Effect.tracerWith((tracer) =>
      tracer === builtInTracer
        ? sendUntraced(owner, id, request)
        : Effect.withSpan(sendUntraced(owner, id, request), "PtyService.send", sendSpan)
    )

  const sendSpan = { captureStackTrace: false } as const

  const sendUntraced = Effect.fnUntraced(function*(owner: OwnerId, id: SessionId, request: SendRequest) {
    const runtime = yield* lookup(owner, id)
    if (runtime.exit !== undefined) {
      return yield* new SessionExited({ sessionId: id, exitCode: runtime.exit.exitCode, signal: runtime.exit.signal })
    }
    const shellReading = runtime.type === "shell" && runtime.shell.state !== "running"
    const input = encodeInput(request, runtime.emulator.modes, shellReading)
    if (Either.isLeft(input)) return yield* input.left
    if (request.background === true) return yield* runBackground(owner, runtime, request, input.right)
    return yield* exclusive(
      runtime,
      (progress, cancel, restore) => runSend(runtime, request, input.right, progress, cancel, restore)
    )
  })

  const cancel = Effect.fn("PtyService.cancel")(function*(owner: OwnerId, id: SessionId) {
    const runtime = yield* lookup(owner, id)
    const active = runtime.activeSend
    if (active !== undefined) {
      active.cancel.cancel()
      yield* active.done.await
      const { interrupted, written } = active.progress
      return {
        cancelled: true,
        written,
        discarded: interrupted?.discarded ?? 0,
        signalled: interrupted?.signalled ?? []
      } satisfies CancelResult
    }
    const taskId = runtime.activeTask
    if (taskId !== undefined) {
      yield* tasks.kill(owner, taskId).pipe(Effect.ignore)
      return { cancelled: true, written: true, discarded: 0, signalled: [], taskId } satisfies CancelResult
    }
    return { cancelled: false, written: false, discarded: 0, signalled: [] } satisfies CancelResult
  })

  const read = Effect.fn("PtyService.read")(function*(owner: OwnerId, id: SessionId, request: ReadRequest) {
    const runtime = yield* lookup(owner, id)
    const page = runtime.emulator.page({
      ...(request.offset !== undefined ? { offset: request.offset } : {}),
      ...(request.count !== undefined ? { count: request.count } : {}),
      maxBytes: config.maxReadBytes
    })
    if (Either.isLeft(page)) {
      return yield* new InvalidInput({ field: page.left.field, reason: page.left.reason })
    }
    const { lineBegin, lineEnd, text, totalLines, truncated } = page.right
    return { text, totalLines, lineBegin, lineEnd, truncated }
  })

  const signal = Effect.fn("PtyService.signal")(function*(owner: OwnerId, id: SessionId, name: SignalName) {
    const runtime = yield* lookup(owner, id)
    if (runtime.exit !== undefined) {
      return yield* new SessionExited({ sessionId: id, exitCode: runtime.exit.exitCode, signal: runtime.exit.signal })
    }
    const group = yield* inspector.foregroundGroup(runtime.terminal)
    if (Option.isNone(group)) {
      return yield* new SignalRefused({
        sessionId: id,
        signal: name,
        reason: "the terminal's foreground process group cannot be resolved here; no pid is guessed"
      })
    }
    if (name === "SIGKILL" && group.value === runtime.process.pid) {
      return yield* new SignalRefused({
        sessionId: id,
        signal: name,
        reason: "SIGKILL would kill the session's shell itself; close the session instead (terminal_close)"
      })
    }
    const delivered = yield* runtime.process.signalGroup(group.value, name)
    return { delivered, targetPgid: group.value }
  })

  const close = Effect.fn("PtyService.close")(function*(owner: OwnerId, id: SessionId) {
    const entry = sessions.get(id)
    if (entry === undefined) {
      const previous = closed.get(id)
      if (previous === undefined) return yield* new SessionNotFound({ sessionId: id })
      if (previous !== owner) return yield* new ForeignSession({ sessionId: id })
      return { sessionId: id, outcome: "closed" as const, survivors: [] }
    }
    if (ownerOf(entry) !== owner) return yield* new ForeignSession({ sessionId: id })
    if (entry._tag === "opening" || entry.runtime.closing) {
      return { sessionId: id, outcome: "already-closing" as const, survivors: [] }
    }
    const runtime = entry.runtime
    runtime.closing = true
    const report = yield* terminate(runtime).pipe(Effect.onError(() => Effect.sync(() => runtime.closing = false)))
    yield* release(runtime)
    sessions.delete(id)
    remember(id, owner)
    return { sessionId: id, outcome: "closed" as const, survivors: report.survivors }
  })

  /** The session as listed, with the shell's working directory now where the inspector can tell. */
  const listed = (runtime: SessionRuntime) =>
    (inspector.cwd === undefined || runtime.exit !== undefined
      ? Effect.succeed(Option.none<string>())
      : inspector.cwd(runtime.process.pid)).pipe(
        Effect.map((cwd): SessionInfo => ({ ...infoOf(runtime), cwd: Option.getOrElse(cwd, () => runtime.cwd) }))
      )

  const list = (owner: OwnerId) =>
    Effect.forEach(
      [...sessions.values()].flatMap((entry) =>
        entry._tag === "open" && entry.runtime.owner === owner && !entry.runtime.closing ? [entry.runtime] : []
      ),
      listed
    )

  const sandboxOf = (owner: OwnerId) => Effect.sync(() => policies.get(owner) ?? sandbox.policy)

  const configureSandbox = Effect.fn("PtyService.configureSandbox")(
    function*(owner: OwnerId, requested: Sandbox.Policy) {
      const policy = yield* Sandbox.validate(requested)
      const current = policies.get(owner) ?? sandbox.policy
      if (Sandbox.equivalent(current, policy)) return
      const held = [...sessions.values()].filter((entry) => ownerOf(entry) === owner).length
      if (held > 0) {
        return yield* new Sandbox.SandboxInUse({
          owner,
          current: current.mode,
          requested: policy.mode,
          sessions: held
        })
      }
      policies.set(owner, policy)
    }
  )

  const closeOwner = (owner: OwnerId) =>
    Effect.forEach(
      [...sessions.entries()].filter(([, entry]) => ownerOf(entry) === owner).map(([id]) => id),
      (id) => close(owner, id).pipe(Effect.catchAll((error) => Effect.logWarning("close failed", error))),
      { discard: true }
    )

  yield* Effect.addFinalizer(() =>
    Effect.forEach(
      [...sessions.values()].flatMap((entry) => entry._tag === "open" ? [entry.runtime] : []),
      (runtime) =>
        terminate(runtime).pipe(
          Effect.catchAll((error: CleanupFailed) => Effect.logWarning("close failed", error)),
          Effect.zipRight(release(runtime))
        ),
      { discard: true }
    )
  )

  // The live view: the reader feeds the session's watchers (session.ts), the snapshot is the emulator's.
  const watch = (owner: OwnerId, id: SessionId, options?: WatchOptions) =>
    Effect.flatMap(
      lookup(owner, id),
      (runtime) => runtime.watchers.watch(runtime, () => statusOf(runtime), options)
    )

  return {
    open,
    send,
    read,
    signal,
    cancel,
    close,
    list,
    closeOwner,
    configureSandbox,
    sandboxOf,
    watch
  } satisfies Context.Tag.Service<typeof PtyService>
})
