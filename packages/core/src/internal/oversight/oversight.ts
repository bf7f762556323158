/**
 * The `Oversight` service over the service's own sessions (every owner's), and the agent-side operations
 * that meet people: a request for a person (a task that ends at the next hand-back).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Audit from "../../Audit.js"
import { SessionNotFound } from "../../Errors.js"
import type { OwnerId, SessionId } from "../../Ids.js"
import { NotInControl, type OverseenSession, type Oversight } from "../../Oversight.js"
import { type HumanNote, humanNoteText, type HumanRequest, type HumanRequestResult } from "../../Session.js"
import * as Geometry from "../session/geometry.js"
import { drainOutput } from "../session/reader.js"
import { type Deps, lookup } from "../session/registry.js"
import { exitedError, type SessionRuntime, statusOf } from "../session/runtime.js"
import { record } from "./audit.js"
import * as Lease from "./lease.js"

/** Any owner's open session. */
const find = (deps: Deps, id: string): Effect.Effect<SessionRuntime, SessionNotFound> =>
  Effect.suspend(() => {
    const entry = deps.sessions.get(id as SessionId)
    return entry !== undefined && entry._tag === "Open"
      ? Effect.succeed(entry.runtime)
      : Effect.fail(new SessionNotFound({ sessionId: id }))
  })

/** What runs in the foreground and whether it waits for input (the inspector's view; nothing guessed). */
const foregroundOf = (deps: Deps, runtime: SessionRuntime) =>
  Effect.gen(function*() {
    if (runtime.exit !== undefined) return { waitingForInput: false, foreground: undefined }
    const probe = yield* deps.inspector.probe(runtime.terminal)
    if (probe._tag === "Miss") return { waitingForInput: false, foreground: undefined }
    const pgid = probe.pgid
    const command = pgid === runtime.process.pid
      ? runtime.dialect?.name ?? runtime.name
      : (yield* deps.inspector.processTree(runtime.process.pid)).find((process) => process.pid === pgid)?.comm
    return {
      waitingForInput: probe.waitingOnTerminal,
      foreground: command === undefined ? undefined : { pgid, command }
    }
  })

const describe = (deps: Deps, runtime: SessionRuntime): Effect.Effect<OverseenSession> =>
  Effect.gen(function*() {
    const cwd = deps.inspector.cwd === undefined || runtime.exit !== undefined
      ? Option.none<string>()
      : yield* deps.inspector.cwd(runtime.process.pid)
    const { foreground, waitingForInput } = yield* foregroundOf(deps, runtime)
    const holding = runtime.control.holding
    const recording = runtime.watchers.recording
    return {
      sessionId: runtime.id,
      owner: runtime.owner,
      name: runtime.name,
      type: runtime.type,
      pid: runtime.process.pid,
      status: statusOf(runtime),
      cwd: Option.getOrElse(cwd, () => runtime.cwd),
      ...(runtime.dialect !== undefined ? { shell: runtime.dialect.name } : {}),
      cols: runtime.size.cols,
      rows: runtime.size.rows,
      busy: runtime.slot.state._tag !== "Free",
      waitingForInput,
      ...(foreground !== undefined ? { foreground } : {}),
      ...(holding !== undefined ? { control: Lease.stateOf(deps, holding) } : {}),
      requests: [...runtime.control.requests.values()].map(({ at, owner, reason, taskId }) => ({
        taskId,
        owner,
        reason,
        at
      })),
      ...(recording !== undefined
        ? {
          recording: {
            name: recording.name,
            bytes: recording.bytes,
            ...(recording.stopped !== undefined ? { stopped: recording.stopped } : {})
          }
        }
        : {})
    }
  })

/**
 * The agent asks for a person: a task (`kind: "human"`) that ends with the next hand-back (its result is the
 * note), shown in the live view meanwhile. With `wait` the call blocks for it up to `timeoutMs`.
 */
