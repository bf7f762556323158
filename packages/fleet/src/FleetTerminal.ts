/**
 * The fleet's terminals as local services: `FleetTerminal.layer(options)` provides `PtyService`, `TaskRuntime`
 * and `Exec` over every machine that announces itself (`Discovery`), so the tools, the MCP server and the
 * console run unchanged over many machines. An `open` goes where there is most room (or where
 * `placedOn({ machine, labels })` asks), every call by id goes straight to the machine the id names
 * (`FleetIds`), `list` asks every machine and merges (each id naming its machine).
 *
 * Owners: a client acts for one owner (a call for another dies with `OwnerMismatch`, as over the daemon's
 * socket), or, with `owners`, for many (an HTTP server's): each owner has sessions of its own with the machines,
 * made at its first call and ended by its `closeOwner`, so two owners never see each other's terminals.
 *
 * Failures are typed and fast: a machine that does not answer makes the call die with `MachineUnavailable`
 * (its name, since when), a dropped NATS connection with `ConnectionLost`, within about a second even for a
 * call or watch in flight; nothing is retried. An id of a machine's earlier run is `SessionLost` from the id
 * alone, without asking the machine: its terminals died with that run.
 *
 * @since 0.3.0
 */
import { Errors, Exec, Ids, Operation, Placement as CorePlacement, PtyService, TaskRuntime } from "@agent-terminal/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Discovery from "./Discovery.js"
import type { NotPermitted } from "./FleetErrors.js"
import * as FleetIds from "./FleetIds.js"
import * as FleetRegistry from "./FleetRegistry.js"
import type * as machineClients from "./internal/machineClients.js"
import * as ownerClients from "./internal/ownerClients.js"
import * as remoteWatch from "./internal/remoteWatch.js"
import type { Nats } from "./Nats.js"
import type * as Placement from "./Placement.js"

/**
 * Options of the fleet client.
 *
 * @since 0.3.0
 */
export interface Options {
  /** Act as this named owner on every machine (under this client's NATS user); default: anonymous. */
  readonly owner?: string | undefined
  /**
   * The one owner this client acts for (stdio: the MCP connection's): a call for another dies with
   * `OwnerMismatch`. Default: the first owner that calls. Ignored with `owners`.
   */
  readonly actsFor?: Ids.OwnerId | undefined
  /**
   * Many owners (an HTTP server's): each owner a caller names gets sessions of its own with the machines, made
   * at its first call, as the machine owner `nameOf` gives (`undefined`: anonymous there, so its terminals
   * close when its sessions do); its `closeOwner` closes them. Two owners never see each other's terminals.
   */
  readonly owners?: { readonly nameOf: (owner: Ids.OwnerId) => string | undefined } | undefined
  /** The client's name in the machines' logs. */
  readonly client?: string | undefined
  /** A session's handshake deadline (default 2 s). */
  readonly handshakeTimeoutMs?: number | undefined
  /** How long the start waits for a first machine to announce itself (default 1 s). */
  readonly discoveryWaitMs?: number | undefined
}

/**
 * Run `effect` with its `open`s placed as `request` asks (a machine by name, or labels).
 *
 * @since 0.3.0
 */
export const placedOn: (
  request: Placement.Request
) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = CorePlacement.placedOn

/**
 * The fleet's `Exec.shell`: a command string in child mode is `[machineShell, "-c", command]` until its
 * machine is chosen, then that machine's own shell (the one its daemon said at `Hello`), as the same command
 * in pty mode runs with it. Machines may have different shells; none is assumed.
 *
 * @since 0.3.0
 */
export const machineShell = "<the machine's shell>"

/** A child run of a command string (`Exec.shellArgv(machineShell, …)`) with `shell` in its place. */
const withShell = (request: Exec.ExecRequest, shell: string): Exec.ExecRequest => {
  const { spawn } = request
  if (spawn._tag !== "child" || spawn.argv.length !== 3 || spawn.argv[0] !== machineShell || spawn.argv[1] !== "-c") {
    return request
  }
  return { ...request, spawn: { _tag: "child", argv: Exec.shellArgv(shell, spawn.argv[2]!) } }
}

/**
 * What the fleet client knows besides the three services.
 *
 * @since 0.3.0
 */
export class Fleet extends Context.Tag("@agent-terminal/fleet/FleetTerminal/Fleet")<Fleet, {
  readonly directory: Discovery.Directory["Type"]
  /** The machine an id names (`undefined` for an id of no machine). */
  readonly machineOf: (sessionId: string) => string | undefined
}>() {}

/**
 * The three services over the fleet, and what it knows.
 *
 * @since 0.3.0
 */
