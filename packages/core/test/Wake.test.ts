import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/TestClock"
import {
  Activity,
  afterPoll,
  Cadence,
  CancelSignal,
  makeTimers,
  nextTurn,
  SendDone
} from "../src/internal/clock/wake.js"
import { probeCadence } from "../src/internal/readiness/stdin.js"

describe("wake-up primitives", () => {
  it.effect("timers follow the fiber's clock: under the TestClock a callback fires when the clock reaches it", () =>
    Effect.gen(function*() {
      const timers = yield* makeTimers
      expect(timers.now()).toBe(0)
      const fired: Array<number> = []
      timers.after(10, () => fired.push(timers.now()))
      const cancel = timers.after(20, () => fired.push(-1))
      timers.after(Number.POSITIVE_INFINITY, () => fired.push(-2))
      yield* TestClock.adjust(9)
      expect(fired).toEqual([])
      yield* TestClock.adjust(1)
      expect(fired).toEqual([10])
      cancel()
      yield* TestClock.adjust(100)
      expect(fired).toEqual([10])
    }))

  it.live("timers of the live clock are Date.now and setTimeout", () =>
    Effect.gen(function*() {
      const timers = yield* makeTimers
      expect(Math.abs(timers.now() - Date.now())).toBeLessThan(50)
      const fired = yield* Effect.async<boolean>((resume) => {
        timers.after(1, () => resume(Effect.succeed(true)))
      })
      expect(fired).toBe(true)
    }))

  it.effect("Activity: a change after the version was taken wakes at once; otherwise the wait ends at its time", () =>
    Effect.gen(function*() {
      const activity = new Activity(yield* makeTimers)
      const seen = activity.version
      activity.notify()
      expect(yield* activity.changeOrSleep(seen, 1000)).toBe(true)
      const now = activity.version
      const waiting = yield* Effect.fork(activity.changeOrSleep(now, 50))
      yield* TestClock.adjust(49)
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      yield* TestClock.adjust(1)
      expect(yield* Fiber.join(waiting)).toBe(false)
      const woken = yield* Effect.fork(activity.changeOrSleep(activity.version, 50))
      yield* Effect.yieldNow()
      activity.notify()
      expect(yield* Fiber.join(woken)).toBe(true)
      expect(yield* activity.quietFor(activity.version, 0)).toBe(true)
    }))

  it.effect("Activity: a relevant-change wait sleeps through the other changes, wakes on one it asks for", () =>
    Effect.gen(function*() {
      const activity = new Activity(yield* makeTimers)
      let markers = 0
      const asked: Array<number> = []
      const relevant = () => {
        asked.push(activity.version)
        return markers > 0
      }
      // changes before the wait that are not relevant do not end it at once
      const seen = activity.version
      activity.notify()
      const waiting = yield* Effect.fork(activity.relevantChangeOrSleep(seen, 100, relevant))
      yield* Effect.yieldNow()
      for (let i = 0; i < 5; i++) activity.notify()
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      markers++
      activity.notify()
      expect(yield* Fiber.join(waiting)).toBe(true)
      expect(asked).toEqual([1, 2, 3, 4, 5, 6, 7])
      // nothing relevant: the wait ends at its time, and leaves no listener behind
      const timed = yield* Effect.fork(activity.relevantChangeOrSleep(activity.version, 50, () => false))
      yield* Effect.yieldNow()
      activity.notify()
      yield* TestClock.adjust(50)
      expect(yield* Fiber.join(timed)).toBe(false)
      const before = asked.length
      markers = 0
      activity.notify()
      expect(asked.length).toBe(before)
      // a relevant change that came before the wait ends it at once
      markers++
      const changed = activity.version
      activity.notify()
      expect(yield* activity.relevantChangeOrSleep(changed, 1000, relevant)).toBe(true)
    }))

  it.effect("Activity: an interrupted wait leaves no listener behind", () =>
    Effect.gen(function*() {
      const activity = new Activity(yield* makeTimers)
      const calls: Array<number> = []
      const unlisten = activity.listen(() => calls.push(activity.version))
      const waiting = yield* Effect.fork(activity.change(activity.version))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiting)
      activity.notify()
      unlisten()
      activity.notify()
      expect(calls).toEqual([1])
    }))

  it.effect("Once: listeners run once, late listeners at once, await completes", () =>
    Effect.gen(function*() {
      const cancel = new CancelSignal()
      const seen: Array<string> = []
      const unlisten = cancel.listen(() => seen.push("removed"))
      unlisten()
      cancel.listen(() => seen.push("early"))
      const waiting = yield* Effect.fork(cancel.await)
      yield* Effect.yieldNow()
      expect(cancel.cancelled).toBe(false)
      cancel.cancel()
      cancel.cancel()
      yield* Fiber.join(waiting)
      cancel.listen(() => seen.push("late"))
      expect(seen).toEqual(["early", "late"])
      const done = new SendDone()
      done.open()
      yield* done.await
      expect(done.happened).toBe(true)
    }))

  it.effect("Cadence: a Schedule's delays one at a time, started over by reset (the stdin tier's probes)", () =>
    Effect.gen(function*() {
      const timers = yield* makeTimers
      const cadence = new Cadence(probeCadence(50), timers)
      const delays: Array<number | undefined> = []
      for (let i = 0; i < 9; i++) delays.push(yield* cadence.next())
      expect(delays).toEqual([1, 2, 4, 8, 16, 32, 50, 50, 50])
      cadence.reset()
      expect(yield* cadence.next()).toBe(1)
      const twice = new Cadence(Schedule.recurs(1), timers)
      expect([yield* twice.next(), yield* twice.next()]).toEqual([0, undefined])
    }))

  it.live("event-loop turns: nextTurn after this turn's callbacks, afterPoll after the next poll for I/O", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      setImmediate(() => order.push("immediate"))
      yield* nextTurn
      order.push("nextTurn")
      yield* afterPoll
      order.push("afterPoll")
      expect(order).toEqual(["immediate", "nextTurn", "afterPoll"])
    }))
})
