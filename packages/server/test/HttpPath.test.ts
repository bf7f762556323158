import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as HttpPath from "../src/HttpPath.js"
import { FrameBound } from "../src/internal/wsFrames.js"

describe("HttpPath.canonical", () => {
  it("takes the one spelling and refuses every other, before any credential", () => {
    for (
      const path of ["/", "/mcp", "/live/terminal/s-0a1b", "/live/recordings/a.cast?x=1", "/live/assets/%E2%9C%93"]
    ) {
      expect(typeof HttpPath.canonical(path)).toBe("string")
    }
    expect(HttpPath.canonical("/mcp?a=//b;c")).toBe("/mcp")
    const refused: ReadonlyArray<readonly [string, 400 | 404]> = [
      ["//mcp", 400],
      ["/%6dcp", 400],
      ["/%6Dcp", 400],
      ["/mcp%2f", 400],
      ["/mcp%", 400],
      ["/mcp%zz", 400],
      ["/mcp;x", 400],
      ["/./mcp", 400],
      ["/live/../mcp", 400],
      ["/live/%2e%2e/mcp", 400],
      ["/mcp#x", 400],
      ["http://127.0.0.1:1/mcp", 400],
      ["*", 400],
      ["/mcp/", 404],
      ["/live/login/", 404]
    ]
    for (const [path, status] of refused) {
      expect(HttpPath.canonical(path)).toMatchObject({ status })
    }
  })
})

const frame = (opcode: number, length: number, fin = true): Uint8Array => {
  const header = [(fin ? 0x80 : 0) | opcode]
  if (length < 126) header.push(0x80 | length)
  else if (length < 65536) header.push(0x80 | 126, length >> 8, length & 0xff)
  else {header.push(
      0x80 | 127,
      0,
      0,
      0,
      0,
      (length >>> 24) & 0xff,
      (length >> 16) & 0xff,
      (length >> 8) & 0xff,
      length & 0xff
    )}
  return Uint8Array.from([...header, 1, 2, 3, 4, ...new Array(length).fill(0x61)])
}

describe("FrameBound", () => {
  it("passes frames within the bound, refuses a data frame or a fragmented message past it at its header", () => {
    const ok = new FrameBound(1000)
    expect(ok.feed(frame(1, 10))).toBe(true)
    expect(ok.feed(frame(2, 1000))).toBe(true)
    expect(ok.feed(frame(9, 5))).toBe(true)
    expect(new FrameBound(1000).feed(frame(2, 1001).subarray(0, 8))).toBe(false)
    const fragmented = new FrameBound(1000)
    expect(fragmented.feed(frame(1, 600, false))).toBe(true)
    expect(fragmented.feed(frame(0, 600))).toBe(false)
    // a declared 64-bit length past 2^32
    expect(new FrameBound(1000).feed(Uint8Array.from([0x82, 0x7f, 0, 0, 0, 1, 0, 0, 0, 0]))).toBe(false)
    // a control frame longer than 125 bytes
    expect(new FrameBound(1000).feed(frame(9, 126).subarray(0, 8))).toBe(false)
  })

  it.prop(
    "the same bytes split anywhere give the same verdict",
    [fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 2 })],
    ([cuts, which]) => {
      const bytes = Uint8Array.from([
        ...frame(1, 100),
        ...frame(2, 300),
        ...frame(9, 3),
        ...(which === 0 ? frame(2, 2000) : which === 1 ? frame(1, 700, false) : frame(2, 10))
      ])
      const whole = new FrameBound(1000).feed(bytes)
      const pieces = new FrameBound(1000)
      let verdict = true
      for (let at = 0, i = 0; at < bytes.length && verdict; i++) {
        const size = cuts[i % cuts.length]!
        verdict = pieces.feed(bytes.subarray(at, at + size))
        at += size
      }
      expect(verdict).toBe(whole)
      expect(whole).toBe(which !== 0)
    }
  )
})
