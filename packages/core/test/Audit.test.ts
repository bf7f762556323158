import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Audit from "../src/Audit.js"

const entry = (sessionId: string, n: number): Audit.AuditEntry => ({
  sessionId,
  at: n,
  actor: "agent",
  action: "send",
  detail: `#${n}`
})

const details = (entries: ReadonlyArray<Audit.AuditEntry>) => entries.map((e) => e.detail)

describe("the audit in memory", () => {
  it.effect("keeps a session's entries oldest first, the newest `limit` of them", () =>
    Effect.gen(function*() {
      const audit = Audit.makeMemory(100)
      for (let n = 1; n <= 10; n++) yield* audit.record(entry(n % 2 === 0 ? "a" : "b", n))
      expect(details(yield* audit.of("a"))).toEqual(["#2", "#4", "#6", "#8", "#10"])
      expect(details(yield* audit.of("b", 2))).toEqual(["#7", "#9"])
      expect(yield* audit.of("c")).toEqual([])
    }))

  it.effect("once full, drops the oldest entries and keeps the order across the wrap", () =>
    Effect.gen(function*() {
      const audit = Audit.makeMemory(5)
      for (let n = 1; n <= 13; n++) yield* audit.record(entry("a", n))
      expect(details(yield* audit.of("a"))).toEqual(["#9", "#10", "#11", "#12", "#13"])
      expect(details(yield* audit.of("a", 3))).toEqual(["#11", "#12", "#13"])
      yield* audit.record(entry("b", 14))
      expect(details(yield* audit.of("a"))).toEqual(["#10", "#11", "#12", "#13"])
      expect(details(yield* audit.of("b"))).toEqual(["#14"])
    }))

  it.effect("a capacity of 0 keeps nothing", () =>
    Effect.gen(function*() {
      const audit = Audit.makeMemory(0)
      yield* audit.record(entry("a", 1))
      expect(yield* audit.of("a")).toEqual([])
    }))

  it.effect("wraps many times over, keeping exactly the newest entries", () =>
    Effect.gen(function*() {
      const audit = Audit.makeMemory(1000)
      for (let n = 1; n <= 5500; n++) yield* audit.record(entry(n % 3 === 0 ? "b" : "a", n))
      const a = yield* audit.of("a", 5000)
      const b = yield* audit.of("b", 5000)
      expect(a.length + b.length).toBe(1000)
      expect([...a, ...b].map((e) => e.at).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 1000 }, (_, i) => 4501 + i)
      )
      expect(details(yield* audit.of("b", 1))).toEqual(["#5499"])
    }))
})
