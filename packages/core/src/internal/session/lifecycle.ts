/**
 * A session's life: `open` (a place in the registry, the confined spawn in the session's own scope, the
 * emulator and reader, the first prompt) and `close` (the tree first, then the scope). Both leave no trace
 * when interrupted: an open interrupted at any step removes its entry and closes its scope (its process
 * with it); a close interrupted mid-way leaves the session as it was, to be closed again.
 */
import { Utf8 } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as EnvPolicy from "../../EnvPolicy.js"
import type { CleanupFailed } from "../../Errors.js"
import { ForeignSession, InvalidInput, SessionNotFound, SpawnFailed } from "../../Errors.js"
import type { OwnerId, SessionId } from "../../Ids.js"
import type { ExitStatus, ResourceLimits, TeardownReport } from "../../PtyBackend.js"
import { Cast } from "../../Recording.js"
import * as Sandbox from "../../Sandbox.js"
import type * as Session from "../../Session.js"
import type { CloseResult, OpenRequest, OpenResult, SessionType } from "../../Session.js"
import { Activity } from "../clock/wake.js"
import { ControlLease } from "../oversight/control.js"
import { release as releaseLease } from "../oversight/lease.js"
import { settle } from "../readiness/race.js"
import { InputKind } from "../send/input.js"
import { SendSlot } from "../send/slot.js"
import { startReader } from "./reader.js"
import { type Deps, type Reservation, reserve } from "./registry.js"
import { infoOf, makeEmulator, randomHex, type SessionRuntime } from "./runtime.js"
import { shellOf, typeStartupInput } from "./shells.js"
import { ShellState } from "./shellState.js"
import { Watchers } from "./watchers.js"

/** How long a close waits for the output to drain and a waiting send to settle before it moves on. */
const RELEASE_GRACE_MS = 2_000

/**
 * Wait for `effect` at most `ms`, then go on either way. Made interruptible so that the timeout can end it
 * inside a finalizer too (a close runs in finalizers), where the wait would otherwise never time out.
 */