export const requestHuman = (deps: Deps) =>
  Effect.fn("PtyService.requestHuman")(function*(owner: OwnerId, id: SessionId, request: HumanRequest) {
    const runtime = yield* lookup(deps, owner, id)
    if (runtime.exit !== undefined) return yield* exitedError(runtime)
    const done = yield* Deferred.make<HumanNote>()
    const at = deps.timers.now()
    const ref: { taskId: string | undefined } = { taskId: undefined }
    const ended = Deferred.await(runtime.drained).pipe(Effect.flatMap(() => Effect.fail(exitedError(runtime))))
    // The task, its request and their withdrawal in one uninterruptible step: only the wait (restored) can be
    // interrupted, and an interruption there — or any failure before the caller has its task id — withdraws
    // the request, which would otherwise hold one of the owner's task places until some later hand-back.
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const taskId = yield* deps.tasks.start(owner, {
          kind: "human",
          label: request.reason,
          sessionId: id,
          run: Effect.raceFirst(Deferred.await(done), ended),
          output: () => "",
          waitingForInput: () => false,
          finalOutput: humanNoteText,
          onEnd: Effect.sync(() => {
            if (ref.taskId !== undefined) runtime.control.requests.delete(ref.taskId)
            deps.changes.unsafeOffer(undefined)
          })
        })
        ref.taskId = taskId
        runtime.control.requests.set(taskId, { taskId, owner, reason: request.reason, at, done })
        return yield* restore(Effect.gen(function*() {
          runtime.watchers.recording?.marker(`request: ${request.reason}`)
          yield* record(deps, runtime, owner, "request", Audit.printable(request.reason))
          deps.changes.unsafeOffer(undefined)
          if (request.wait !== true) return { taskId, status: "pending" } satisfies HumanRequestResult
          const view = yield* deps.tasks.output(owner, taskId, { wait: true, timeoutMs: request.timeoutMs }).pipe(
            Effect.orDie
          )
          const status = view.status === "completed"
            ? "handed-back"
            : view.status === "running"
            ? "pending"
            : "withdrawn"
          return {
            taskId,
            status,
            ...(view.status === "completed" ? { human: view.result as HumanNote } : {})
          } satisfies HumanRequestResult
        })).pipe(Effect.onError(() => Effect.ignore(deps.tasks.remove(owner, taskId))))
      })
    )
  })

/** The `Oversight` service over the service's sessions. */
export const make = (deps: Deps): Oversight["Type"] => ({
  sessions: Effect.suspend(() =>
    Effect.forEach(
      deps.sessions.values().flatMap((entry) => entry._tag === "Open" ? [entry.runtime] : []),
      (runtime) => describe(deps, runtime)
    )
  ),
  changes: Stream.fromPubSub(deps.changes),
  watch: (id, options) =>
    Effect.flatMap(find(deps, id), (runtime) => runtime.watchers.watch(runtime, () => statusOf(runtime), options)),
  take: (id, person, name) => Effect.flatMap(find(deps, id), (runtime) => Lease.take(deps, runtime, person, name)),
  input: (id, person, data) => Effect.flatMap(find(deps, id), (runtime) => Lease.input(deps, runtime, person, data)),
  resize: (id, person, cols, rows) =>
    Effect.flatMap(find(deps, id), (runtime) => Geometry.personResize(runtime, person, cols, rows)),
  handBack: (id, person) =>
    Effect.gen(function*() {
      const runtime = yield* find(deps, id)
      const holding = Lease.held(runtime, person)
      if (holding instanceof NotInControl) return yield* holding
      // what the person's last lines printed may still be on its way (in the kernel, or in a turn of the event
      // loop not taken yet): in first, so that the note holds it and the agent's next send starts after it
      yield* drainOutput(runtime)
      const still = Lease.held(runtime, person)
      if (still instanceof NotInControl) return yield* still
      const note = yield* Lease.release(deps, runtime, "hand-back")
      return note!
    }),
  audit: (id, limit) => deps.audit.of(id, limit),
  recordings: deps.recordings.list,
  recording: (name) => deps.recordings.read(name)
})
