import { Utf8 } from "@agent-terminal/terminal"
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import { composeAroundGap, TextTranscript } from "../src/internal/exec/text.js"

const make = (budget = 4096, maxLines = 1000, maxBytes = 1 << 20) => new TextTranscript({ budget, maxLines, maxBytes })

const written = (chunks: ReadonlyArray<string>, budget?: number) => {
  const transcript = make(budget)
  for (const chunk of chunks) transcript.write(chunk)
  return transcript
}

const pageText = (transcript: TextTranscript, request: { offset?: number; count?: number } = {}) =>
  Either.getOrThrow(transcript.page({ ...request, maxBytes: 1 << 20 }))

const omitted = (text: string) => {
  const match = /… \[omitted (?:(\d+) lines?, )?(\d+) bytes\] …/.exec(text)
  return match === null ? undefined : { lines: Number(match[1] ?? 0), bytes: Number(match[2]) }
}

describe("TextTranscript (child-mode output)", () => {
  it("a bare carriage return redraws the line as a terminal does: a progress bar reads as its final state", () => {
    expect(written(["10%\r20%\r100%\n", "done"]).full()).toEqual({ text: "100%\ndone", truncated: false })
    expect(written(["abc\rX"]).full().text).toBe("Xbc")
    // overwriting half of a wide character blanks its other half, as a terminal does
    expect(written(["a😀b\rxy"]).full().text).toBe("xy b")
  })

  it("CRLF is one newline, also split across writes", () => {
    expect(written(["a\r", "\nb\r\n"]).full().text).toBe("a\nb\n")
    expect(written(["a\r", "\r", "\nb"]).full().text).toBe("a\nb")
  })

  it("takeNew returns what is new; a line still being written comes back only with what it gained", () => {
    const transcript = make()
    transcript.write("one\n")
    expect(transcript.takeNew().text).toBe("one\n")
    expect(transcript.takeNew().text).toBe("")
    transcript.write("tw")
    expect(transcript.takeNew().text).toBe("tw")
    transcript.write("o\nthree\n")
    expect(transcript.takeNew().text).toBe("o\nthree\n")
  })

  it("takeNew returns a redrawn line whole", () => {
    const transcript = make()
    transcript.write("50%")
    expect(transcript.takeNew().text).toBe("50%")
    transcript.write("\r100%\n")
    expect(transcript.takeNew().text).toBe("100%\n")
  })

  it("the whole output stays within the budget, head and tail kept, the middle counted exactly", () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}\n`)
    const total = lines.join("")
    const transcript = written(lines, 512)
    const full = transcript.full()
    expect(full.truncated).toBe(true)
    expect(Utf8.byteLength(full.text)).toBeLessThanOrEqual(512)
    expect(full.text.startsWith("line 1\n")).toBe(true)
    expect(full.text.endsWith("line 5000\n")).toBe(true)
    const gap = omitted(full.text)!
    const [head, tail] = full.text.split(/… \[omitted .*\] …\n?/)
    expect(Utf8.byteLength(head!) + Utf8.byteLength(tail!) + gap.bytes).toBe(Utf8.byteLength(total))
    expect(head!.split("\n").length - 1 + tail!.split("\n").length - 1 + gap.lines).toBe(5000)
  })

  it("takeNew after more than the budget counts what it cannot show", () => {
    const transcript = make(512)
    transcript.write("first\n")
    transcript.takeNew()
    const lines = Array.from({ length: 3000 }, (_, i) => `row ${i}\n`)
    for (const line of lines) transcript.write(line)
    const fresh = transcript.takeNew()
    expect(fresh.truncated).toBe(true)
    expect(Utf8.byteLength(fresh.text)).toBeLessThanOrEqual(512)
    expect(fresh.text).not.toContain("first")
    expect(fresh.text.endsWith("row 2999\n")).toBe(true)
    const gap = omitted(fresh.text)!
    const shown = fresh.text.replace(/… \[omitted .*\] …\n?/, "")
    expect(Utf8.byteLength(shown) + gap.bytes).toBe(Utf8.byteLength(lines.join("")))
  })

  it("pages by lines like a terminal transcript; the line being written is the newest", () => {
    const transcript = written(["a\nb\nc\n", "d", "e"])
    expect(pageText(transcript)).toMatchObject({ text: "a\nb\nc\nde", totalLines: 4, lineBegin: 0, lineEnd: 4 })
    expect(pageText(transcript, { offset: 1, count: 2 })).toMatchObject({ text: "b\nc", lineBegin: 1, lineEnd: 3 })
    expect(Either.isLeft(transcript.page({ offset: -1, maxBytes: 100 }))).toBe(true)
  })

  it("keeps only the newest lines for paging (bounded), numbered from the first line", () => {
    const transcript = new TextTranscript({ budget: 4096, maxLines: 10, maxBytes: 1 << 20 })
    for (let i = 0; i < 100; i++) transcript.write(`${i}\n`)
    expect(pageText(transcript)).toMatchObject({ totalLines: 10, lineBegin: 90, lineEnd: 100 })
  })

  const token = FastCheck.constantFrom("a", "bc", "é", "一", "😀", "\n", "\r", "\r\n", "12%", " ")
  const text = FastCheck.array(token, { minLength: 1, maxLength: 80 }).map((tokens) => tokens.join(""))
  const cuts = FastCheck.array(FastCheck.nat(), { maxLength: 8 })

  const split = (input: string, at: ReadonlyArray<number>): Array<string> => {
    const points = [...new Set(at.map((n) => n % (input.length + 1)))].sort((a, b) => a - b)
    const out: Array<string> = []
    let from = 0
    for (const point of points) {
      out.push(input.slice(from, point))
      from = point
    }
    out.push(input.slice(from))
    return out
  }

  it("a carriage return that overwrites half of an astral character gives the same text however it is split", () => {
    // found by the property below: the orphaned half used to be deleted, shifting every later column
    const input = "a\r😀12%12%\ra😀"
    expect(written([input], 64).full()).toEqual({ text: "a😀2%12%", truncated: false })
    expect(written(split(input, [12]), 64).full()).toEqual(written([input], 64).full())
  })

  it.prop("the same text split anywhere gives the same output and pages", [text, cuts], ([input, at]) => {
    const whole = written([input], 64)
    const pieces = written(split(input, at), 64)
    expect(pieces.full()).toEqual(whole.full())
    expect(pageText(pieces)).toEqual(pageText(whole))
  })

  it.prop("without redraws, the increments add up to the whole output", [text, cuts], ([raw, at]) => {
    const input = raw.replace(/\r/g, "")
    const transcript = make(1 << 16)
    let seen = ""
    for (const piece of split(input, at)) {
      transcript.write(piece)
      seen += transcript.takeNew().text
    }
    expect(seen).toBe(transcript.full().text)
    expect(seen).toBe(input)
  })
})

describe("composeAroundGap", () => {
  it("fits the budget and counts everything it leaves out", () => {
    const before = "h1\nh2\nh3\n"
    const after = "t1\nt2\nt3\n"
    const composed = composeAroundGap(before, after, 1000, 50, 40)
    expect(Utf8.byteLength(composed.text)).toBeLessThanOrEqual(40)
    const gap = omitted(composed.text)!
    const shown = composed.text.replace(/… \[omitted .*\] …\n?/, "")
    expect(Utf8.byteLength(shown) + gap.bytes).toBe(before.length + after.length + 1000)
  })

  it("without a gap it is the plain head and tail cut", () => {
    expect(composeAroundGap("abc", "def", 0, 0, 100)).toEqual({ text: "abcdef", truncated: false })
  })
})