const waitAtMost = (ms: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  effect.pipe(Effect.interruptible, Effect.timeout(ms), Effect.ignore)

/** The limits a backend applied, as the open result reports them (only the ones that hold). */
const appliedLimits = (limits: ResourceLimits | undefined): Session.ResourceLimits => ({
  ...(limits?.pidsMax !== undefined && limits.pidsMax > 0 ? { pidsMax: limits.pidsMax } : {}),
  ...(limits?.memoryMaxBytes !== undefined && limits.memoryMaxBytes > 0
    ? { memoryMaxBytes: limits.memoryMaxBytes }
    : {})
})

const typeOf = (request: OpenRequest): Effect.Effect<SessionType, InvalidInput> => {
  const type = request.type ?? (request.argv !== undefined ? "command" : "shell")
  if (type === "command" && (request.argv === undefined || request.argv.length === 0)) {
    return Effect.fail(
      new InvalidInput({ field: "argv", reason: "a command session needs argv (the program and its arguments)" })
    )
  }
  if (type === "shell" && request.argv !== undefined) {
    return Effect.fail(
      new InvalidInput({ field: "argv", reason: "a shell session takes no argv; use type \"command\"" })
    )
  }
  return Effect.succeed(type)
}

/**
 * Start the reserved session in `scope`: confine, spawn (the backend registers the tree's teardown in the
 * scope), the emulator and the reader, then wait for the first prompt (a shell) or the first sign of
 * readiness (a command).
 */
const start = (
  deps: Deps,
  owner: OwnerId,
  request: OpenRequest,
  type: SessionType,
  reservation: Reservation,
  scope: Scope.CloseableScope
) =>
  Effect.gen(function*() {
    const { config, environment, inspector } = deps
    const program = yield* shellOf(deps.dialects, config, type, request)
    const { id, name, policy } = reservation
    const confined = Sandbox.isConfined(policy.mode) && policy.workspace !== undefined
    const requestedCwd = request.cwd ?? (confined ? policy.workspace! : config.defaultCwd ?? environment.cwd)
    const cols = request.cols ?? config.cols
    const rows = request.rows ?? config.rows
    const nonce = type === "shell" ? randomHex() : undefined
    const launch = program !== undefined && nonce !== undefined
      ? program.dialect.launch({ shell: program.file, nonce })
      : { file: request.argv![0]!, args: request.argv!.slice(1), env: {} }
    const confinement = yield* deps.sandbox.confine({
      file: launch.file,
      args: launch.args,
      cwd: requestedCwd,
      cols,
      rows,
      label: `${name}-${id}`,
      disposeGraceMs: config.disposeGraceMs,
      limits: { pidsMax: config.pidsMax, memoryMaxBytes: config.memoryMaxBytes },
      env: EnvPolicy.build({ host: environment.host, trusted: environment.trusted, integration: launch.env })
    }, policy)
    const process = yield* deps.backend.spawn(confinement.request).pipe(
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
      cwd: confinement.request.cwd,
      nonce,
      dialect: program?.dialect,
      process,
      terminal,
      emulator,
      scope,
      shell,
      activity: new Activity(deps.timers),
      slot: new SendSlot(),
      drained: yield* Deferred.make<ExitStatus>(),
      exit: undefined,
      watchers: new Watchers(),
      control: new ControlLease(),
      size: { cols, rows }
    }
    yield* Scope.addFinalizer(scope, Effect.sync(() => runtime.watchers.end()))
    if (request.record ?? config.recordAll) yield* record(deps, runtime, scope)
    yield* startReader(runtime, replies).pipe(Scope.extend(scope))
    const spawnedAt = deps.timers.now()
    const baseline = launch.startupInput === undefined
      ? 0
      : yield* typeStartupInput(runtime, inspector, config, launch.startupInput)
    const from = { row: 0, col: 0 }
    const capture = emulator.capture(from, config.maxResultBytes)
    const settled = yield* settle({
      session: runtime,
      inspector,
      config,
      timers: deps.timers,
      promptText: program?.dialect.promptText ?? "",
      kind: type === "shell" ? InputKind.Other : InputKind.Command,
      baseline,
      writtenAt: deps.timers.now(),
      timeoutMs: Math.max(1, config.openTimeoutMs - (deps.timers.now() - spawnedAt)),
      idleMs: undefined,
      before: undefined,
      written: 0,
      bytesAtWrite: 0,
      capture,
      from
    })
    const motd = emulator.finish(capture, emulator.cursor())
    if (type === "shell" && settled._tag !== "Prompt") {
      return yield* new SpawnFailed({
        command: launch.file,
        reason: settled._tag === "SessionExit"
          ? `the shell exited before its first prompt (${JSON.stringify(Utf8.cutTail(motd.text, 512))})`
          : `no prompt within ${config.openTimeoutMs} ms (${JSON.stringify(Utf8.cutTail(motd.text, 512))})`
      })
    }
    return { runtime, motd: motd.text }
  })

/**
 * Record the session (asciicast v2) into a new file of the store, closed with the session's scope; a store
 * that cannot make one leaves the session unrecorded (logged).
 */
const record = (deps: Deps, runtime: SessionRuntime, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const startedAt = deps.timers.now()
    const file = yield* deps.recordings.create({ sessionId: runtime.id, startedAt })
    if (Option.isNone(file)) return yield* Effect.logWarning(`session ${runtime.id}: no recording could be made here`)
    const cast = new Cast(file.value, {
      cols: runtime.size.cols,
      rows: runtime.size.rows,
      startedAt,
      now: deps.timers.now,
      maxBytes: deps.config.recordingMaxBytes,
      input: deps.config.recordInput,
      title: `${runtime.name} (${runtime.id})`
    })
    runtime.watchers.recording = cast
    yield* Scope.addFinalizer(scope, Effect.suspend(() => cast.close))
  })

/**
 * Open a session. Its place is taken first (name, cap, policy), then it starts in its own scope; a start
 * that fails or is interrupted at any step removes the place and closes the scope (ending whatever was
 * spawned) before the open ends. Uninterruptible but for the start itself.
 */
