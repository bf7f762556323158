import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as TerminalConfig from "../src/TerminalConfig.js"

const decode = Schema.decodeUnknownEither(TerminalConfig.TerminalConfigSchema)

describe("TerminalConfig", () => {
  it("its Schema holds positivity itself: a positive setting refuses 0 and below, a 0-means-none one refuses below 0", () => {
    expect(Either.isLeft(decode({ timeoutMs: 0 }))).toBe(true)
    expect(Either.isLeft(decode({ cols: -3 }))).toBe(true)
    expect(Either.isLeft(decode({ maxTerminalsPerOwner: 0 }))).toBe(true)
    expect(Either.isRight(decode({ timeoutMs: 1 }))).toBe(true)
    expect(Either.isRight(decode({ execTimeoutMs: 0, pidsMax: 0, memoryMaxBytes: 0 }))).toBe(true)
    expect(Either.isLeft(decode({ execYieldMs: -1 }))).toBe(true)
    expect(Either.isLeft(decode({ memoryMaxBytes: -1 }))).toBe(true)
  })

  it.effect("make names the field and says why, with the value it got", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip(TerminalConfig.make({ idleSilenceMs: 0 }))).toMatchObject({
        _tag: "InvalidConfig",
        field: "idleSilenceMs",
        reason: "must be a positive integer, got 0"
      })
      expect(yield* Effect.flip(TerminalConfig.make({ pidsMax: -2 }))).toMatchObject({
        _tag: "InvalidConfig",
        field: "pidsMax",
        reason: "must be a non-negative integer (0: none), got -2"
      })
      expect(yield* Effect.flip(TerminalConfig.make({ rows: 2.5 }))).toMatchObject({ field: "rows" })
    }))
})
