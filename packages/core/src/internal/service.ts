import { Emulator, Keys, Paste, Utf8 } from "@agent-terminal/terminal"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
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
import type { PtyService } from "../PtyService.js"
import type { OpenRequest, ReadRequest, SendRequest, SendResult, SessionInfo, SignalName } from "../Session.js"
import { ShellDialect } from "../ShellDialect.js"
import { TerminalSettings } from "../TerminalConfig.js"
import type { Settled, Watch } from "./readiness.js"
import { settle } from "./readiness.js"
import type { SessionRuntime } from "./session.js"
import { Activity, makeEmulator, makeNonce, startReader, statusOf } from "./session.js"
import { ShellState } from "./shellState.js"

type Entry =
  | { readonly _tag: "opening"; readonly owner: OwnerId; readonly name: string }
  | { readonly _tag: "open"; readonly runtime: SessionRuntime }

const CLOSED_MEMORY = 1024

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

const encodeInput = (
  request: SendRequest,
  modes: Emulator.Modes
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
  const text = request.text!
  return Either.right(request.submit === false ? text : `${text}\r`)
}

/** Build the service in the current scope; closing that scope closes every session. */
export const make: Effect.Effect<
  Context.Tag.Service<typeof PtyService>,
  never,
  TerminalSettings | PtyBackend | ProcessInspector | ShellDialect | EnvPolicy.HostEnvironment | Scope.Scope
