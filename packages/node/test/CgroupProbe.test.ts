import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Teardown from "../src/Teardown.js"

// Its own file (its own process): releasing this layer removes this process's session cgroup parent.
describe("the cgroup probe", () => {
  it.scopedLive("a first caller interrupted while the probe runs leaves the probe's answer, not its interruption", () =>
    Effect.gen(function*() {
      const cgroups = Context.get(yield* Layer.build(Teardown.layerCgroups), Teardown.Cgroups)
      const first = yield* Effect.fork(cgroups.available)
      yield* Effect.yieldNow()
      expect(Exit.isInterrupted(yield* Fiber.interrupt(first))).toBe(true)
      // whatever this host allows (a cgroup or the sweep), later callers get the probe's answer
      const later = yield* Effect.exit(cgroups.available)
      expect(Exit.isSuccess(later)).toBe(true)
      expect(Exit.isSuccess(yield* Effect.exit(cgroups.available))).toBe(true)
    }))
})
