/**
 * A scripted backend and inspector, for the service's own logic around cancel and close: when the write
 * lands, when the signal goes out, what a close does when the backend's exit never arrives or its
 * teardown leaves survivors. Real processes cannot be slowed down at exactly these points.
 */
import {
  Errors,
  ProcessInspector,
  PtyBackend,
  PtyService,
  Sandbox,
  TaskRuntime,
  type TerminalConfig
} from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"

/** A point where a fake operation stops until the test lets it go on. */
export interface Gate {
  readonly entered: Deferred.Deferred<void>
  readonly release: Deferred.Deferred<void>
}

export const makeGate: Effect.Effect<Gate> = Effect.map(
  Effect.all([Deferred.make<void>(), Deferred.make<void>()]),
  ([entered, release]) => ({ entered, release })
)

const pass = (gate: Gate | undefined) =>
  gate === undefined ? Effect.void : Deferred.succeed(gate.entered, undefined).pipe(
    Effect.zipRight(Deferred.await(gate.release))
  )

/** What the fakes did, in order, and how the next calls behave. */
export interface World {
  readonly events: Array<string>
  /** The terminal's foreground group; `None`: unresolvable. */
  foreground: Option.Option<number>
  probeGate: Gate | undefined
  writeGate: Gate | undefined
  signalGate: Gate | undefined
  /** Outcomes of the next `terminate` calls (then `ok`). */
  terminations: Array<"ok" | "fail">
  /** `terminate` succeeds but the process's exit is never reported. */
  exitNeverArrives: boolean
}

export const SHELL_PID = 4242
export const JOB_GROUP = 777
export const SURVIVOR = 31337

export const makeWorld = (): World => ({
  events: [],
  foreground: Option.some(JOB_GROUP),
  probeGate: undefined,
  writeGate: undefined,
  signalGate: undefined,
  terminations: [],
  exitNeverArrives: false
})

const backend = (world: World) =>
  Layer.succeed(
    PtyBackend.PtyBackend,
    PtyBackend.PtyBackend.of({
      spawn: (request) =>
        Effect.gen(function*() {
          const output = yield* Mailbox.make<Uint8Array>()
          const exited = yield* Deferred.make<PtyBackend.ExitStatus>()
          return {
            pid: SHELL_PID,
            ttyPath: undefined,
            containment: "sweep",
            output,
            exited: Deferred.await(exited),
            write: (data) =>
              Effect.gen(function*() {
                const text = typeof data === "string" ? data : Buffer.from(data).toString("utf8")
                world.events.push(`write:${text}`)
                yield* pass(world.writeGate)
                world.events.push(`landed:${text}`)
              }),
            discardInput: Effect.sync(() => {
              world.events.push("discard")
              return 0
            }),
            resize: () => Effect.void,
            pause: Effect.void,
            resume: Effect.void,
            signalGroup: (pgid, signal) =>
              Effect.gen(function*() {
                world.events.push(`signal:${pgid}:${signal}`)
                yield* pass(world.signalGate)
                world.events.push(`delivered:${pgid}:${signal}`)
                return true
              }),
            terminate: Effect.suspend(() => {
              const outcome = world.terminations.shift() ?? "ok"
              world.events.push(`terminate:${outcome}`)
              if (outcome === "fail") {
                return Effect.fail(new Errors.CleanupFailed({ sessionId: request.label, survivors: [SURVIVOR] }))
              }
              if (!world.exitNeverArrives) {
                Deferred.unsafeDone(exited, Effect.succeed({ exitCode: null, signal: "SIGKILL" }))
                output.unsafeDone(Exit.void)
              }
              return Effect.succeed({ containment: "sweep" as const, signalled: 0, survivors: [] })
            })
          } satisfies PtyBackend.PtyProcess
        })
    })
  )

const inspector = (world: World) =>
  Layer.succeed(
    ProcessInspector.ProcessInspector,
    ProcessInspector.ProcessInspector.of({
      exact: true,
      foregroundGroup: () => Effect.sync(() => world.foreground),
      probe: () => pass(world.probeGate).pipe(Effect.as<ProcessInspector.Probe>({ _tag: "Miss", reason: "scripted" })),
      processTree: () => Effect.succeed([])
    })
  )

/** Silence never ends a send here (the tests end them by timeout, cancel or close). */
const fakeConfig: TerminalConfig.TerminalConfigInput = {
  idleSilenceMs: 60_000,
  timeoutMs: 60_000,
  openTimeoutMs: 200
}

/** `PtyService` over the scripted backend and inspector (sessions are `command` sessions: no prompt). */
export const FakeTerminal = (world: World) =>
  PtyService.layerConfig(fakeConfig).pipe(
    Layer.provideMerge(TaskRuntime.layer),
    Layer.provide(Layer.mergeAll(
      backend(world),
      inspector(world),
      NodeTerminal.dialectsLayer,
      NodeTerminal.hostEnvironmentLayer(),
      Sandbox.layerNone
    ))
  )
