import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as SafeReplay from "../src/SafeReplay.js"

const sample =
  "a\x1b]52;c;ZXZpbA==\x07b\x1b]2;t\x1b\\c\x1b]8;;u\x1b\\d\x1bP1$r\x1b\\e\x1b[1;31mf\x1b[0m\x1b[>q\x1b[?1$p" +
  "\x9d0;x\x9cg\x1b[?1049h\x1b[?1003;1006h\x1b[5ni\x1b]7;file://h/x\x1b]0;y\x07j"

describe("SafeReplay", () => {
  it("keeps text, colours and screen modes; leaves out every OSC, DCS, query, window op and reporting mode", () => {
    const filter = new SafeReplay.Filter()
    expect(filter.push(sample)).toBe("abcde\x1b[1;31mf\x1b[0mg\x1b[?1049hij")
    expect(filter.dropped).toBe(11)
    // an unterminated OSC swallows what follows, never prints it
    expect(SafeReplay.filter("x\x1b]52;c;AAAA")).toBe("x")
  })

  it.prop(
    "the same output split anywhere gives the same safe output",
    [fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 20 })],
    ([cuts]) => {
      const whole = SafeReplay.filter(sample)
      const filter = new SafeReplay.Filter()
      let out = ""
      for (let at = 0, i = 0; at < sample.length; i++) {
        const size = cuts[i % cuts.length]!
        out += filter.push(sample.slice(at, at + size))
        at += size
      }
      expect(out).toBe(whole)
    }
  )
})
