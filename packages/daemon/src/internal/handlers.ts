import { Errors, Exec, Ids, PtyService, TaskRuntime, Watch } from "@agent-terminal/core"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Fiber from "effect/Fiber"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { DaemonRpcs, type WatchItem } from "../Protocol.js"
import { TerminalRegistry } from "../TerminalRegistry.js"
import type { Bound, Owners } from "./owners.js"
import { recorded } from "./owners.js"

/** What the handlers need from the server around them. */
export interface Context {
  readonly runId: number
  readonly owners: Owners
}

const sid = Ids.SessionId.make

/**
 * Work that a named owner's disconnect must not stop: it runs on in the daemon (a send keeps its command
 * running, as a person's terminal does when the window closes), and only the client's own cancel stops it.
 * For an anonymous owner a disconnect is the end anyway: its terminals close.
 */
const detachable = <A, E>(bound: Bound, work: Effect.Effect<A, E>, daemonScope: Scope.Scope) =>
  bound.name === undefined ? work : Effect.flatMap(Effect.forkIn(work, daemonScope), (fiber) =>
    Fiber.join(fiber).pipe(
      Effect.onInterrupt((interruptors) =>
        HashSet.some(interruptors, (id) => Equal.equals(id, RpcServer.fiberIdClientInterrupt))
          ? Fiber.interrupt(fiber)
          : Effect.void
      )
    ))

