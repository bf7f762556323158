import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Utf8 from "../src/Utf8.js"

const hasLoneSurrogate = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i)
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
      else return true
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      return true
    }
  }
  return false
}

const codeUnits = FastCheck.string({
  unit: FastCheck.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code))
})

const wellFormed = FastCheck.oneof(
  FastCheck.string({ unit: "binary" }),
  FastCheck.string({ unit: "grapheme" }),
  FastCheck.string({ unit: FastCheck.constantFrom("a", "\n", "é", "一", "😀", "👍🏽", "e\u0301") })
)

const anyString = FastCheck.oneof(wellFormed, codeUnits)

const nextCodePoint = (s: string, at: number): string => {
  const code = s.codePointAt(at)
  return code === undefined ? "" : String.fromCodePoint(code).length === 2 && !hasLoneSurrogate(s.slice(at, at + 2))
    ? s.slice(at, at + 2)
    : s.slice(at, at + 1)
}

const previousCodePoint = (s: string, end: number): string => {
  if (end <= 0) return ""
  const pair = s.slice(Math.max(0, end - 2), end)
  return pair.length === 2 && !hasLoneSurrogate(pair) && pair.codePointAt(0)! > 0xffff ? pair : s.slice(end - 1, end)
}

describe("Utf8", () => {
  it("measures like Buffer.byteLength, lone surrogates as U+FFFD", () => {
    expect(Utf8.byteLength("")).toBe(0)
    expect(Utf8.byteLength("a")).toBe(1)
    expect(Utf8.byteLength("é")).toBe(2)
    expect(Utf8.byteLength("一")).toBe(3)
    expect(Utf8.byteLength("😀")).toBe(4)
    expect(Utf8.byteLength("\uD83D")).toBe(3)
    expect(Utf8.byteLength("\uDE00\uD83D")).toBe(6)
  })

  it.prop("byteLength agrees with the UTF-8 encoder", [anyString], ([s]) => {
    expect(Utf8.byteLength(s)).toBe(Buffer.byteLength(s, "utf8"))
  })

  it.prop("the count without Node's (another platform) agrees with the encoder", [anyString], ([s]) => {
    expect(Utf8.countBytes(s)).toBe(new TextEncoder().encode(s).length)
  })

  it("cuts CJK and emoji on code-point boundaries", () => {
    expect(Utf8.cutHead("一二三", 7)).toBe("一二")
    expect(Utf8.cutHead("一二三", 2)).toBe("")
    expect(Utf8.cutHead("😀a", 3)).toBe("")
    expect(Utf8.cutHead("😀a", 4)).toBe("😀")
    expect(Utf8.cutTail("一二三", 7)).toBe("二三")
    expect(Utf8.cutTail("a😀", 3)).toBe("")
    expect(Utf8.cutTail("a😀", 4)).toBe("😀")
    expect(Utf8.cutTail("a😀", 5)).toBe("a😀")
    expect(Utf8.cutHead("abc", 0)).toBe("")
    expect(Utf8.cutTail("abc", -1)).toBe("")
    expect(Utf8.cutHead("abc", Number.NaN)).toBe("")
  })

  it.prop(
    "cutHead: the longest prefix within the cap, code points whole",
    [anyString, FastCheck.integer({ min: 0, max: 64 })],
    ([s, cap]) => {
      const head = Utf8.cutHead(s, cap)
      expect(Utf8.byteLength(head)).toBeLessThanOrEqual(cap)
      expect(s.startsWith(head)).toBe(true)
      if (head !== s) expect(Utf8.byteLength(head + nextCodePoint(s, head.length))).toBeGreaterThan(cap)
      if (!hasLoneSurrogate(s)) expect(hasLoneSurrogate(head)).toBe(false)
    }
  )

  it.prop(
    "cutTail: the longest suffix within the cap, code points whole",
    [anyString, FastCheck.integer({ min: 0, max: 64 })],
    ([s, cap]) => {
      const tail = Utf8.cutTail(s, cap)
      expect(Utf8.byteLength(tail)).toBeLessThanOrEqual(cap)
      expect(s.endsWith(tail)).toBe(true)
      if (tail !== s) {
        expect(Utf8.byteLength(previousCodePoint(s, s.length - tail.length) + tail)).toBeGreaterThan(cap)
      }
      if (!hasLoneSurrogate(s)) expect(hasLoneSurrogate(tail)).toBe(false)
    }
  )

  describe("headTail", () => {
    const log = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n")

    it("keeps text that fits", () => {
      expect(Utf8.headTail("short", 64)).toEqual({ text: "short", truncated: false, omittedLines: 0, omittedBytes: 0 })
    })

    it("keeps head and tail on line boundaries, the tail larger, with a marker", () => {
      const result = Utf8.headTail(log, 500)
      expect(result.truncated).toBe(true)
      expect(Utf8.byteLength(result.text)).toBeLessThanOrEqual(500)
      const lines = result.text.split("\n")
      const markerAt = lines.findIndex((line) => line.startsWith("… [omitted "))
      const head = lines.slice(0, markerAt)
      const tail = lines.slice(markerAt + 1)
      expect(head[0]).toBe("line 0")
      expect(tail[tail.length - 1]).toBe("line 999")
      head.forEach((line, i) => expect(line).toBe(`line ${i}`))
      tail.forEach((line, i) => expect(line).toBe(`line ${1000 - tail.length + i}`))
      expect(Utf8.byteLength(tail.join("\n"))).toBeGreaterThan(Utf8.byteLength(head.join("\n")))
      expect(result.omittedLines).toBe(1000 - head.length - tail.length)
      expect(lines[markerAt]).toBe(`… [omitted ${result.omittedLines} lines, ${result.omittedBytes} bytes] …`)
      expect(Utf8.byteLength(head.join("\n")) + 1 + result.omittedBytes + Utf8.byteLength(tail.join("\n")))
        .toBe(Utf8.byteLength(log))
    })

    it("fits the smallest result cap (64 bytes)", () => {
      const result = Utf8.headTail(log, 64)
      expect(Utf8.byteLength(result.text)).toBeLessThanOrEqual(64)
      expect(result.text).toContain("… [omitted ")
      expect(result.text.endsWith("999")).toBe(true)
    })

    it("without room for the marker keeps the longest tail", () => {
      const result = Utf8.headTail("一二三四五六七八九十".repeat(10), 10)
      expect(result).toEqual({ text: "八九十", truncated: true, omittedLines: 0, omittedBytes: 291 })
      expect(Utf8.headTail("abc", 0)).toEqual({ text: "", truncated: true, omittedLines: 0, omittedBytes: 3 })
    })

    it("says bytes only when no line break was omitted", () => {
      const result = Utf8.headTail("x".repeat(1000), 100)
      expect(result.omittedLines).toBe(0)
      expect(result.text).toMatch(/^x+\n… \[omitted \d+ bytes\] …\nx+$/)
    })

    it.prop(
      "never exceeds the cap; head is a prefix, tail a suffix, the counts add up",
      [anyString, FastCheck.integer({ min: 0, max: 200 })],
      ([text, cap]) => {
        const result = Utf8.headTail(text, cap)
        const total = Utf8.byteLength(text)
        expect(Utf8.byteLength(result.text)).toBeLessThanOrEqual(cap)
        if (!result.truncated) {
          expect(result.text).toBe(text)
          return
        }
        expect(total).toBeGreaterThan(cap)
        if (!hasLoneSurrogate(text)) expect(hasLoneSurrogate(result.text)).toBe(false)
        const marker = /(?:^|\n)… \[omitted (?:\d+ lines?, )?\d+ bytes\] …(?:\n|$)/.exec(result.text)
        if (marker === null) {
          expect(text.endsWith(result.text)).toBe(true)
          expect(result.omittedBytes).toBe(total - Utf8.byteLength(result.text))
          return
        }
        const head = result.text.slice(0, marker.index)
        const tail = result.text.slice(marker.index + marker[0].length)
        expect(text.startsWith(head)).toBe(true)
        expect(text.endsWith(tail)).toBe(true)
        const kept = Utf8.byteLength(head) + Utf8.byteLength(tail)
        // the head's own trailing newline, when it has one, is indistinguishable from the separator
        const headNewline = text.startsWith(head + "\n") && kept + 1 + result.omittedBytes === total ? 1 : 0
        expect(kept + headNewline + result.omittedBytes).toBe(total)
      }
    )
  })
})
