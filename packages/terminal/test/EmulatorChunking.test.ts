import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { bytes, bytewise, marker, observe, splitAt } from "./support/emulator.js"

/** Pieces of real terminal output: text of every width, controls, escapes of every kind, broken bytes. */
const tokens: ReadonlyArray<string | ReadonlyArray<number>> = [
  "hello",
  "a",
  " ",
  "x".repeat(27),
  "一二三",
  "😀",
  "👍🏽",
  "👨‍👩‍👧",
  "e\u0301",
  "—‘’…",
  "\u{2000B}\u{1F000}",
  "\r\n",
  "\n",
  "\r",
  "\t",
  "\b",
  "\x1b[31m",
  "\x1b[0m",
  "\x1b[2K",
  "\x1b[1A",
  "\x1b[K",
  "\x1b[3D",
  "\x1b[2;4H",
  "\x1b[?2004h",
  "\x1b[?2004l",
  "\x1b[?1h",
  "\x1b[?1l",
  "\x1b[?1049h",
  "\x1b[?1049l",
  "\x1b[H\x1b[2J\x1b[3J",
  "\x1b]8;;https://example.com/\x07",
  "\x1b]8;;\x1b\\",
  "\x1b]0;a title\x07",
  "\x1bP1$qm\x1b\\",
  "\x1bPqsixel-payload\x1b\\",
  "\x1b[6n",
  "\x1b[c",
  "\x1b[>c",
  "\x1b[18t",
  "\x1b[5n",
  marker("D", "0"),
  marker("B"),
  marker("C"),
  "\x1b]7331;D;not-our-nonce;1\x1b\\",
  [0xff],
  [0xc3],
  [0x80],
  [0xe2, 0x80],
  "10%\r20%\r100%",
  "\x1bc"
]

const stream = FastCheck.array(FastCheck.constantFrom(...tokens), { minLength: 1, maxLength: 60 })
  .map((parts) => bytes(...parts))

const withCuts = stream.chain((data) =>
  FastCheck.tuple(
    FastCheck.constant(data),
    FastCheck.array(FastCheck.integer({ min: 0, max: data.length }), { maxLength: 24 })
  )
)

describe("Emulator: any split of the same bytes reads the same", () => {
  it.prop(
    "line log, screen, markers, replies and captured output do not depend on chunk boundaries",
    [withCuts],
    ([[data, cuts]]) => {
      const whole = observe([data])
      expect(observe(splitAt(data, cuts))).toEqual(whole)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "byte by byte reads the same as one chunk",
    [stream],
    ([data]) => {
      expect(observe(bytewise(data))).toEqual(observe([data]))
    },
    { fastCheck: { numRuns: 60 } }
  )

  it.prop(
    "a tiny capture budget keeps head and tail the same way for any split",
    [withCuts],
    ([[data, cuts]]) => {
      const options = { captureBudget: 24, scrollbackLines: 6, scrollbackMaxBytes: 90 }
      expect(observe(splitAt(data, cuts), options)).toEqual(observe([data], options))
    },
    { fastCheck: { numRuns: 200 } }
  )
})