/** The protocol's handlers over the services in context, each run as its connection's owner. */
export const layer = (context: Context) =>
  DaemonRpcs.toLayer(Effect.gen(function*() {
    const pty = yield* PtyService.PtyService
    const tasks = yield* TaskRuntime.TaskRuntime
    const exec = yield* Effect.serviceOption(Exec.Exec)
    const registry = yield* TerminalRegistry
    const daemonScope = yield* Effect.scope
    const { owners, runId } = context
    // every task's end goes into the registry (unrecorded, a later run would end it as daemon-stopped)
    const ends = yield* PubSub.subscribe(tasks.completions)
    yield* Queue.take(ends).pipe(
      Effect.flatMap((event) => recorded(registry.taskEnded(event.taskId, Date.now(), event.status))),
      Effect.forever,
      Effect.forkIn(daemonScope)
    )

    const as = <A, E, R>(clientId: number, use: (bound: Bound) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(owners.of(clientId), use)

    /** An id this daemon does not hold, that an earlier run of it held for this owner: `SessionLost`. */
    const lost =
      (bound: Bound, sessionId: string) =>
      <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Errors.SessionLost, R> =>
        Effect.catchIf(
          effect,
          (error): error is E & Errors.SessionNotFound => (error as { _tag?: string })._tag === "SessionNotFound",
          (notFound) =>
            registry.terminal(sessionId).pipe(
              Effect.orElseSucceed(() => Option.none()),
              Effect.flatMap((record): Effect.Effect<never, E | Errors.SessionLost> => {
                if (Option.isNone(record) || record.value.owner !== bound.owner) return Effect.fail(notFound)
                const { endReason, endedAt } = record.value
                if (endedAt === undefined || (endReason !== "daemon-stopped" && endReason !== "daemon-died")) {
                  return Effect.fail(notFound)
                }
                return Effect.fail(
                  new Errors.SessionLost({
                    sessionId,
                    lostAt: new Date(endedAt).toISOString(),
                    reason: endReason === "daemon-stopped" ? "daemon-stopped" : "daemon-died"
                  })
                )
              })
            )
        )

    const taskStarted = (bound: Bound, taskId: string | undefined, kind: string, label: string, sessionId?: string) =>
      taskId === undefined ? Effect.void : recorded(registry.taskStarted({
        taskId,
        owner: bound.owner,
        kind,
        label,
        sessionId,
        runId,
        startedAt: Date.now()
      }))

    const withExec = <A, E>(use: (service: Exec.Exec["Type"]) => Effect.Effect<A, E>) =>
      Option.match(exec, {
        onNone: () => Effect.dieMessage("one-shot runs are not available in this daemon (no Exec service)"),
        onSome: use
      })

    return {
      Hello: (payload, { clientId }) => owners.hello(clientId, payload),
      Open: ({ request }, { clientId }) =>
        as(clientId, (bound) =>
          // an open that succeeded is recorded even if its caller is interrupted meanwhile: a later daemon
          // must be able to answer its id with SessionLost
          Effect.uninterruptibleMask((restore) =>
            restore(pty.open(bound.owner, request)).pipe(
              Effect.tap((opened) =>
                recorded(registry.terminalOpened({
                  sessionId: opened.sessionId,
                  owner: bound.owner,
                  name: opened.name,
                  type: opened.type,
                  pid: opened.pid,
                  runId,
                  openedAt: Date.now()
                }))
              )
            )
          )),
      Send: ({ request, sessionId }, { clientId }) =>
        as(clientId, (bound) =>
          detachable(bound, pty.send(bound.owner, sid(sessionId), request), daemonScope).pipe(
            Effect.tap((result) =>
              taskStarted(bound, result.taskId, "send", request.text ?? request.paste ?? "", sessionId)
            ),
            lost(bound, sessionId)
          )),
      Read: ({ request, sessionId }, { clientId }) =>
        as(clientId, (bound) => pty.read(bound.owner, sid(sessionId), request).pipe(lost(bound, sessionId))),
      Signal: ({ sessionId, signal }, { clientId }) =>
        as(clientId, (bound) => pty.signal(bound.owner, sid(sessionId), signal).pipe(lost(bound, sessionId))),
      Resize: ({ request, sessionId }, { clientId }) =>
        as(clientId, (bound) => pty.resize(bound.owner, sid(sessionId), request).pipe(lost(bound, sessionId))),
      RequestHuman: ({ request, sessionId }, { clientId }) =>
        as(clientId, (bound) =>
          detachable(bound, pty.requestHuman(bound.owner, sid(sessionId), request), daemonScope).pipe(
            Effect.tap((result) =>
              taskStarted(bound, result.taskId, "human", request.reason, sessionId)
            ),
            lost(bound, sessionId)
          )),
      Cancel: ({ sessionId }, { clientId }) =>
        as(clientId, (bound) => pty.cancel(bound.owner, sid(sessionId)).pipe(lost(bound, sessionId))),
      Close: ({ sessionId }, { clientId }) =>
        as(clientId, (bound) =>
          Effect.gen(function*() {
            const before = (yield* pty.list(bound.owner)).find((session) => session.sessionId === sessionId)
            const result = yield* pty.close(bound.owner, sid(sessionId))
            const status = before?.status
            yield* recorded(registry.terminalEnded(sessionId, {
              at: Date.now(),
              reason: "closed",
              ...(status?._tag === "exited"
                ? { exitCode: status.exitCode ?? undefined, signal: status.signal ?? undefined }
                : {})
            }))
            return result
          }).pipe(lost(bound, sessionId))),
      List: (_, { clientId }) => as(clientId, (bound) => pty.list(bound.owner)),
      CloseOwner: (_, { clientId }) => as(clientId, (bound) => pty.closeOwner(bound.owner)),
      ConfigureSandbox: ({ policy }, { clientId }) =>
        as(clientId, (bound) => pty.configureSandbox(bound.owner, policy)),
      SandboxOf: (_, { clientId }) => as(clientId, (bound) => pty.sandboxOf(bound.owner)),
      Watch: ({ maxBufferedBytes, sessionId }, { clientId }) =>
        Stream.unwrapScoped(
          as(clientId, (bound) => {
            if (pty.watch === undefined) return Effect.die("this daemon's terminal service cannot be watched")
            return pty.watch(bound.owner, sid(sessionId), { maxBufferedBytes }).pipe(
              lost(bound, sessionId),
              Effect.map((watch): Stream.Stream<WatchItem> =>
                Stream.concat(
                  Stream.make<Array<WatchItem>>(watch.snapshot),
                  // while output streams, fewer and larger messages: each costs both ends of the socket
                  Watch.gather(watch.events)
                )
              )
            )
          })
        ),
      TaskOutput: ({ taskId, timeoutMs, wait, waitFor }, { clientId }) =>
        as(clientId, (bound) => tasks.output(bound.owner, taskId, { wait, timeoutMs, waitFor })),
      TaskKill: ({ taskId }, { clientId }) => as(clientId, (bound) => tasks.kill(bound.owner, taskId)),
      TaskWrite: ({ input, taskId }, { clientId }) => as(clientId, (bound) => tasks.write(bound.owner, taskId, input)),
      TaskList: (_, { clientId }) => as(clientId, (bound) => tasks.list(bound.owner)),
      TaskRemove: ({ taskId }, { clientId }) => as(clientId, (bound) => tasks.remove(bound.owner, taskId)),
      TaskRemoveOwner: (_, { clientId }) => as(clientId, (bound) => tasks.removeOwner(bound.owner)),
      TaskCompletions: (_, { clientId }) =>
        Stream.unwrap(
          as(clientId, (bound) =>
            Effect.succeed(
              Stream.fromPubSub(tasks.completions).pipe(Stream.filter((event) => event.owner === bound.owner))
            ))
        ),
      ExecRun: ({ request }, { clientId }) =>
        as(clientId, (bound) =>
          withExec((service) =>
            detachable(bound, service.exec(bound.owner, request), daemonScope).pipe(
              Effect.tap((result) =>
                taskStarted(
                  bound,
                  result.taskId,
                  "exec",
                  request.spawn._tag === "pty" ? request.spawn.command : request.spawn.argv.join(" ")
                )
              )
            )
          )),
      ExecPoll: ({ taskId, timeoutMs, wait }, { clientId }) =>
        as(clientId, (bound) =>
          withExec((service) =>
            service.poll(bound.owner, taskId, { wait, timeoutMs })
          )),
      ExecLog: ({ count, offset, taskId }, { clientId }) =>
        as(clientId, (bound) => withExec((service) => service.log(bound.owner, taskId, { offset, count }))),
      ExecWrite: ({ input, taskId }, { clientId }) =>
        as(clientId, (bound) => withExec((service) => service.write(bound.owner, taskId, input))),
      ExecKill: ({ taskId }, { clientId }) =>
        as(clientId, (bound) => withExec((service) => service.kill(bound.owner, taskId))),
      ExecRemove: ({ taskId }, { clientId }) =>
        as(clientId, (bound) => withExec((service) => service.remove(bound.owner, taskId))),
      ExecList: (_, { clientId }) => as(clientId, (bound) => withExec((service) => service.list(bound.owner)))
    }
  }))
