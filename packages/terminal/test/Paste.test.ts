import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Paste from "../src/Paste.js"

describe("Paste", () => {
  it("scenario 33: wraps a multi-line text in one bracketed paste, newlines as Enter", () => {
    expect(Paste.encodePaste("for i in 1 2; do\n  echo $i\ndone", { bracketed: true }))
      .toBe("\x1b[200~for i in 1 2; do\r  echo $i\rdone\x1b[201~")
    expect(Paste.encodePaste("a\r\nb", { bracketed: true })).toBe("\x1b[200~a\rb\x1b[201~")
    expect(Paste.encodePaste("", { bracketed: true })).toBe("\x1b[200~\x1b[201~")
  })

  it("types the text when the program has no bracketed paste", () => {
    expect(Paste.encodePaste("a\nb\r\nc\rd", { bracketed: false })).toBe("a\rb\rc\rd")
    expect(Paste.encodePaste("x\x1b[201~y", { bracketed: false })).toBe("x\x1b[201~y")
  })

  it("strips bracket sequences inside the text, also ones that removal would re-form", () => {
    expect(Paste.encodePaste("a\x1b[201~; rm -rf x", { bracketed: true })).toBe("\x1b[200~a; rm -rf x\x1b[201~")
    expect(Paste.encodePaste("\x1b[20\x1b[201~1~tail", { bracketed: true })).toBe("\x1b[200~tail\x1b[201~")
    expect(Paste.encodePaste("\x1b[200~in\x1b[201~", { bracketed: true })).toBe("\x1b[200~in\x1b[201~")
  })

  it.prop(
    "a bracketed paste has exactly one end, at the end",
    [FastCheck.string({ unit: FastCheck.constantFrom("\x1b", "[", "2", "0", "1", "~", "a", "\n", "\r") })],
    ([text]) => {
      const encoded = Paste.encodePaste(text, { bracketed: true })
      expect(encoded.startsWith(Paste.pasteStart)).toBe(true)
      expect(encoded.endsWith(Paste.pasteEnd)).toBe(true)
      expect(encoded.indexOf(Paste.pasteEnd)).toBe(encoded.length - Paste.pasteEnd.length)
      expect(encoded.indexOf(Paste.pasteStart, 1)).toBe(-1)
      expect(encoded.includes("\n")).toBe(false)
    }
  )
})
