/**
 * One-shot runs keep the service's `Clock`: under a `TestClock` a real program's yield window, its overall
 * timeout and the elapsed time it reports are test time — a quarter of an hour's deadline passes when the test moves
 * the clock, and the program is ended for it.
 */
import { Exec } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { owner, TestTerminal } from "../support/terminal.js"
import { sleepers, uniqueSleep } from "./support.js"

/** Real time passing (a timer of the event loop), while the test clock stands still. */
const realMillis = (ms: number) =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

/** Look again every 20 ms of real time, up to ~10 s, until `until` holds. */
const eventually = (until: () => Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 500; attempt++) {
      if (yield* until()) return
      yield* realMillis(20)
    }
    return yield* Effect.dieMessage("the condition never held")
  })

const TIMEOUT = 900_000

describe("exec on the service's clock", () => {
  for (const mode of ["child", "pty"] as const) {
    it.scoped(
      `${mode}: the yield window, the timeout and the elapsed time are the TestClock's`,
      () =>
        Effect.gen(function*() {
          const exec = yield* Exec.Exec
          const seconds = uniqueSleep()
          const spawn: Exec.Spawn = mode === "child"
            ? { _tag: "child", argv: ["sleep", seconds] }
            : { _tag: "pty", command: `sleep ${seconds}` }
          const first = yield* Effect.fork(
            exec.exec(owner, { spawn, yieldMs: 600_000, timeoutMs: TIMEOUT, noOutputTimeoutMs: 0 })
          )
          yield* eventually(() => Effect.sync(() => sleepers(seconds).length === 1))
          // real time passes; the ten-minute window of test time does not
          yield* realMillis(200)
          expect(Option.isNone(yield* Fiber.poll(first))).toBe(true)
          yield* TestClock.adjust(600_000)
          const view = yield* Fiber.join(first)
          expect(view).toMatchObject({ status: "running", elapsedMs: 600_000 })
          const taskId = view.taskId!
          yield* Effect.addFinalizer(() => exec.remove(owner, taskId).pipe(Effect.ignore))
          expect(sleepers(seconds)).toHaveLength(1)
          // the quarter hour's deadline passes in test time: the run is ended for it (the teardown's grace periods are
          // test time too: the clock moves on by 100 ms per 20 ms of real time until the run has ended)
          yield* TestClock.adjust(TIMEOUT - 600_000)
          yield* eventually(() =>
            exec.poll(owner, taskId, {}).pipe(
              Effect.orDie,
              Effect.tap((polled) => polled.status === "running" ? TestClock.adjust(100) : Effect.void),
              Effect.map((polled) => polled.status !== "running")
            )
          )
          const ended = yield* exec.poll(owner, taskId, {})
          expect(ended).toMatchObject({ status: "killed", reason: "timeout" })
          expect(ended.elapsedMs).toBeGreaterThanOrEqual(TIMEOUT)
          expect(ended.elapsedMs).toBeLessThan(TIMEOUT + 60_000)
          expect(sleepers(seconds)).toEqual([])
        }).pipe(Effect.provide(TestTerminal())),
      60_000
    )
  }
})