export const open = (deps: Deps) =>
  Effect.fn("PtyService.open")(function*(owner: OwnerId, request: OpenRequest) {
    const type = yield* typeOf(request)
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const reservation = yield* reserve(deps, owner, type, request.name)
        if (request.record === true && !deps.config.recordAll && reservation.policy.mode === "read-only") {
          deps.sessions.discard(reservation.id)
          return yield* new InvalidInput({
            field: "record",
            reason: "a read-only sandbox cannot turn recording on (a recording is written to the server's disk); " +
              "the server's own configuration decides whether its sessions are recorded"
          })
        }
        const scope = yield* Scope.fork(deps.sessionsScope, ExecutionStrategy.sequential)
        const started = yield* Effect.exit(restore(start(deps, owner, request, type, reservation, scope)))
        if (Exit.isFailure(started)) {
          deps.sessions.discard(reservation.id)
          yield* Scope.close(scope, started)
          return yield* Effect.failCause(started.cause)
        }
        const { motd, runtime } = started.value
        deps.sessions.set(runtime.id, { _tag: "Open", runtime })
        deps.changes.unsafeOffer(undefined)
        return {
          ...infoOf(runtime),
          motd,
          limits: appliedLimits(runtime.process.limits),
          recording: runtime.watchers.recording !== undefined
        } satisfies OpenResult
      })
    )
  })

const terminate = (runtime: SessionRuntime): Effect.Effect<TeardownReport, CleanupFailed> =>
  runtime.process.terminate.pipe(
    Effect.tap((report) =>
      Effect.logDebug("session closed").pipe(
        Effect.annotateLogs({ sessionId: runtime.id, containment: report.containment, signalled: report.signalled })
      )
    )
  )

/**
 * After the tree is gone: let the reader drain (and a send waiting on the session settle with
 * `session_exit`), close the session's scope, and then make sure nobody waits for an exit event that
 * will never come (a backend whose exit never arrived).
 */
const release = (deps: Deps, runtime: SessionRuntime) =>
  Effect.gen(function*() {
    yield* releaseLease(deps, runtime, "closed")
    yield* Deferred.await(runtime.drained).pipe(waitAtMost(RELEASE_GRACE_MS))
    if (!(yield* Deferred.isDone(runtime.drained))) {
      yield* Effect.logWarning("close: the session's exit never arrived; its waiters are released")
      runtime.exit ??= { exitCode: null, signal: "SIGKILL" }
      yield* Deferred.succeed(runtime.drained, runtime.exit)
      runtime.activity.notify()
    }
    const active = runtime.slot.foreground
    if (active !== undefined) yield* active.done.await.pipe(waitAtMost(RELEASE_GRACE_MS))
    yield* Scope.close(runtime.scope, Exit.void)
    deps.changes.unsafeOffer(undefined)
  })

/**
 * Close a session: its whole tree first (survivors fail the close with `CleanupFailed`, and it can be
 * retried), then its scope. A close that fails or is interrupted leaves the session open, to be closed
 * again; a concurrent close answers `already-closing`.
 */
export const close = (deps: Deps) =>
  Effect.fn("PtyService.close")(function*(owner: OwnerId, id: SessionId) {
    const found = deps.sessions.find(owner, id)
    switch (found._tag) {
      case "Unknown":
        return yield* new SessionNotFound({ sessionId: id })
      case "Foreign":
        return yield* new ForeignSession({ sessionId: id })
      case "Gone":
        return { sessionId: id, outcome: "closed", survivors: [] } satisfies CloseResult
    }
    const entry = found.entry
    if (entry._tag !== "Open") return { sessionId: id, outcome: "already-closing", survivors: [] } satisfies CloseResult
    const runtime = entry.runtime
    deps.sessions.set(id, { _tag: "Closing", runtime })
    const report = yield* terminate(runtime).pipe(
      Effect.tap(() => release(deps, runtime)),
      Effect.onExit((exit) =>
        Effect.sync(() => {
          if (Exit.isFailure(exit)) deps.sessions.set(id, entry)
          else deps.sessions.remove(id)
        })
      )
    )
    return { sessionId: id, outcome: "closed", survivors: report.survivors } satisfies CloseResult
  })

/** Close every session the way `close` does (the service's end). */
export const closeAll = (deps: Deps): Effect.Effect<void> =>
  Effect.forEach(
    deps.sessions.values().flatMap((entry) => entry._tag === "Opening" ? [] : [entry.runtime]),
    (runtime) =>
      terminate(runtime).pipe(
        Effect.catchAll((error) => Effect.logWarning("close failed", error)),
        Effect.zipRight(release(deps, runtime))
      ),
    { discard: true }
  )
