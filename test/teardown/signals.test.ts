import { Errors, ProcessInspector, PtyService, Sandbox, TaskRuntime, type TerminalConfig } from "@agent-terminal/core"
import { LinuxInspector, NodePtyBackend, NodeTerminal } from "@agent-terminal/node"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { failureOf, testConfig } from "../support/terminal.js"
import { alive, commOf, openTagged, owner, waitUntil } from "./support.js"

const ownGroup = (): number => {
  const stat = fs.readFileSync("/proc/self/stat", "latin1")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])
}

/**
 * The real `/proc` inspector, except that a test can make it resolve the foreground group to something
 * else: nothing (unresolvable) or our own process group (a bug that must never turn into a signal).
 */
const hijack: { foreground: Option.Option<number> | undefined } = { foreground: undefined }

const HijackedInspector = Layer.effect(
  ProcessInspector.ProcessInspector,
  Effect.map(ProcessInspector.ProcessInspector, (real) =>
    ProcessInspector.ProcessInspector.of({
      ...real,
      foregroundGroup: (terminal) =>
        hijack.foreground === undefined ? real.foregroundGroup(terminal) : Effect.succeed(hijack.foreground)
    }))
).pipe(Layer.provide(LinuxInspector.layer))

const config: TerminalConfig.TerminalConfigInput = testConfig

const HijackedTerminal = PtyService.layerConfig(config).pipe(
  Layer.provideMerge(HijackedInspector),
  Layer.provideMerge(TaskRuntime.layer),
  Layer.provide(Layer.mergeAll(
    NodePtyBackend.layer,
    NodeTerminal.dialectsLayer,
    NodeTerminal.hostEnvironmentLayer(),
    Sandbox.layerNone
  ))
)

layer(HijackedTerminal, { excludeTestServices: true })("signals to the foreground group", (it) => {
  it.scoped("sleep 60, then SIGINT to the foreground group: the prompt is back (14)", () =>
    Effect.gen(function*() {
      hijack.foreground = undefined
      const { id, send, service, tagged } = yield* openTagged()
      const running = yield* send("sleep 60", { timeoutMs: 300 })
      expect(running.waitReason).toBe("timeout")
      const sleeper = tagged().find((pid) => commOf(pid) === "sleep")!
      const signalled = yield* service.signal(owner, id, "SIGINT")
      expect(signalled).toEqual({ delivered: true, targetPgid: sleeper })
      yield* waitUntil(() => !alive(sleeper))
      expect(alive(sleeper)).toBe(false)
      const back = yield* send("echo $?")
      expect(back.waitReason).toBe("prompt")
      expect(back.output).toBe("130")
    }))

  it.scoped("SIGKILL at the shell itself is refused: close instead (16)", () =>
    Effect.gen(function*() {
      hijack.foreground = undefined
      const { id, opened, send, service } = yield* openTagged()
      const refused = yield* Effect.exit(service.signal(owner, id, "SIGKILL"))
      expect(failureOf(refused)).toBeInstanceOf(Errors.SignalRefused)
      expect(alive(opened.pid)).toBe(true)
      expect((yield* send("echo alive")).output).toBe("alive")
    }))

  it.scoped("an unresolvable foreground group is an error, and nothing is signalled (16)", () =>
    Effect.gen(function*() {
      hijack.foreground = undefined
      const { id, opened, send, service, tagged } = yield* openTagged()
      yield* send("sleep 60", { timeoutMs: 300 })
      const sleeper = tagged().find((pid) => commOf(pid) === "sleep")!
      hijack.foreground = Option.none()
      const refused = yield* Effect.exit(service.signal(owner, id, "SIGTERM"))
      hijack.foreground = undefined
      expect(failureOf(refused)).toBeInstanceOf(Errors.SignalRefused)
      expect((failureOf(refused) as Errors.SignalRefused).reason).toContain("no pid is guessed")
      yield* Effect.sleep(100)
      expect(alive(sleeper)).toBe(true)
      expect(alive(opened.pid)).toBe(true)
      yield* service.signal(owner, id, "SIGINT")
      yield* waitUntil(() => !alive(sleeper))
    }))

  it.scoped("our own process group is never signalled, by signal or by cancel (23)", () =>
    Effect.gen(function*() {
      hijack.foreground = undefined
      const { id, send, service, tagged } = yield* openTagged()
      let received = 0
      const onCont = () => {
        received++
      }
      process.on("SIGCONT", onCont)
      yield* Effect.addFinalizer(() => Effect.sync(() => process.off("SIGCONT", onCont)))
      yield* send("sleep 60", { timeoutMs: 300 })
      const sleeper = tagged().find((pid) => commOf(pid) === "sleep")!
      hijack.foreground = Option.some(ownGroup())
      const result = yield* service.signal(owner, id, "SIGCONT")
      expect(result).toEqual({ delivered: false, targetPgid: ownGroup() })
      hijack.foreground = undefined
      const running = yield* Effect.fork(send("", { submit: false, timeoutMs: 30_000 }))
      yield* Effect.sleep(50)
      hijack.foreground = Option.some(ownGroup())
      const cancelled = yield* service.cancel(owner, id)
      hijack.foreground = undefined
      yield* Fiber.await(running)
      expect(cancelled.signalled).toEqual([])
      yield* Effect.sleep(100)
      expect(received).toBe(0)
      expect(alive(sleeper)).toBe(true)
      expect(alive(process.pid)).toBe(true)
      yield* service.signal(owner, id, "SIGINT")
      yield* waitUntil(() => !alive(sleeper))
    }))
})