> = Effect.gen(function*() {
  const config = yield* TerminalSettings
  const backend = yield* PtyBackend
  const inspector = yield* ProcessInspector
  const dialect = yield* ShellDialect
  const environment = yield* EnvPolicy.HostEnvironment
  const serviceScope = yield* Effect.scope
  const context = yield* Effect.context<ProcessInspector>()
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
    }
  ): Watch => ({
    session: runtime,
    config,
    promptText: dialect.promptText,
    writtenAt: Date.now(),
    capture,
    ...options
  })

  const terminalOf = (runtime: SessionRuntime) => ({ shellPid: runtime.process.pid, ttyPath: runtime.process.ttyPath })

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
    sessions.set(id, { _tag: "opening", owner, name })
    const cwd = request.cwd ?? config.defaultCwd ?? environment.cwd
    const cols = request.cols ?? config.cols
    const rows = request.rows ?? config.rows
    const nonce = type === "shell" ? makeNonce() : undefined
    const launch = nonce !== undefined
      ? dialect.launch({ shell: config.shell, nonce })
      : { file: request.argv![0]!, args: request.argv!.slice(1), env: {} }
    const scope = yield* Scope.fork(serviceScope, ExecutionStrategy.sequential)
    const started = Effect.gen(function*() {
      const process = yield* backend.spawn({
        file: launch.file,
        args: launch.args,
        cwd,
        cols,
        rows,
        label: `${name}-${id}`,
        disposeGraceMs: config.disposeGraceMs,
        env: EnvPolicy.build({ host: environment.host, trusted: environment.trusted, integration: launch.env })
      }).pipe(Scope.extend(scope))
      const shell = new ShellState()
      const replies: Array<string> = []
      const emulator = makeEmulator(config, { cols, rows }, nonce, shell, replies)
      yield* Scope.addFinalizer(scope, Effect.sync(() => emulator.dispose()))
      const runtime: SessionRuntime = {
        id,
        owner,
        name,
        type,
        cwd,
        nonce,
        process,
        emulator,
        scope,
        shell,
        activity: new Activity(),
        sendLock: yield* Effect.makeSemaphore(1),
        drained: yield* Deferred.make<ExitStatus>(),
        exit: undefined,
        closing: false,
        activeTask: undefined
      }
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
    const exit = yield* started.pipe(Effect.provide(context), Effect.exit)
    if (Exit.isFailure(exit)) {
      sessions.delete(id)
      yield* Scope.close(scope, exit)
      return yield* Effect.failCause(exit.cause)
    }
    const { motd, runtime } = exit.value
    sessions.set(id, { _tag: "open", runtime })
    return { ...infoOf(runtime), motd }
  })

  const runSend = (runtime: SessionRuntime, request: SendRequest, input: string) =>
    Effect.gen(function*() {
      const before = inspector.exact ? yield* inspector.probe(terminalOf(runtime)) : undefined
      const capture = runtime.emulator.capture(runtime.emulator.cursor(), config.maxResultBytes)
      const baseline = runtime.shell.seq
      const runningAtStart = runtime.shell.state === "running"
      const bytesAtWrite = runtime.activity.bytes
      const started = Date.now()
      yield* runtime.process.write(input)
      const settled: Settled = yield* settle(watchFor(runtime, capture, {
        timeoutMs: request.timeoutMs ?? config.timeoutMs,
        idleMs: request.idleMs,
        before,
        written: Utf8.byteLength(input),
        bytesAtWrite,
        baseline,
        runningAtStart
      })).pipe(Effect.onInterrupt(() => Effect.sync(() => runtime.emulator.finish(capture))))
      const captured = runtime.emulator.finish(capture, settled.end)
      const rebased = runtime.shell.since(baseline).some((marker) => marker.kind === "C")
      const text = rebased ? captured.text : stripEcho(captured.text, request)
      return resultOf(runtime, settled, text, captured.truncated, Date.now() - started)
    }).pipe(Effect.provide(context))

  const resultOf = (
    runtime: SessionRuntime,
    settled: Settled,
    text: string,
    truncated: boolean,
    elapsedMs: number
  ): SendResult => {
    const modes = runtime.emulator.modes
    const cut = Utf8.headTail(text, config.maxResultBytes)
    const screen = modes.alternateScreen ? runtime.emulator.screen() : undefined
    return {
      output: screen !== undefined && cut.text.trim() === ""
        ? "[a full-screen program holds the terminal: see screen]"
        : cut.text,
      waitReason: settled.reason,
      ...(settled.exitCode !== undefined ? { exitCode: settled.exitCode } : {}),
      sessionStatus: statusOf(runtime),
      ...(screen !== undefined ? { screen: { rows: screen.rows, cursor: screen.cursor } } : {}),
      truncated: truncated || cut.truncated,
      ...(settled.continuation === true ? { continuation: true } : {}),
      elapsedMs
    }
  }

  const send = Effect.fn("PtyService.send")(function*(owner: OwnerId, id: SessionId, request: SendRequest) {
    const runtime = yield* lookup(owner, id)
    if (runtime.exit !== undefined) {
      return yield* new SessionExited({ sessionId: id, exitCode: runtime.exit.exitCode, signal: runtime.exit.signal })
    }
    const input = encodeInput(request, runtime.emulator.modes)
    if (Either.isLeft(input)) return yield* input.left
    const result = yield* runSend(runtime, request, input.right).pipe(
      runtime.sendLock.withPermitsIfAvailable(1),
      Effect.flatten
    ).pipe(
      Effect.catchTag(
        "NoSuchElementException",
        () => new SendActive({ sessionId: id, ...(runtime.activeTask ? { taskId: runtime.activeTask } : {}) })
      )
    )
    return result
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
    const group = yield* inspector.foregroundGroup(terminalOf(runtime))
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
    yield* Scope.close(runtime.scope, Exit.void)
    sessions.delete(id)
    remember(id, owner)
    return { sessionId: id, outcome: "closed" as const, survivors: report.survivors }
  })

  const list = (owner: OwnerId) =>
    Effect.sync(() => {
      const out: Array<SessionInfo> = []
      for (const entry of sessions.values()) {
        if (entry._tag === "open" && entry.runtime.owner === owner && !entry.runtime.closing) {
          out.push(infoOf(entry.runtime))
        }
      }
      return out
    })

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
          Effect.zipRight(Scope.close(runtime.scope, Exit.void))
        ),
      { discard: true }
    )
  )

  return {
    open,
    send,
    read,
    signal,
    close,
    list,
    closeOwner
  } satisfies Context.Tag.Service<typeof PtyService>
})
