import { Errors, Ids, PtyService } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { failureOf } from "../support/terminal.js"
import { FakeTerminal, JOB_GROUP, makeGate, makeWorld, SHELL_PID } from "./fakes.js"
import { alive, commOf, containments, openTagged, owner, TeardownTerminal, waitUntil } from "./support.js"

const world = makeWorld()

/** Wait until python runs on the session's terminal and has turned ISIG off (`stty` reads the pty's modes). */
const rawProgram = (shellPid: number, tagged: () => Array<number>) =>
  Effect.gen(function*() {
    const tty = fs.readlinkSync(`/proc/${shellPid}/fd/0`)
    const isigOff = () => /(^|\s)-isig(\s|$)/.test(execFileSync("stty", ["-a", "-F", tty], { encoding: "utf8" }))
    const python = () => tagged().find((pid) => commOf(pid).startsWith("python"))
    yield* waitUntil(() => python() !== undefined && isigOff())
    expect(isigOff()).toBe(true)
    return python()!
  })

const openFake = Effect.gen(function*() {
  world.events.length = 0
  world.foreground = Option.some(JOB_GROUP)
  world.probeGate = undefined
  world.writeGate = undefined
  world.signalGate = undefined
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, { argv: ["fake-program"] })
  const id = Ids.SessionId.make(opened.sessionId)
  yield* Effect.addFinalizer(() => service.close(owner, id).pipe(Effect.ignore))
  world.events.length = 0
  return { service, id }
})

/** Events after the write of `text` began (the fake's log also holds the stdin probes of readiness). */
const after = (text: string) => world.events.slice(world.events.indexOf(`write:${text}`))

layer(FakeTerminal(world), { excludeTestServices: true })("cancel, against a scripted backend (17)", (it) => {
  it.scoped("a cancel that wins before the write: the input is never written, nothing is signalled", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      const gate = yield* makeGate
      world.probeGate = gate
      const send = yield* Effect.fork(service.send(owner, id, { text: "never" }))
      yield* Deferred.await(gate.entered)
      const result = yield* service.cancel(owner, id)
      world.probeGate = undefined
      expect(result).toEqual({ cancelled: true, written: false, discarded: 0, signalled: [] })
      expect(Exit.isInterrupted(yield* Fiber.await(send))).toBe(true)
      expect(world.events.filter((event) => event.startsWith("write:") || event.startsWith("signal:"))).toEqual([])
      const next = yield* service.send(owner, id, { text: "next", timeoutMs: 50 })
      expect(next.waitReason).toBe("timeout")
      expect(world.events).toContain("landed:next\r")
    }))

  it.scoped("a cancel during the write signals only after the write landed, and holds the slot until then", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      const gate = yield* makeGate
      world.writeGate = gate
      const send = yield* Effect.fork(service.send(owner, id, { text: "slow" }))
      yield* Deferred.await(gate.entered)
      const cancel = yield* Effect.fork(service.cancel(owner, id))
      yield* Effect.sleep(100)
      expect(cancel.unsafePoll()).toBeNull()
      expect(after("slow\r")).toEqual(["write:slow\r"])
      const busy = yield* Effect.exit(service.send(owner, id, { text: "busy" }))
      expect(failureOf(busy)).toBeInstanceOf(Errors.SendActive)
      yield* Deferred.succeed(gate.release, undefined)
      world.writeGate = undefined
      const result = yield* Fiber.join(cancel)
      expect(result).toEqual({ cancelled: true, written: true, discarded: 0, signalled: [JOB_GROUP] })
      const order = after("slow\r").filter((event) => !event.startsWith("write:busy"))
      expect(order.slice(0, 4)).toEqual([
        "write:slow\r",
        "landed:slow\r",
        "discard",
        `signal:${JOB_GROUP}:SIGINT`
      ])
      expect(Exit.isInterrupted(yield* Fiber.await(send))).toBe(true)
      expect(world.events.some((event) => event.startsWith("write:busy"))).toBe(false)
      expect((yield* service.send(owner, id, { text: "free", timeoutMs: 50 })).waitReason).toBe("timeout")
    }))

  it.scoped("the slot stays held until the SIGINT is delivered", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      const gate = yield* makeGate
      world.signalGate = gate
      const send = yield* Effect.fork(service.send(owner, id, { text: "run" }))
      yield* waitUntil(() => world.events.includes("landed:run\r"))
      const cancel = yield* Effect.fork(service.cancel(owner, id))
      yield* Deferred.await(gate.entered)
      const busy = yield* Effect.exit(service.send(owner, id, { text: "busy" }))
      expect(failureOf(busy)).toBeInstanceOf(Errors.SendActive)
      yield* Deferred.succeed(gate.release, undefined)
      world.signalGate = undefined
      yield* Fiber.join(cancel)
      yield* Fiber.await(send)
      expect(world.events).toContain(`delivered:${JOB_GROUP}:SIGINT`)
      expect((yield* service.send(owner, id, { text: "free", timeoutMs: 50 })).waitReason).toBe("timeout")
    }))

  it.scoped("interrupting the caller is the cancel: a timeout around send signals the foreground group", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      const timedOut = yield* service.send(owner, id, { text: "wait" }).pipe(Effect.timeout(100), Effect.exit)
      expect(Exit.isFailure(timedOut)).toBe(true)
      expect(after("wait\r")).toContain(`delivered:${JOB_GROUP}:SIGINT`)
      expect((yield* service.send(owner, id, { text: "free", timeoutMs: 50 })).waitReason).toBe("timeout")
      expect(yield* service.cancel(owner, id)).toEqual({
        cancelled: false,
        written: false,
        discarded: 0,
        signalled: []
      })
    }))

  it.scoped("an unresolvable foreground group: signal is refused, cancel signals nothing — no guessed pid (16)", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      world.foreground = Option.none()
      const refused = yield* Effect.exit(service.signal(owner, id, "SIGINT"))
      expect(failureOf(refused)).toBeInstanceOf(Errors.SignalRefused)
      const send = yield* Effect.fork(service.send(owner, id, { text: "x" }))
      yield* waitUntil(() => world.events.includes("landed:x\r"))
      const result = yield* service.cancel(owner, id)
      expect(result).toEqual({ cancelled: true, written: true, discarded: 0, signalled: [] })
      yield* Fiber.await(send)
      expect(world.events.filter((event) => event.startsWith("signal:"))).toEqual([])
    }))

  it.scoped("SIGKILL aimed at the shell itself is refused (16)", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openFake
      world.foreground = Option.some(SHELL_PID)
      const refused = yield* Effect.exit(service.signal(owner, id, "SIGKILL"))
      expect(failureOf(refused)).toBeInstanceOf(Errors.SignalRefused)
      expect(world.events.filter((event) => event.startsWith("signal:"))).toEqual([])
    }))
})

