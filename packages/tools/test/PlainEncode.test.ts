import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { Deployment, TerminalTools } from "../src/index.js"
import * as PlainEncode from "../src/internal/plainEncode.js"

/** Both sides as text: the same success with the same keys in the same order, or both a failure. */
const outcome = (result: Either.Either<unknown, unknown>) =>
  Either.isRight(result) ? `right ${JSON.stringify(result.right)}` : "left"

const shuffled = (value: unknown, seed: number): unknown => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value
  const entries = Object.entries(value)
  const turn = entries.length === 0 ? 0 : seed % entries.length
  return Object.fromEntries([...entries.slice(turn), ...entries.slice(0, turn)])
}

describe("PlainEncode: a success schema's fast path gives what its Schema encode gives", () => {
  for (const tool of Deployment.toolsOf()) {
    it(`${tool.name}: every value of its success schema, reordered, a key more or less, of a wrong type`, () => {
      const schema = tool.successSchema as Schema.Schema<unknown, unknown>
      const encode = Schema.encodeUnknownEither(schema)
      const fast = PlainEncode.withPlainPath(schema, encode)
      FastCheck.assert(
        FastCheck.property(Arbitrary.make(schema), FastCheck.nat(), (value, seed) => {
          const variants = [
            value,
            shuffled(value, seed),
            typeof value === "object" && value !== null ? { ...value, extra: seed } : value,
            typeof value === "object" && value !== null ?
              Object.fromEntries(Object.entries(value).map(([key, field], i) => [key, i === 0 ? seed : field])) :
              value,
            typeof value === "object" && value !== null ?
              Object.fromEntries(Object.entries(value).filter((_, i) => i !== seed % 3)) :
              value
          ]
          for (const variant of variants) expect(outcome(fast(variant))).toBe(outcome(encode(variant)))
        }),
        { numRuns: 200 }
      )
    })
  }

  it("a plain send's result takes the fast path (what it is for)", () => {
    const schema = TerminalTools.SendToolResult
    let full = 0
    const fast = PlainEncode.withPlainPath(schema, (value) => {
      full++
      return Schema.encodeUnknownEither(schema)(value)
    })
    const result = {
      elapsedMs: 1,
      output: "$ true\r\n",
      waitReason: "prompt",
      exitCode: 0,
      sessionStatus: { _tag: "running" },
      truncated: false
    }
    expect(fast(result)).toEqual(Either.right({
      output: "$ true\r\n",
      waitReason: "prompt",
      exitCode: 0,
      sessionStatus: { _tag: "running" },
      truncated: false,
      elapsedMs: 1
    }))
    expect(full).toBe(0)
    expect(Either.isLeft(fast({ ...result, waitReason: "done" }))).toBe(true)
    expect(full).toBe(1)
  })
})
