/**
 * The service, wired: its dependencies gathered once (`Deps`), each operation a function over them. The
 * parts, by folder: `session/` (the registry, open and close, the reader, geometry), `send/` (a send from its
 * input to its result, one at a time per session), `readiness/` (the race and its tiers), `oversight/` (the
 * control lease, the audit entries), `clock/` (time and wake-ups).
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Audit from "../Audit.js"
import * as EnvPolicy from "../EnvPolicy.js"
import { InvalidInput } from "../Errors.js"
import type { OwnerId, SessionId } from "../Ids.js"
import type { Oversight } from "../Oversight.js"
import { ProcessInspector } from "../ProcessInspector.js"
import { PtyBackend } from "../PtyBackend.js"
import type { CancelResult, PtyService, SnapshotResult } from "../PtyService.js"
import * as Recording from "../Recording.js"
import * as Sandbox from "../Sandbox.js"
import type { ReadRequest, SendRequest, SessionInfo, SignalName } from "../Session.js"
import { ShellDialects } from "../ShellDialects.js"
import { TaskRuntime } from "../TaskRuntime.js"
import { TerminalSettings } from "../TerminalConfig.js"
import type { WatchOptions } from "../Watch.js"
import { makeTimers } from "./clock/wake.js"
import * as AuditTrail from "./oversight/audit.js"
import * as OversightService from "./oversight/oversight.js"
import { send } from "./send/send.js"
import { tracedWhenSeen } from "./send/tracing.js"
import * as Geometry from "./session/geometry.js"
import { close, closeAll, open } from "./session/lifecycle.js"
import { type Deps, lookup, makeSessions, policyOf } from "./session/registry.js"
import { exitedError, infoOf, statusOf } from "./session/runtime.js"
import { signalTarget } from "./session/signalTarget.js"

const cancel = (deps: Deps) =>
  Effect.fn("PtyService.cancel")(function*(owner: OwnerId, id: SessionId) {
    const runtime = yield* lookup(deps, owner, id)
    const active = runtime.slot.foreground
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
    const taskId = runtime.slot.taskId
    if (taskId !== undefined) {
      yield* deps.tasks.kill(owner, taskId).pipe(Effect.ignore)
      return { cancelled: true, written: true, discarded: 0, signalled: [], taskId } satisfies CancelResult
    }
    return { cancelled: false, written: false, discarded: 0, signalled: [] } satisfies CancelResult
  })

const read = (deps: Deps) =>
  Effect.fn("PtyService.read")(function*(owner: OwnerId, id: SessionId, request: ReadRequest) {
    const runtime = yield* lookup(deps, owner, id)
    const page = runtime.emulator.page({
      ...(request.offset !== undefined ? { offset: request.offset } : {}),
      ...(request.count !== undefined ? { count: request.count } : {}),
      maxBytes: deps.config.maxReadBytes
    })
    if (Either.isLeft(page)) return yield* new InvalidInput({ field: page.left.field, reason: page.left.reason })
    const { firstLine, lineBegin, lineEnd, text, totalLines, truncated } = page.right
    return { text, totalLines, lineBegin, lineEnd, truncated, firstLine }
  })

/** The screen now, read between two parses; the send slot is not taken, so a send in flight goes on. */
const snapshot = (deps: Deps) =>
  Effect.fn("PtyService.snapshot")(function*(owner: OwnerId, id: SessionId) {
    const runtime = yield* lookup(deps, owner, id)
    const { alternate, cursor, rows } = runtime.emulator.screen()
    return {
      screen: { rows, cursor },
      cols: runtime.size.cols,
      rows: runtime.size.rows,
      alternate,
      busy: runtime.slot.foreground !== undefined || runtime.slot.taskId !== undefined,
      sessionStatus: statusOf(runtime)
    } satisfies SnapshotResult
  })

const signal = (deps: Deps) =>
  Effect.fn("PtyService.signal")(function*(owner: OwnerId, id: SessionId, name: SignalName) {
    const runtime = yield* lookup(deps, owner, id)
    if (runtime.exit !== undefined) return yield* exitedError(runtime)
    const humanInControl = runtime.control.refusal(id)
    if (humanInControl !== undefined) return yield* humanInControl
    const group = yield* signalTarget(deps, runtime, name)
    const delivered = yield* runtime.process.signalGroup(group, name)
    return { delivered, targetPgid: group }
  })

