import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as LineLog from "../src/LineLog.js"
import * as Utf8 from "../src/Utf8.js"

const contents = (log: LineLog.LineLog): Array<string> => log.slice(log.firstIndex, log.endIndex)

/** The obvious (slow) implementation the ring buffer must agree with. */
class Model {
  lines: Array<string> = []
  first = 0
  constructor(readonly maxLines: number, readonly maxBytes: number) {}
  get bytes() {
    return this.lines.reduce((sum, line) => sum + Utf8.byteLength(line) + 1, 0)
  }
  append(text: string) {
    this.lines.push(text)
    this.enforce()
  }
  extendLast(text: string) {
    if (this.lines.length === 0) return this.append(text)
    this.lines[this.lines.length - 1] += text
    this.enforce()
  }
  enforce() {
    const last = this.lines.length - 1
    this.lines[last] = Utf8.cutTail(this.lines[last], this.maxBytes - 1)
    while (this.lines.length > this.maxLines || this.bytes > this.maxBytes) {
      this.lines.shift()
      this.first++
    }
  }
}

const pieces = FastCheck.oneof(
  FastCheck.string({ unit: "binary", maxLength: 12 }),
  FastCheck.string({ unit: FastCheck.constantFrom("a", "é", "一", "😀", "\uD83D", "\uDE00"), maxLength: 12 })
)

describe("LineLog", () => {
  it("appends lines with absolute indices", () => {
    const log = LineLog.make({ maxLines: 10, maxBytes: 1000 })
    expect(log.lines).toBe(0)
    expect(log.get(0)).toBeUndefined()
    log.append("one")
    log.append("")
    log.append("三")
    expect([log.firstIndex, log.endIndex, log.lines, log.evicted, log.bytes]).toEqual([0, 3, 3, 0, 4 + 1 + 4])
    expect(log.get(2)).toBe("三")
    expect(log.get(1)).toBe("")
    expect(log.get(3)).toBeUndefined()
    expect(log.get(0.5)).toBeUndefined()
    expect(log.slice(-5, 100)).toEqual(["one", "", "三"])
    expect(log.slice(1, 2)).toEqual([""])
    expect(log.slice(2, 1)).toEqual([])
  })

  it("evicts the oldest lines past the line cap", () => {
    const log = new LineLog.LineLog({ maxLines: 3, maxBytes: 1000 })
    for (let i = 0; i < 5; i++) log.append(`line ${i}`)
    expect([log.firstIndex, log.endIndex, log.evicted]).toEqual([2, 5, 2])
    expect(log.get(1)).toBeUndefined()
    expect(contents(log)).toEqual(["line 2", "line 3", "line 4"])
    expect(log.bytes).toBe(21)
  })

  it("evicts the oldest lines past the byte cap", () => {
    const log = LineLog.make({ maxLines: 100, maxBytes: 10 })
    log.append("aaaa")
    log.append("bbbb")
    expect(log.bytes).toBe(10)
    log.append("c")
    expect(contents(log)).toEqual(["bbbb", "c"])
    expect(log.bytes).toBe(7)
  })

  it("keeps the tail of a line longer than the byte cap, on a code-point boundary", () => {
    const log = LineLog.make({ maxLines: 5, maxBytes: 8 })
    log.append("old")
    log.append("0123456789")
    expect(contents(log)).toEqual(["3456789"])
    expect(log.bytes).toBe(8)
    log.append("😀😀")
    expect(contents(log)).toEqual(["😀"])
    expect(log.bytes).toBe(5)
  })

  it("extends the newest line, also across a split surrogate pair", () => {
    const log = LineLog.make({ maxLines: 5, maxBytes: 100 })
    log.extendLast("start")
    expect(contents(log)).toEqual(["start"])
    log.append("a\uD83D")
    log.extendLast("\uDE00b")
    log.extendLast("")
    expect(log.get(1)).toBe("a😀b")
    expect(log.bytes).toBe(6 + 7)
  })

  it("keeps one line when maxLines is 1, and raises caps below 1", () => {
    const log = LineLog.make({ maxLines: 1, maxBytes: 100 })
    log.append("a")
    log.extendLast("b")
    log.append("c")
    expect([log.firstIndex, log.endIndex, log.get(1)]).toEqual([1, 2, "c"])
    const tiny = LineLog.make({ maxLines: 0, maxBytes: Number.NaN })
    tiny.append("xyz")
    expect([tiny.maxLines, tiny.maxBytes, tiny.get(0), tiny.bytes]).toEqual([1, 1, "", 1])
  })

  it("a long stream into one line keeps only its last bytes", () => {
    const log = LineLog.make({ maxLines: 10, maxBytes: 1024 })
    let expected = ""
    for (let i = 0; i < 20_000; i++) {
      const chunk = `${i % 10}一😀`.repeat(5)
      log.extendLast(chunk)
      expected = Utf8.cutTail(expected + chunk, 1023)
    }
    expect(log.get(0)).toBe(expected)
    expect(log.bytes).toBe(Utf8.byteLength(expected) + 1)
    expect(log.bytes).toBeLessThanOrEqual(1024)
  })

  it.prop(
    "random appends and extends stay within the caps and agree with the obvious model",
    [
      FastCheck.integer({ min: 1, max: 8 }),
      FastCheck.integer({ min: 1, max: 40 }),
      FastCheck.array(FastCheck.tuple(FastCheck.boolean(), pieces), { maxLength: 80 })
    ],
    ([maxLines, maxBytes, ops]) => {
      const log = LineLog.make({ maxLines, maxBytes })
      const model = new Model(maxLines, maxBytes)
      for (const [extend, text] of ops) {
        if (extend) {
          log.extendLast(text)
          model.extendLast(text)
        } else {
          log.append(text)
          model.append(text)
        }
        expect(log.lines).toBeLessThanOrEqual(maxLines)
        expect(log.bytes).toBeLessThanOrEqual(maxBytes)
        expect(contents(log)).toEqual(model.lines)
        expect(log.firstIndex).toBe(model.first)
        expect(log.bytes).toBe(model.bytes)
      }
    },
    { fastCheck: { numRuns: 300 } }
  )
})
