import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Capture from "../src/Capture.js"
import * as Utf8 from "../src/Utf8.js"
import { make } from "./support/emulator.js"

const markerLine = /^… \[omitted (?:(\d+) lines?, )?(\d+) bytes\] …$/

/** A captured output of `count` numbered lines, cut by a capture of `budget` bytes. */
const capturedLines = (count: number, budget: number, text = (i: number) => `line ${i} 一😀`) => {
  const { emulator } = make({ cols: 40, rows: 5 })
  const capture = emulator.capture(emulator.cursor(), budget)
  for (let i = 1; i <= count; i++) emulator.write(`${text(i)}\r\n`)
  const captured = emulator.finish(capture)
  emulator.dispose()
  return captured
}

describe("Capture.fit", () => {
  it("leaves an output that fits alone", () => {
    expect(Capture.fit("a\nb", 64)).toEqual({ text: "a\nb", truncated: false, omittedLines: 0, omittedBytes: 0 })
  })

  it("counts the capture's gap and what it cuts more in one marker", () => {
    const captured = capturedLines(5000, 2000)
    expect(captured.truncated).toBe(true)
    const fitted = Capture.fit(captured.text, 600)
    const lines = fitted.text.split("\n")
    expect(Utf8.byteLength(fitted.text)).toBeLessThanOrEqual(600)
    expect(lines.filter((line) => markerLine.test(line))).toHaveLength(1)
    expect(lines[0]).toBe("line 1 一😀")
    expect(lines.at(-1)).toBe("line 5000 一😀")
    expect(lines.length - 1 + fitted.omittedLines).toBe(5000)
    expect(fitted.omittedLines).toBeGreaterThan(captured.omittedLines)
  })

  it.prop(
    "never exceeds the cap, keeps code points whole and shows one marker",
    [FastCheck.integer({ min: 1, max: 3000 }), FastCheck.integer({ min: 64, max: 4000 })],
    ([count, maxBytes]) => {
      const captured = capturedLines(count, 800)
      const fitted = Capture.fit(captured.text, maxBytes)
      expect(Utf8.byteLength(fitted.text)).toBeLessThanOrEqual(maxBytes)
      expect(fitted.text.includes("\uFFFD")).toBe(false)
      expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(fitted.text)).toBe(false)
      const markers = fitted.text.split("\n").filter((line) => markerLine.test(line))
      expect(markers.length).toBeLessThanOrEqual(1)
      if (captured.truncated || fitted.truncated) {
        expect(markers).toHaveLength(fitted.text.startsWith("…") || fitted.text.includes("\n…") ? 1 : 0)
      }
    },
    { fastCheck: { numRuns: 40 } }
  )
})