/** The owner's listed sessions, with the shell's working directory now where the inspector can tell. */
const list = (deps: Deps) => (owner: OwnerId): Effect.Effect<ReadonlyArray<SessionInfo>> =>
  Effect.forEach(
    deps.sessions.ownedBy(owner).flatMap((entry) => entry._tag === "Open" ? [entry.runtime] : []),
    (runtime) =>
      (deps.inspector.cwd === undefined || runtime.exit !== undefined
        ? Effect.succeed(Option.none<string>())
        : deps.inspector.cwd(runtime.process.pid)).pipe(
          Effect.map((cwd): SessionInfo => ({ ...infoOf(runtime), cwd: Option.getOrElse(cwd, () => runtime.cwd) }))
        )
  )

const configureSandbox = (deps: Deps) =>
  Effect.fn("PtyService.configureSandbox")(function*(owner: OwnerId, requested: Sandbox.Policy) {
    const policy = yield* Sandbox.validate(requested)
    const current = policyOf(deps, owner)
    if (Sandbox.equivalent(current, policy)) return
    const held = deps.sessions.countOf(owner)
    if (held > 0) {
      return yield* new Sandbox.SandboxInUse({ owner, current: current.mode, requested: policy.mode, sessions: held })
    }
    deps.policies.set(owner, policy)
  })

/**
 * Build the service and its `Oversight` (the same sessions, for people) in the current scope; closing that
 * scope closes every session. An `Audit` and a `Recordings` store in context are used, else the audit is kept
 * in memory and no recording is made.
 */
export const makeWithOversight: Effect.Effect<
  { readonly pty: Context.Tag.Service<typeof PtyService>; readonly oversight: Context.Tag.Service<typeof Oversight> },
  never,
  | TerminalSettings
  | PtyBackend
  | ProcessInspector
  | ShellDialects
  | EnvPolicy.HostEnvironment
  | Sandbox.Sandbox
  | TaskRuntime
  | Scope.Scope
> = Effect.gen(function*() {
  const deps: Deps = {
    config: yield* TerminalSettings,
    backend: yield* PtyBackend,
    inspector: yield* ProcessInspector,
    dialects: yield* ShellDialects,
    tasks: yield* TaskRuntime,
    environment: yield* EnvPolicy.HostEnvironment,
    sandbox: yield* Sandbox.Sandbox,
    timers: yield* makeTimers,
    sessions: makeSessions(),
    opened: { count: 0 },
    policies: new Map(),
    // Sessions live in a scope of their own, forked before the service's finalizer is added: closing the
    // service closes every session gracefully first (its reader still running, so its exit is seen), and
    // only then the scopes that hold them.
    sessionsScope: yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential),
    audit: Option.getOrElse(yield* Effect.serviceOption(Audit.Audit), () => Audit.makeMemory()),
    recordings: yield* Effect.map(
      Effect.serviceOption(Recording.Recordings),
      Option.getOrElse(() => Recording.none)
    ),
    changes: yield* PubSub.sliding<void>(16),
    runFork: Runtime.runFork(yield* Effect.runtime<never>())
  }
  const closeSession = close(deps)
  yield* Effect.addFinalizer(() => closeAll(deps))
  const sendAudited = send(deps)
  const pty = {
    open: open(deps),
    send: tracedWhenSeen(
      "PtyService.send",
      (owner: OwnerId, id: SessionId, request: SendRequest) =>
        Effect.tap(
          sendAudited(owner, id, request),
          (result) => AuditTrail.agentSend(deps, owner, id, request, result)
        )
    ),
    read: read(deps),
    snapshot: snapshot(deps),
    signal: signal(deps),
    cancel: cancel(deps),
    close: closeSession,
    list: list(deps),
    closeOwner: (owner) =>
      Effect.forEach(
        deps.sessions.entries().filter(([, entry]) => deps.sessions.ownerOf(entry) === owner),
        ([id]) => closeSession(owner, id).pipe(Effect.catchAll((error) => Effect.logWarning("close failed", error))),
        { discard: true }
      ),
    configureSandbox: configureSandbox(deps),
    sandboxOf: (owner) => Effect.sync(() => policyOf(deps, owner)),
    watch: (owner: OwnerId, id: SessionId, options?: WatchOptions) =>
      Effect.flatMap(
        lookup(deps, owner, id),
        (runtime) => runtime.watchers.watch(runtime, () => statusOf(runtime), options)
      ),
    resize: Geometry.resize(deps),
    requestHuman: OversightService.requestHuman(deps)
  } satisfies Context.Tag.Service<typeof PtyService>
  return { pty, oversight: OversightService.make(deps) }
})
