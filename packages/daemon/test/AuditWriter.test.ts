import { Audit } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as path from "node:path"
import * as auditWriter from "../src/internal/auditWriter.js"
import * as Registry from "../src/TerminalRegistry.js"
import { tempDir } from "./support.js"

const entry = (i: number, sessionId = "s-1") => ({
  sessionId,
  at: i,
  actor: "owner:alice",
  action: "send",
  detail: `n${i}`
})

/** The in-memory registry, counting its writes. */
const counted = Effect.gen(function*() {
  const registry = yield* Effect.provide(Registry.TerminalRegistry, yield* Layer.build(Registry.layerMemory))
  const writes: Array<number> = []
  const store: auditWriter.Store = {
    audit: (changes) => Effect.zipRight(Effect.sync(() => writes.push(changes.length)), registry.audit(changes)),
    auditOf: registry.auditOf
  }
  return { registry, store, writes }
})

describe("the registry's audit, written behind", () => {
  it.scoped("an entry is not written on the path that records it, and the entries of one moment go in one write", () =>
    Effect.gen(function*() {
      const { registry, store, writes } = yield* counted
      const audit = yield* auditWriter.make(store, { flushMs: 20 })
      for (let i = 0; i < 50; i++) yield* audit.record(entry(i))
      expect(writes).toEqual([])
      expect(yield* registry.auditOf("s-1")).toEqual([])
      yield* TestClock.adjust(20)
      expect(writes).toEqual([50])
      expect((yield* registry.auditOf("s-1")).map((change) => change.at)).toEqual([...Array(50).keys()])
      // a later moment is a later write
      yield* audit.record(entry(50))
      yield* TestClock.adjust(20)
      expect(writes).toEqual([50, 1])
    }))

  it.scoped("a reader sees every entry recorded before it asked, in order, without waiting for the writer", () =>
    Effect.gen(function*() {
      const { store, writes } = yield* counted
      const audit = yield* auditWriter.make(store, { flushMs: 60_000 })
      yield* audit.record(entry(1))
      yield* audit.record(entry(2, "s-2"))
      yield* audit.record(entry(3))
      expect((yield* audit.of("s-1")).map((change) => change.at)).toEqual([1, 3])
      expect(writes).toEqual([3])
    }))

  it.scoped("past maxPending, recording waits for a write: nothing is dropped", () =>
    Effect.gen(function*() {
      const { registry, store, writes } = yield* counted
      const audit = yield* auditWriter.make(store, { flushMs: 60_000, maxPending: 3 })
      for (let i = 0; i < 7; i++) yield* audit.record(entry(i))
      expect(writes).toEqual([3, 3])
      expect((yield* registry.auditOf("s-1")).length).toBe(6)
      expect((yield* audit.of("s-1")).length).toBe(7)
    }))

  it.scoped("a failed write is logged and the recording goes on", () =>
    Effect.gen(function*() {
      const { store } = yield* counted
      let fail = true
      const flaky: auditWriter.Store = {
        audit: (changes) =>
          fail
            ? Effect.fail(new Registry.RegistryError({ operation: "audit", cause: "disk full" }))
            : store.audit(changes),
        auditOf: store.auditOf
      }
      const audit = yield* auditWriter.make(flaky, { flushMs: 20 })
      yield* audit.record(entry(1))
      yield* TestClock.adjust(20)
      fail = false
      yield* audit.record(entry(2))
      expect((yield* audit.of("s-1")).map((change) => change.at)).toEqual([2])
    }))

  it.scoped("SQLite: what is pending when the layer is released is written; the next daemon reads it", () =>
    Effect.gen(function*() {
      const filename = path.join(yield* tempDir, "state", "daemon.db")
      const registry = Registry.layerSqlite({ filename })
      yield* Effect.scoped(
        Effect.gen(function*() {
          const audit = yield* Audit.Audit
          for (let i = 0; i < 1200; i++) yield* audit.record(entry(i))
        }).pipe(Effect.provide(Registry.auditLayer.pipe(Layer.provide(registry))))
      )
      const read = yield* Effect.scoped(
        Effect.flatMap(Registry.TerminalRegistry, (r) => r.auditOf("s-1", 5000)).pipe(Effect.provide(registry))
      )
      expect(read.map((change) => change.at)).toEqual([...Array(1200).keys()])
      expect(read[7]).toEqual(entry(7))
    }))

  it.scoped("the writer stops with its scope", () =>
    Effect.gen(function*() {
      const { store, writes } = yield* counted
      const fiber = yield* Effect.fork(Effect.scoped(Effect.gen(function*() {
        const audit = yield* auditWriter.make(store, { flushMs: 60_000 })
        yield* audit.record(entry(1))
      })))
      yield* Fiber.join(fiber)
      expect(writes).toEqual([1])
    }))

  it.scoped("a batch taken is written whole, even if the caller that took it is interrupted meanwhile", () =>
    Effect.gen(function*() {
      const { registry, store } = yield* counted
      const gate = yield* Deferred.make<void>()
      const slow: auditWriter.Store = {
        audit: (changes) => Effect.zipRight(Deferred.await(gate), store.audit(changes)),
        auditOf: store.auditOf
      }
      const audit = yield* auditWriter.make(slow, { flushMs: 60_000, maxPending: 1 })
      // the first entry fills the backlog: its caller writes, and waits at the gate
      const recording = yield* Effect.fork(audit.record(entry(1)))
      yield* Effect.yieldNow().pipe(Effect.repeatN(20))
      const interrupting = yield* Effect.fork(Fiber.interrupt(recording))
      yield* Effect.yieldNow().pipe(Effect.repeatN(20))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(interrupting)
      expect((yield* registry.auditOf("s-1")).map((change) => change.at)).toEqual([1])
    }))
})