for (const containment of containments) {
  layer(TeardownTerminal(containment), { excludeTestServices: true })(
    `cancel of real programs (${containment})`,
    (it) => {
      it.scoped("cancel stops a running command with a real SIGINT; the prompt is back (14, 17)", () =>
        Effect.gen(function*() {
          const { id, send, service, tagged } = yield* openTagged()
          const running = yield* Effect.fork(send("sleep 60; echo after"))
          yield* waitUntil(() => tagged().some((pid) => commOf(pid) === "sleep"))
          const sleeper = tagged().find((pid) => commOf(pid) === "sleep")!
          const result = yield* service.cancel(owner, id)
          expect(result.cancelled).toBe(true)
          expect(result.written).toBe(true)
          expect(result.signalled.length).toBeGreaterThan(0)
          expect(Exit.isInterrupted(yield* Fiber.await(running))).toBe(true)
          yield* waitUntil(() => !alive(sleeper))
          expect(alive(sleeper)).toBe(false)
          const next = yield* send("echo back")
          expect(next.waitReason).toBe("prompt")
          expect(next.output).toBe("back")
        }))

      it.scoped("a cancel right after the write still stops the command the shell was starting (17)", () =>
        Effect.gen(function*() {
          const { send, tagged } = yield* openTagged()
          for (let round = 0; round < 12; round++) {
            const exit = yield* send("sleep 60").pipe(Effect.timeout(round), Effect.exit)
            expect(Exit.isFailure(exit)).toBe(true)
            yield* waitUntil(() => tagged().length === 0, 2_000)
            expect(tagged()).toEqual([])
            const next = yield* send("echo ready")
            expect(next.output.split("\n")).toContain("ready")
          }
        }))

      it.scoped("a raw-mode program with ISIG off ignores ^C but stops at cancel (15)", () =>
        Effect.gen(function*() {
          const { id, opened, send, service, tagged } = yield* openTagged()
          const script = "import sys,time,tty; tty.setraw(0); print('raw', flush=True); time.sleep(60)"
          yield* send(`python3 -c "${script}"`, { idleMs: 300 })
          const python = yield* rawProgram(opened.pid, tagged)
          const ctrlC = yield* service.send(owner, id, { keys: ["C-c"], idleMs: 300 })
          expect(ctrlC.waitReason).not.toBe("prompt")
          expect(alive(python)).toBe(true)
          const running = yield* Effect.fork(service.send(owner, id, { text: "", submit: false, idleMs: 30_000 }))
          yield* Effect.sleep(50)
          const result = yield* service.cancel(owner, id)
          expect(result.signalled.length).toBeGreaterThan(0)
          // The ^C nobody read (ISIG off: just a byte in the input queue) is dropped, as a real ^C flushes.
          expect(result.discarded).toBe(1)
          yield* Fiber.await(running)
          yield* waitUntil(() => !alive(python))
          expect(alive(python)).toBe(false)
          yield* send("stty sane")
          const back = yield* send("echo sane")
          expect(back.waitReason).toBe("prompt")
          expect(back.output).toBe("sane")
        }))

      it.scoped("SIGINT through terminal_signal stops the raw-mode program too (15)", () =>
        Effect.gen(function*() {
          const { id, opened, send, service, tagged } = yield* openTagged()
          const script = "import sys,time,tty; tty.setraw(0); print('raw', flush=True); time.sleep(60)"
          yield* send(`python3 -c "${script}"`, { idleMs: 300 })
          const python = yield* rawProgram(opened.pid, tagged)
          const signalled = yield* service.signal(owner, id, "SIGINT")
          expect(signalled.delivered).toBe(true)
          yield* waitUntil(() => !alive(python))
          expect(alive(python)).toBe(false)
          yield* send("stty sane")
          expect((yield* send("echo ok")).output).toBe("ok")
        }))
    }
  )
}
