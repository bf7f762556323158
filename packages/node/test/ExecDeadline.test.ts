import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { Activity, expiry, verdict } from "../src/internal/exec/deadline.js"

describe("exec deadlines", () => {
  it("no limit: nothing ever expires", () => {
    expect(verdict({ timeoutMs: 0, noOutputTimeoutMs: 0 }, 0, 0, 1e12)).toEqual({
      _tag: "Wait",
      ms: Number.POSITIVE_INFINITY
    })
  })

  it("the overall timeout counts from the start, whatever the activity", () => {
    const limits = { timeoutMs: 1000, noOutputTimeoutMs: 0 }
    expect(verdict(limits, 0, 990, 500)).toEqual({ _tag: "Wait", ms: 500 })
    expect(verdict(limits, 0, 999, 1000)).toEqual({ _tag: "Expired", reason: "timeout" })
  })

  it("the watchdog counts from the last activity (or the start)", () => {
    const limits = { timeoutMs: 0, noOutputTimeoutMs: 300 }
    expect(verdict(limits, 100, 0, 350)).toEqual({ _tag: "Wait", ms: 50 })
    expect(verdict(limits, 0, 200, 450)).toEqual({ _tag: "Wait", ms: 50 })
    expect(verdict(limits, 0, 200, 500)).toEqual({ _tag: "Expired", reason: "no_output" })
  })

  it("when both passed, the one that passed first is the reason", () => {
    const limits = { timeoutMs: 1000, noOutputTimeoutMs: 300 }
    expect(verdict(limits, 0, 500, 2000)).toEqual({ _tag: "Expired", reason: "no_output" })
    expect(verdict(limits, 0, 900, 2000)).toEqual({ _tag: "Expired", reason: "timeout" })
  })

  it.effect("expiry: activity keeps the watchdog away; silence ends the run", () =>
    Effect.gen(function*() {
      let now = 0
      const activity = new Activity(0)
      const step = (ms: number) =>
        Effect.gen(function*() {
          now += ms
          yield* TestClock.adjust(ms)
        })
      const fiber = yield* Effect.fork(expiry({ timeoutMs: 0, noOutputTimeoutMs: 300 }, 0, activity, () => now))
      for (let i = 0; i < 10; i++) {
        yield* step(200)
        activity.notify(now)
        expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      }
      yield* step(300)
      expect(yield* Fiber.join(fiber)).toBe("no_output")
    }))

  it.effect("expiry: the overall timeout ends a run that never stops talking", () =>
    Effect.gen(function*() {
      let now = 0
      const activity = new Activity(0)
      const fiber = yield* Effect.fork(expiry({ timeoutMs: 1000, noOutputTimeoutMs: 300 }, 0, activity, () => now))
      for (let i = 0; i < 6; i++) {
        now += 200
        activity.notify(now)
        yield* TestClock.adjust(200)
      }
      expect(yield* Fiber.join(fiber)).toBe("timeout")
    }))

  it("activity: every change bumps the version and wakes the waiters", () => {
    const activity = new Activity(5)
    const before = activity.changed
    activity.notify(undefined)
    expect(activity.lastAt).toBe(5)
    expect(activity.version).toBe(1)
    expect(activity.changed).not.toBe(before)
    activity.notify(9)
    expect(activity.lastAt).toBe(9)
  })
})
