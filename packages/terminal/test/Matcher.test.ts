import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Emulator from "../src/Emulator.js"
import * as Matcher from "../src/Matcher.js"

const newEmulator = () =>
  new Emulator.Emulator({ cols: 40, rows: 10, scrollbackLines: 10_000, scrollbackMaxBytes: 4 * 1024 * 1024 }, {
    onReply: () => {},
    onMarker: () => {}
  })

describe("Matcher", () => {
  it("regexProblem refuses what does not compile, unknown flags, nested repetition; accepts ordinary patterns", () => {
    expect(Matcher.regexProblem("port (\\d+)")).toBeUndefined()
    expect(Matcher.regexProblem("(?:\\d+\\.)?\\d+ ms")).toBeUndefined()
    expect(Matcher.regexProblem("(ab){2,3}c+")).toBeUndefined()
    expect(Matcher.regexProblem("[(+*]+")).toBeUndefined()
    expect(Matcher.regexProblem("(unclosed")).toContain("not a valid JavaScript regular expression")
    expect(Matcher.regexProblem("(unclosed")).not.toContain("(unclosed")
    expect(Matcher.regexProblem("a", "g")).toContain("flags")
    for (const nested of ["(a+)+$", "(\\w*)*x", "(?:x+){2,}", "((a|b)+c)*", "(a*)+"]) {
      expect(Matcher.regexProblem(nested)).toContain("exponential")
    }
    expect(Matcher.regexProblem("x".repeat(Matcher.MAX_PATTERN_CHARS + 1))).toContain("at most")
  })

  it.prop(
    "the same output split anywhere gives the same first match",
    [fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 40 })],
    ([cuts]) => {
      const text = Array.from({ length: 300 }, (_, i) => `line ${i}${i === 217 ? " READY on port 5173" : ""}`).join(
        "\r\n"
      )
      const emulator = newEmulator()
      const watch = emulator.watch(emulator.cursor(), Matcher.pattern({ regex: "port (\\d+)" }))
      let at = 0
      let found: Matcher.Match | undefined
      for (let i = 0; at < text.length; i++) {
        const size = cuts[i % cuts.length]!
        emulator.write(text.slice(at, at + size))
        at += size
        found ??= watch.check()
      }
      found ??= watch.check()
      expect(found?.text.startsWith("port 5")).toBe(true)
      // a match cut short at the end of what had arrived says so (the tier waits for more before taking it)
      if (found?.text !== "port 5173") expect(found?.atEnd).toBe(true)
      expect(watch.check()?.groups).toEqual(["5173"])
    }
  )

  it("a flood is scanned in bounded windows: a match far back, a match across a window's edge", () => {
    const matcher = new Matcher.Matcher(Matcher.pattern({ text: "NEEDLE" }))
    const filler = "x".repeat(Matcher.WINDOW_CHARS - Matcher.OVERLAP_CHARS - 3)
    matcher.append(filler + "NEE")
    matcher.append("DLE" + "y".repeat(5 * Matcher.WINDOW_CHARS))
    expect(matcher.found?.text).toBe("NEEDLE")
    const none = new Matcher.Matcher(Matcher.pattern({ text: "absent" }))
    for (let i = 0; i < 100; i++) none.append("z".repeat(10_000))
    expect(none.check("live")).toBeUndefined()
  })

  it("the echo of a typed line is left out, a held watch begins where it is told", () => {
    const emulator = newEmulator()
    const echoed = emulator.watch(emulator.cursor(), Matcher.pattern({ text: "hello" }), { echo: "print('hello')" })
    emulator.write("print('hel")
    expect(echoed.check()).toBeUndefined()
    emulator.write("lo')\r\n")
    expect(echoed.check()).toBeUndefined()
    emulator.write("hello\r\n>>> ")
    expect(echoed.check()?.text).toBe("hello")
    const marker: { at: Emulator.Position | undefined } = { at: undefined }
    const held = emulator.watch(emulator.cursor(), Matcher.pattern({ text: "done" }), { hold: () => marker.at })
    emulator.write("echo done\r\n")
    expect(held.check()).toBeUndefined()
    marker.at = emulator.cursor()
    expect(held.check()).toBeUndefined()
    emulator.write("done\r\n")
    expect(held.check()?.text).toBe("done")
  })
})
