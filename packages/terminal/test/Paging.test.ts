import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as LineLog from "../src/LineLog.js"
import * as Paging from "../src/Paging.js"
import * as Utf8 from "../src/Utf8.js"

const sourceOf = (lines: ReadonlyArray<string>, first = 0): Paging.Source => ({
  first,
  total: lines.length,
  line: (i) => lines[i - first]
})

const cjk = sourceOf(["一", "二", "三", "四"])

const ok = (source: Paging.Source, request: Paging.PageRequest): Paging.PageResult => {
  const result = Paging.page(source, request)
  if (Either.isLeft(result)) throw new Error(`unexpected ${result.left.message}`)
  return result.right
}

const error = (source: Paging.Source, request: Paging.PageRequest): Paging.PageError => {
  const result = Paging.page(source, request)
  if (Either.isRight(result)) throw new Error(`unexpected page ${JSON.stringify(result.right)}`)
  return result.left
}

describe("Paging", () => {
  it("returns everything that fits, newest last", () => {
    expect(ok(cjk, { maxBytes: 1000 })).toEqual({
      text: "一\n二\n三\n四",
      totalLines: 4,
      lineBegin: 0,
      lineEnd: 4,
      truncated: false,
      firstLine: 0
    })
  })

  it("counts back from the newest line", () => {
    expect(ok(cjk, { count: 2, maxBytes: 1000 })).toMatchObject({ text: "三\n四", lineBegin: 2, lineEnd: 4 })
    expect(ok(cjk, { offset: 1, count: 2, maxBytes: 1000 })).toMatchObject({
      text: "二\n三",
      lineBegin: 1,
      lineEnd: 3,
      truncated: false
    })
    expect(ok(cjk, { offset: 3, count: 5, maxBytes: 1000 })).toMatchObject({ text: "一", lineBegin: 0, lineEnd: 1 })
  })

  it("scenario 25: tiny byte caps keep the newest whole lines and set truncated", () => {
    expect(ok(cjk, { maxBytes: 7 })).toEqual({
      text: "三\n四",
      totalLines: 4,
      lineBegin: 2,
      lineEnd: 4,
      truncated: true,
      firstLine: 0
    })
    expect(ok(cjk, { maxBytes: 6 })).toMatchObject({ text: "四", lineBegin: 3, lineEnd: 4, truncated: true })
    expect(ok(cjk, { offset: 1, count: 2, maxBytes: 5 })).toMatchObject({
      text: "三",
      lineBegin: 2,
      lineEnd: 3,
      truncated: true
    })
    expect(ok(cjk, { count: 1, maxBytes: 3 })).toMatchObject({ text: "四", truncated: false })
    expect(ok(cjk, { maxBytes: 2 })).toEqual({
      text: "",
      totalLines: 4,
      lineBegin: 4,
      lineEnd: 4,
      truncated: true,
      firstLine: 0
    })
  })

  it("scenario 25: an offset at or past the oldest line is an empty page", () => {
    expect(ok(cjk, { offset: 4, maxBytes: 100 })).toEqual({
      text: "",
      totalLines: 4,
      lineBegin: 0,
      lineEnd: 0,
      truncated: false,
      firstLine: 0
    })
    expect(ok(cjk, { offset: 1000, count: 3, maxBytes: 100 })).toMatchObject({ text: "", lineBegin: 0, lineEnd: 0 })
    expect(ok(sourceOf([]), { maxBytes: 100 })).toEqual({
      text: "",
      totalLines: 0,
      lineBegin: 0,
      lineEnd: 0,
      truncated: false,
      firstLine: 0
    })
  })

  it("scenario 25: a negative offset, a zero count and non-integers are rejected", () => {
    expect(error(cjk, { offset: -1, maxBytes: 100 })).toMatchObject({ _tag: "PageError", field: "offset", value: -1 })
    expect(error(cjk, { count: 0, maxBytes: 100 })).toMatchObject({ field: "count", value: 0 })
    expect(error(cjk, { count: -3, maxBytes: 100 })).toMatchObject({ field: "count" })
    expect(error(cjk, { offset: 1.5, maxBytes: 100 })).toMatchObject({ field: "offset", reason: "must be an integer" })
    expect(error(cjk, { count: Number.NaN, maxBytes: 100 })).toMatchObject({ field: "count" })
    expect(error(cjk, { count: Number.POSITIVE_INFINITY, maxBytes: 100 })).toMatchObject({ field: "count" })
    expect(error(cjk, { maxBytes: 0 })).toMatchObject({ field: "maxBytes" })
    expect(error(cjk, { offset: -1, maxBytes: 100 }).message).toBe("invalid offset -1: must not be negative")
  })

  it("cuts a single line longer than the cap to its tail, code points intact", () => {
    const long = sourceOf(["a😀b😀"])
    expect(ok(long, { maxBytes: 5 })).toEqual({
      text: "b😀",
      totalLines: 1,
      lineBegin: 0,
      lineEnd: 1,
      truncated: true,
      firstLine: 0
    })
    expect(ok(long, { maxBytes: 7 })).toMatchObject({ text: "b😀" })
    expect(ok(long, { maxBytes: 3 })).toMatchObject({ text: "", lineBegin: 1, lineEnd: 1, truncated: true })
  })

  it("numbers lines in the source's numbering and reads only the page", () => {
    const asked: Array<number> = []
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}`)
    const source: Paging.Source = {
      first: 500,
      total: lines.length,
      line: (i) => {
        asked.push(i)
        return lines[i - 500]
      }
    }
    expect(ok(source, { offset: 10, count: 3, maxBytes: 1000 })).toMatchObject({
      text: "line 9987\nline 9988\nline 9989",
      totalLines: 10_000,
      lineBegin: 10_487,
      lineEnd: 10_490
    })
    asked.length = 0
    const page = ok(source, { maxBytes: 100 })
    expect(page.lineEnd).toBe(10_500)
    expect(asked.length).toBe(page.lineEnd - page.lineBegin + 1)
  })

  it("pages over a LineLog by absolute index", () => {
    const log = LineLog.make({ maxLines: 3, maxBytes: 1000 })
    for (const line of ["一", "二", "三", "四", "五"]) log.append(line)
    const source: Paging.Source = {
      first: log.firstIndex,
      total: log.lines,
      line: (i) => log.get(i) ?? ""
    }
    expect(ok(source, { maxBytes: 7 })).toEqual({
      text: "四\n五",
      totalLines: 3,
      lineBegin: 3,
      lineEnd: 5,
      truncated: true,
      // lines 0 and 1 were dropped by the log's bound: the page says where the kept ones begin
      firstLine: 2
    })
  })

  it.prop(
    "honours the byte cap, returns the window's newest lines whole, keeps code points intact",
    [
      FastCheck.array(FastCheck.string({ unit: "binary", maxLength: 12 }).map((s) => s.replace(/\n/g, "")), {
        maxLength: 30
      }),
      FastCheck.option(FastCheck.integer({ min: 0, max: 40 }), { nil: undefined }),
      FastCheck.option(FastCheck.integer({ min: 1, max: 40 }), { nil: undefined }),
      FastCheck.integer({ min: 1, max: 80 })
    ],
    ([lines, offset, count, maxBytes]) => {
      const page = ok(sourceOf(lines), { offset, count, maxBytes })
      const windowEnd = Math.max(0, lines.length - (offset ?? 0))
      const windowBegin = count === undefined ? 0 : Math.max(0, windowEnd - count)
      expect(Utf8.byteLength(page.text)).toBeLessThanOrEqual(maxBytes)
      expect(page.totalLines).toBe(lines.length)
      expect(page.lineEnd).toBe(windowEnd)
      const whole = lines.slice(page.lineBegin, page.lineEnd).join("\n")
      if (page.text === whole) {
        expect(page.truncated).toBe(page.lineBegin > windowBegin)
        if (page.lineBegin > windowBegin && page.lineBegin < page.lineEnd) {
          expect(Utf8.byteLength(`${lines[page.lineBegin - 1]}\n${page.text}`)).toBeGreaterThan(maxBytes)
        }
      } else {
        expect(page.truncated).toBe(true)
        expect(page.lineEnd - page.lineBegin).toBe(1)
        expect(whole.endsWith(page.text)).toBe(true)
        expect(page.text).toBe(Utf8.cutTail(whole, maxBytes))
      }
    }
  )
})
