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
  it("regexProblem refuses what does not compile, unknown flags, what needs backtracking (named), large programs", () => {
    expect(Matcher.regexProblem("port (\\d+)")).toBeUndefined()
    expect(Matcher.regexProblem("(?:\\d+\\.)?\\d+ ms")).toBeUndefined()
    expect(Matcher.regexProblem("(ab){2,3}c+")).toBeUndefined()
    expect(Matcher.regexProblem("[(+*]+")).toBeUndefined()
    // JavaScript's syntax is taken: named groups, \u escapes
    expect(Matcher.regexProblem("(?<port>\\d+) \\u00e9")).toBeUndefined()
    // the shapes that backtrack exponentially in JavaScript are ordinary, linear patterns here
    for (const nested of ["(a|a)+$", "(a+){20}$", "a*a*a*$", "(a+)+$", "(\\w*)*x", "(?:x+){2,}", "((a|b)+c)*"]) {
      expect(Matcher.regexProblem(nested)).toBeUndefined()
    }
    expect(Matcher.regexProblem("(unclosed")).toContain("not a valid regular expression")
    expect(Matcher.regexProblem("(unclosed")).not.toContain("(unclosed")
    expect(Matcher.regexProblem("a", "g")).toContain("flags")
    const named: ReadonlyArray<readonly [string, string]> = [
      ["(a)\\1", "backreference"],
      ["(?<x>a)\\k<x>", "named backreference"],
      ["a(?=b)", "lookahead"],
      ["a(?!b)", "negative lookahead"],
      ["(?<=a)b", "lookbehind"],
      ["(?<!a)b", "negative lookbehind"]
    ]
    for (const [source, feature] of named) {
      const problem = Matcher.regexProblem(source)
      expect(problem).toContain(`uses a ${feature}`)
      expect(problem).toContain("RE2")
    }
    // inside a class, (?= are characters, not a lookahead
    expect(Matcher.regexProblem("[(?=]")).toBeUndefined()
    expect(Matcher.regexProblem("(?:a*){70}")).toContain("too large once compiled")
    expect(Matcher.regexProblem("x".repeat(Matcher.MAX_PATTERN_CHARS + 1))).toContain("at most")
  })

  it("a regex's window keeps one run within the engine's step bound", () => {
    const small = Matcher.pattern({ regex: "port (\\d+)" })
    expect(Matcher.windowOf(small)).toBe(Matcher.WINDOW_CHARS)
    const large = Matcher.pattern({ regex: "(a+){20}$" })
    expect(Matcher.windowOf(large)).toBeLessThan(Matcher.WINDOW_CHARS)
    expect(Matcher.windowOf(large)).toBeGreaterThanOrEqual(2 * Matcher.OVERLAP_CHARS)
    expect(Matcher.windowOf(Matcher.pattern({ text: "x" }))).toBe(Matcher.WINDOW_CHARS)
  })

  it("the classes that froze JavaScript's engine finish on long lines, and still match", () => {
    const line = "a".repeat(200_000)
    for (const source of ["(a|a)+$", "(a+){20}$", "a*a*a*$"]) {
      const matcher = new Matcher.Matcher(Matcher.pattern({ regex: source }))
      matcher.append(line + "!")
      // JavaScript's answer too: only a*a*a*$ matches (empty, at the very end)
      expect(matcher.check()?.text).toBe(source === "a*a*a*$" ? "" : undefined)
      const live = new Matcher.Matcher(Matcher.pattern({ regex: source }))
      expect(live.check(line.slice(0, 40))?.text).toBe(line.slice(0, 40))
    }
    const groups = new Matcher.Matcher(Matcher.pattern({ regex: "(?<word>[a-z]+) (\\d+)|(never)" }))
    expect(groups.check("ready 42")).toEqual({
      text: "ready 42",
      groups: ["ready", "42", undefined],
      named: { word: "ready" },
      atEnd: true
    })
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
