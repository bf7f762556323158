import type { Ids, Operation, Session } from "@agent-terminal/core"
import { Errors, Exec, PtyService, TaskRuntime, Watch } from "@agent-terminal/core"
import type * as RpcGroup from "@effect/rpc/RpcGroup"
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
import { DaemonRpcs, operations, type WatchItem } from "../Protocol.js"
import { TerminalRegistry } from "../TerminalRegistry.js"
import type { Bound, Owners } from "./owners.js"
import { writeRegistryRecord } from "./registryRecord.js"

/** What the handlers need from the server around them. */
export interface Context {
  readonly runId: number
  readonly owners: Owners
}

type Handlers = RpcGroup.HandlersFrom<RpcGroup.Rpcs<typeof DaemonRpcs>>

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
    const tasks = yield* TaskRuntime.Tasks
    const exec = yield* Effect.serviceOption(Exec.Exec)
    const registry = yield* TerminalRegistry
    const daemonScope = yield* Effect.scope
    const clock = yield* Effect.clock
    const { owners, runId } = context
    // every task's end goes into the registry (unrecorded, a later run would end it as daemon-stopped)
    const ends = yield* PubSub.subscribe(tasks.completions)
    yield* Queue.take(ends).pipe(
      Effect.flatMap((event) =>
        writeRegistryRecord(registry.taskEnded(event.taskId, clock.unsafeCurrentTimeMillis(), event.status))
      ),
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
      taskId === undefined ? Effect.void : writeRegistryRecord(registry.taskStarted({
        taskId,
        owner: bound.owner,
        kind,
        label,
        sessionId,
        runId,
        startedAt: clock.unsafeCurrentTimeMillis()
      }))

    type Untyped = (owner: Ids.OwnerId, ...args: ReadonlyArray<any>) => Effect.Effect<any, any>
    const services: { readonly [K in keyof typeof operations]: Option.Option<Record<string, Untyped>> } = {
      terminal: Option.some(pty as unknown as Record<string, Untyped>),
      tasks: Option.some(tasks as unknown as Record<string, Untyped>),
      exec: exec as Option.Option<unknown> as Option.Option<Record<string, Untyped>>
    }

    /**
     * What the daemon adds around an operation besides running it as the connection's owner: the registry's
     * records (a later run answers the ids of this one with `SessionLost`, and ends their tasks).
     */
    const around: Record<
      string,
      (bound: Bound, args: ReadonlyArray<any>, run: Effect.Effect<any, any>) => Effect.Effect<any, any>
    > = {
      // an open that succeeded is recorded even if its caller is interrupted meanwhile: a later daemon
      // must be able to answer its id with SessionLost
      Open: (bound, _args, run) =>
        Effect.uninterruptibleMask((restore) =>
          restore(run).pipe(
            Effect.tap((opened: Session.OpenResult) =>
              writeRegistryRecord(registry.terminalOpened({
                sessionId: opened.sessionId,
                owner: bound.owner,
                name: opened.name,
                type: opened.type,
                pid: opened.pid,
                runId,
                openedAt: clock.unsafeCurrentTimeMillis()
              }))
            )
          )
        ),
      Close: (bound, [sessionId], run) =>
        Effect.gen(function*() {
          const before = (yield* pty.list(bound.owner)).find((session) => session.sessionId === sessionId)
          const result = yield* run
          const status = before?.status
          yield* writeRegistryRecord(registry.terminalEnded(sessionId, {
            at: clock.unsafeCurrentTimeMillis(),
            reason: "closed",
            ...(status?._tag === "exited"
              ? { exitCode: status.exitCode ?? undefined, signal: status.signal ?? undefined }
              : {})
          }))
          return result
        }),
      Send: (bound, [sessionId, request]: ReadonlyArray<any>, run) =>
        Effect.tap(run, (result: Session.SendResult) =>
          taskStarted(
            bound,
            result.taskId,
            "send",
            (request as Session.SendRequest).text ?? (request as Session.SendRequest).paste ?? "",
            sessionId
          )),
      RequestHuman: (bound, [sessionId, request]: ReadonlyArray<any>, run) =>
        Effect.tap(run, (result: Session.HumanRequestResult) =>
          taskStarted(bound, result.taskId, "human", (request as Session.HumanRequest).reason, sessionId)),
      ExecRun: (bound, [request]: ReadonlyArray<any>, run) =>
        Effect.tap(run, (result: Exec.ExecResult) => {
          const { spawn } = request as Exec.ExecRequest
          return taskStarted(bound, result.taskId, "exec", spawn._tag === "pty" ? spawn.command : spawn.argv.join(" "))
        })
    }

    /**
     * One handler per declaration: the payload's fields as the method's arguments, run as the connection's
     * owner; detached where the declaration says so; the registry's records around it; and, for an
     * operation on a session, `SessionLost` for an id an earlier run held.
     */
    const handle = (service: Option.Option<Record<string, Untyped>>, method: string, operation: Operation.Any) => {
      const names = operation.args.map((argument) =>
        argument.name
      )
      const onSession = names[0] === "sessionId"
      const extra = around[operation.tag]
      return (payload: Record<string, unknown>, { clientId }: { readonly clientId: number }) =>
        as(clientId, (bound) => {
          if (Option.isNone(service)) {
            return Effect.dieMessage("one-shot runs are not available in this daemon (no Exec service)")
          }
          const args = names.map((name) => payload[name])
          const work = service.value[method]!(bound.owner, ...args)
          const run = operation.detached ? detachable(bound, work, daemonScope) : work
          const done = extra === undefined ? run : extra(bound, args, run)
          return onSession ? lost(bound, args[0] as string)(done) : done
        })
    }
    const derived: Record<string, ReturnType<typeof handle>> = {}
    for (const [group, table] of Object.entries(operations)) {
      for (const [method, operation] of Object.entries(table as Operation.Table)) {
        derived[operation.tag] = handle(services[group as keyof typeof operations], method, operation)
      }
    }

    return {
      ...(derived as unknown as Omit<Handlers, "Hello" | "Watch" | "TaskCompletions">),
      Hello: (payload, { clientId }) => owners.hello(clientId, payload),
      Watch: ({ options, sessionId }, { clientId }) =>
        Stream.unwrapScoped(
          as(clientId, (bound) => {
            if (pty.watch === undefined) return Effect.die("this daemon's terminal service cannot be watched")
            return pty.watch(bound.owner, sessionId, options).pipe(
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
      TaskCompletions: (_, { clientId }) =>
        Stream.unwrap(
          as(clientId, (bound) =>
            Effect.succeed(
              Stream.fromPubSub(tasks.completions).pipe(Stream.filter((event) => event.owner === bound.owner))
            ))
        )
    }
  }))