export const make = (
  options: Options = {}
): Effect.Effect<
  {
    readonly pty: PtyService.PtyService["Type"]
    readonly tasks: TaskRuntime.Tasks["Type"]
    readonly exec: Exec.Exec["Type"]
    readonly fleet: Fleet["Type"]
  },
  NotPermitted,
  Nats | Scope.Scope
> =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    const context = yield* Effect.context<Nats>()
    const directory = yield* Discovery.makeDirectory()
    // The machines answer the directory's first "announce now" at once: a client's first open finds them.
    yield* directory.machines.pipe(
      Effect.repeat({ until: (machines) => machines.length > 0, schedule: Schedule.spaced("20 millis") }),
      Effect.timeout(options.discoveryWaitMs ?? 1_000),
      Effect.ignore
    )
    const completions = yield* PubSub.unbounded<TaskRuntime.TaskEvent>()
    const runOf = (machine: string) =>
      Effect.map(directory.machines, (machines) => machines.find((m) => m.machine === machine)?.run)
    const { clientsOf, isKnown, release } = yield* ownerClients.make({
      ...options,
      runOf,
      publish: (event) => PubSub.publish(completions, event)
    })
    const call = <A, E>(
      owner: Ids.OwnerId,
      machine: string,
      use: (client: machineClients.Client) => Effect.Effect<A, E>
    ): Effect.Effect<A, machineClients.Own<E>> =>
      Effect.flatMap(clientsOf(owner), (clients) => clients.call(machine, use))
    /** Which machine each task id seen came from (a task id does not name its machine). */
    const taskHomes = new Map<string, string>()
    /** Each owner's task ids seen (its `removeOwner` forgets them, and only them). */
    const ownTasks = new Map<Ids.OwnerId, Set<string>>()
    const noted =
      <A extends { readonly taskId?: string | undefined }>(owner: Ids.OwnerId, machine: string) => (result: A) => {
        if (result.taskId === undefined) return result
        taskHomes.set(result.taskId, machine)
        const own = ownTasks.get(owner) ?? new Set<string>()
        ownTasks.set(owner, own.add(result.taskId))
        return result
      }

    /** A removed task's machine is forgotten (the map would grow with every task of a long-lived client). */
    const forget = <A, E>(owner: Ids.OwnerId, taskId: string, remove: Effect.Effect<A, E>) =>
      Effect.tap(remove, () =>
        Effect.sync(() => {
          taskHomes.delete(taskId)
          ownTasks.get(owner)?.delete(taskId)
        }))

    /** The registry's reader, made at the first need (a client that never meets a lost id never opens it). */
    let opened: Effect.Effect.Success<ReturnType<typeof FleetRegistry.makeReader>> | undefined
    const reader = Effect.suspend(() =>
      opened !== undefined ? Effect.succeed(opened) : FleetRegistry.makeReader({ timeoutMs: 1_000 }).pipe(
        Effect.provide(context),
        Effect.tap((made) => Effect.sync(() => (opened = made)))
      )
    )
    /**
     * How an id of a machine's earlier run was lost: from the registry when the machine recorded it (a stop
     * records its open terminals lost, "daemon-stopped", at the stop), else died, now (a killed machine wrote
     * no end). Neither the registry's absence nor its silence delays the answer past its read's deadline.
     */
    const lostOf = (sessionId: string, machine: string) =>
      Effect.flatMap(reader, (registry) => registry.get(machine, sessionId)).pipe(
        Effect.timeout(1_500),
        Effect.orElseSucceed(() => Option.none<FleetRegistry.Entry>()),
        Effect.map((entry) => {
          const ended = Option.getOrUndefined(entry)
          const recorded = ended?.status === "lost" ? ended.ended : undefined
          return new Errors.SessionLost({
            sessionId,
            lostAt: new Date(recorded?.at ?? clock.unsafeCurrentTimeMillis()).toISOString(),
            reason: recorded?.reason === "daemon-stopped" ? "daemon-stopped" : "daemon-died"
          })
        })
      )

    /** The machine of `sessionId`, or the error that answers it without asking any machine. */
    const home = (sessionId: string): Effect.Effect<string, Errors.SessionNotFound | Errors.SessionLost> =>
      Effect.flatMap(
        directory.machines,
        (machines): Effect.Effect<string, Errors.SessionNotFound | Errors.SessionLost> => {
          const place = FleetIds.parse(sessionId)
          if (place === undefined) return Effect.fail(new Errors.SessionNotFound({ sessionId }))
          const now = machines.find((machine) => machine.machine === place.machine)
          if (now !== undefined && now.run !== place.run) return Effect.flip(lostOf(sessionId, place.machine))
          return Effect.succeed(place.machine)
        }
      )
    const byId =
      (owner: Ids.OwnerId) => <A, E>(sessionId: string, use: (client: machineClients.Client) => Effect.Effect<A, E>) =>
        Effect.flatMap(home(sessionId), (machine) => call(owner, machine, use))

    /** Every machine in the directory or in session now (the owner's sessions). */
    const everyMachine = (owner: Ids.OwnerId) =>
      Effect.zipWith(directory.machines, clientsOf(owner), (machines, clients) => [
        ...new Set([...machines.map((machine) => machine.machine), ...clients.connected()])
      ])
    /** `use` on every machine that answers; a machine that does not is left out (and logged). */
    const fanOut = <A>(
      owner: Ids.OwnerId,
      use: (client: machineClients.Client) => Effect.Effect<ReadonlyArray<A>, unknown>
    ) =>
      Effect.flatMap(everyMachine(owner), (machines) =>
        Effect.forEach(machines, (machine) =>
          call(owner, machine, use).pipe(
            Effect.catchAllCause((cause) =>
              Effect.logWarning(`fleet: machine ${machine} left out of a list`, cause).pipe(Effect.as([]))
            )
          ), { concurrency: "unbounded" })).pipe(Effect.map((lists) =>
            lists.flat()
          ))

    /** A task's machine: the one it came from, else each machine in turn until one knows it. */
    const byTask = (owner: Ids.OwnerId) =>
    <A, E>(
      taskId: string,
      use: (client: machineClients.Client) => Effect.Effect<A, E>
    ): Effect.Effect<A, machineClients.Own<E> | Errors.TaskNotFound> =>
      Effect.suspend(() => {
        const known = taskHomes.get(taskId)
        if (known !== undefined) return call(owner, known, use)
        return Effect.flatMap(
          everyMachine(owner),
          (machines): Effect.Effect<A, machineClients.Own<E> | Errors.TaskNotFound> => {
            const attempt = (rest: ReadonlyArray<string>): Effect.Effect<A, machineClients.Own<E>> =>
              rest.length === 1
                ? call(owner, rest[0]!, use)
                : call(owner, rest[0]!, use).pipe(
                  Effect.catchIf(
                    (error) => (error as { _tag?: string })._tag === "TaskNotFound",
                    () => attempt(rest.slice(1))
                  )
                )
            return machines.length === 0 ? Effect.fail(new Errors.TaskNotFound({ taskId })) : attempt(machines)
          }
        )
      })

    /** With many owners, an owner that never called has nothing anywhere: closing it asks no machine. */
    const known = (owner: Ids.OwnerId, effect: Effect.Effect<void>): Effect.Effect<void> =>
      Effect.suspend(() => isKnown(owner) ? effect : Effect.void)

    // A machine that is not there, or none with the labels: the caller's input, typed (the model can fix it).
    const placed = Effect.flatMap(FiberRef.get(CorePlacement.current), (request) =>
      Effect.mapError(directory.place(request), (error) =>
        new Errors.InvalidInput({
          field: request.machine !== undefined ? "machine" : "labels",
          reason: error.message
        })))

    /**
     * Every operation of `table` whose first argument is `first` (a session's or a task's id), routed by that
     * id with `route`: the payload is the arguments by name, as `RemoteTerminal` sends them. A new operation
     * on a session or a task reaches the fleet from its declaration alone; the others are written below.
     */
    const routedBy = <Ops extends Operation.Table>(
      table: Ops,
      first: string,
      route: (
        owner: Ids.OwnerId
      ) => (id: string, use: (client: machineClients.Client) => Effect.Effect<unknown, unknown>) => unknown
    ): Partial<Operation.ServiceOf<Ops>> => {
      const service: Record<string, unknown> = {}
      for (const [method, operation] of Object.entries(table)) {
        if (operation.args[0]?.name !== first) {
          continue
        }
        service[method] = (owner: Ids.OwnerId, ...args: ReadonlyArray<unknown>) =>
          route(owner)(String(args[0]), (client) =>
            (client as unknown as Record<string, (payload: unknown) => Effect.Effect<unknown, unknown>>)[
              operation.tag
            ]!(Operation.payloadOf(operation, args)))
      }
      return service as Partial<Operation.ServiceOf<Ops>>
    }

    const pty = PtyService.PtyService.of({
      ...(routedBy(PtyService.operations, "sessionId", byId) as Operation.ServiceOf<typeof PtyService.operations>),
      open: (owner, request) =>
        Effect.flatMap(placed, (machine) =>
          call(owner, machine.machine, (client) =>
            client.Open({ request }))),
      send: (owner, sessionId, request) =>
        Effect.flatMap(
          home(sessionId),
          (machine) =>
            call(owner, machine, (client) =>
              client.Send({ sessionId, request })).pipe(Effect.map(noted(owner, machine)))
        ),
      requestHuman: (owner, sessionId, request) =>
        Effect.flatMap(
          home(sessionId),
          (machine) =>
            call(owner, machine, (client) =>
              client.RequestHuman({ sessionId, request })).pipe(Effect.map(noted(owner, machine)))
        ),
      list: (owner) =>
        fanOut(owner, (client) =>
          client.List({})),
      closeOwner: (owner) =>
        known(
          owner,
          Effect.asVoid(fanOut(owner, (client) =>
            Effect.as(client.CloseOwner({}), [])))
        ).pipe(
          Effect.ensuring(release(owner))
        ),
      configureSandbox: (owner, policy) =>
        Effect.flatMap(everyMachine(owner), (machines) =>
          Effect.forEach(machines, (machine) =>
            call(owner, machine, (client) =>
              client.ConfigureSandbox({ policy })), {
            discard: true
          })),
      sandboxOf: (owner) =>
        Effect.flatMap(Effect.orDie(placed), (machine) =>
          call(owner, machine.machine, (client) =>
            client.SandboxOf({}))),
      watch: (owner, sessionId, watchOptions) =>
        Effect.gen(function*() {
          const machine = yield* home(sessionId)
          const clients = yield* clientsOf(owner)
          const { client } = yield* clients.session(machine)
          const mailbox = yield* client.Watch({
            sessionId,
            ...(watchOptions?.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: watchOptions.maxBufferedBytes })
          }, { asMailbox: true })
          return yield* remoteWatch.fromMailbox(machine, mailbox, {
            now: () => clock.unsafeCurrentTimeMillis(),
            isTransport: clients.isTransport,
            typed: (error): error is Errors.SessionNotFound | Errors.SessionExited =>
              !clients.isTransport(error) && (error as { _tag?: string })._tag !== "NoSuchElementException"
          })
        }) as ReturnType<NonNullable<PtyService.PtyService["Type"]["watch"]>>
    })

    const tasks = TaskRuntime.Tasks.of({
      ...(routedBy(TaskRuntime.operations, "taskId", byTask) as Operation.ServiceOf<typeof TaskRuntime.operations>),
      list: (owner) => fanOut(owner, (client) => client.TaskList({})),
      remove: (owner, taskId) =>
        forget(owner, taskId, byTask(owner)(taskId, (client) => client.TaskRemove({ taskId }))),
      removeOwner: (owner) =>
        known(owner, Effect.asVoid(fanOut(owner, (client) => Effect.as(client.TaskRemoveOwner({}), [])))).pipe(
          Effect.ensuring(Effect.sync(() => {
            for (const taskId of ownTasks.get(owner) ?? []) taskHomes.delete(taskId)
            ownTasks.delete(owner)
          }))
        ),
      completions
    })

    const exec = Exec.Exec.of({
      ...(routedBy(Exec.operations, "taskId", byTask) as Operation.ServiceOf<typeof Exec.operations>),
      shell: machineShell,
      exec: (owner, request) =>
        Effect.flatMap(Effect.orDie(placed), ({ machine }) =>
          Effect.gen(function*() {
            const clients = yield* clientsOf(owner)
            const { hello } = yield* clients.session(machine)
            return yield* call(owner, machine, (client) => client.ExecRun({ request: withShell(request, hello.shell) }))
          }).pipe(Effect.map(noted(owner, machine)))),
      remove: (owner, taskId) =>
        forget(owner, taskId, byTask(owner)(taskId, (client) => client.ExecRemove({ taskId }))),
      list: (owner) => fanOut(owner, (client) => client.ExecList({}))
    })

    return { pty, tasks, exec, fleet: { directory, machineOf: (id) => FleetIds.parse(id)?.machine } }
  })

/**
 * `PtyService`, `TaskRuntime` and `Exec` over the fleet, and `Fleet`.
 *
 * @since 0.3.0
 */
export const layer = (
  options: Options = {}
): Layer.Layer<PtyService.PtyService | TaskRuntime.Tasks | Exec.Exec | Fleet, NotPermitted, Nats> =>
  Layer.scopedContext(
    Effect.map(make(options), ({ exec, fleet, pty, tasks }) =>
      Context.make(PtyService.PtyService, pty).pipe(
        Context.add(TaskRuntime.Tasks, tasks),
        Context.add(Exec.Exec, exec),
        Context.add(Fleet, fleet)
      ))
  )
