import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Recording from "../src/Recording.js"

const castOf = (maxBytes: number, input = true) => {
  const lines: Array<string> = []
  let now = 1000
  const cast = new Recording.Cast({ name: "x.cast", write: (line) => lines.push(line), close: Effect.void }, {
    cols: 80,
    rows: 24,
    startedAt: 1_700_000_000_000,
    now: () => now,
    maxBytes,
    input
  })
  return { cast, lines, tick: (ms: number) => (now += ms) }
}

describe("asciicast v2 recordings", () => {
  it("a header, then timed output (UTF-8 whole across chunks), resizes, markers and redacted input", () => {
    const { cast, lines, tick } = castOf(1 << 20)
    const bytes = new TextEncoder().encode("一二")
    tick(250)
    cast.output(bytes.subarray(0, 4))
    cast.output(bytes.subarray(4))
    cast.resize(100, 30)
    cast.marker("send: ls → prompt, exit 0")
    cast.input("hunter2\r", true)
    cast.input("ls\r", false)
    expect(JSON.parse(lines[0]!)).toMatchObject({ version: 2, width: 80, height: 24, timestamp: 1_700_000_000 })
    const events = lines.slice(1).map((line) => JSON.parse(line))
    expect(events.map((event) => event[1])).toEqual(["o", "o", "r", "m", "i", "i"])
    expect(events.slice(0, 2).map((event) => event[2]).join("")).toBe("一二")
    expect(events[0][0]).toBe(0.25)
    expect(events[2][2]).toBe("100x30")
    expect(events[4][2]).toBe("[human typed 8 bytes with echo off]")
    expect(lines.join("\n")).not.toContain("hunter2")
  })

  it("stops at the size cap and says so in its last event", () => {
    const { cast, lines } = castOf(2000)
    for (let i = 0; i < 100; i++) cast.output(new TextEncoder().encode(`line ${i} ${"x".repeat(40)}\r\n`))
    const total = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0)
    expect(total).toBeLessThanOrEqual(2000)
    expect(cast.stopped).toBe(Recording.stoppedAtCap(2000))
    expect(JSON.parse(lines[lines.length - 1]!)).toEqual([0, "m", Recording.stoppedAtCap(2000)])
    const count = lines.length
    cast.output(new TextEncoder().encode("more"))
    expect(lines.length).toBe(count)
  })

  it("input events only when asked", () => {
    const { cast, lines } = castOf(1 << 20, false)
    cast.input("ls\r", false)
    expect(lines.length).toBe(1)
  })

  it.effect("the memory store lists and reads what was written", () =>
    Effect.gen(function*() {
      const store = Recording.makeMemory()
      const file = Option.getOrThrow(yield* store.create({ sessionId: "s-1", startedAt: 5 }))
      file.write("{}")
      expect((yield* store.list).map((info) => info.name)).toEqual(["s-1-5.cast"])
      expect(new TextDecoder().decode(Option.getOrThrow(yield* store.read("s-1-5.cast")))).toBe("{}\n")
    }))
})
