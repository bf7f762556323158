import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Matcher from "../src/Matcher.js"
import { bytes, make, marker, observed, splitAt } from "./support/emulator.js"

/**
 * Plain output (printable ASCII, CR, LF) is held back until something reads the terminal, and the lines of it
 * that scroll away before anyone could see them are logged from the text without being printed. Everything
 * observable must be what xterm printing every line gives: the reference here is the same bytes written one
 * line at a time, the terminal read after each (nothing held, nothing skipped).
 */

const cols = 12
const rows = 4

const lineOf = FastCheck.oneof(
  FastCheck.constantFrom(
    "",
    "a",
    "ab   ",
    " ".repeat(cols + 2),
    "x".repeat(cols - 1),
    "y".repeat(cols),
    "z".repeat(cols + 1),
    "w".repeat(3 * cols)
  ),
  FastCheck.string({ minLength: 0, maxLength: 3 * cols }).map((text) => text.replace(/[^\x20-\x7e]/g, "."))
)

/** One byte or character that is not plain (printable ASCII, CR, LF), inside a line. */
const notPlain = FastCheck.constantFrom(
  "\t",
  "\x07",
  "\x00",
  "\x7f",
  "\x0e",
  "\x0f",
  "\x1b[31m",
  "\x1b[1A",
  "é",
  "\u009b"
)

/**
 * Many lines, ended by CR LF as a pty ends them: more than the screen and xterm's scrollback hold; sometimes one
 * of them has something in it that is not plain.
 */
const flood = FastCheck.tuple(
  FastCheck.array(lineOf, { minLength: 1, maxLength: 8 }),
  FastCheck.integer({ min: 40, max: 260 }),
  FastCheck.option(FastCheck.tuple(FastCheck.nat(), notPlain), { freq: 3 })
).map(([lines, count, odd]) =>
  Array.from(
    { length: count },
    (_, i) => `${i}${lines[i % lines.length]}${odd !== null && odd[0] % count === i ? odd[1] : ""}\r\n`
  ).join("")
)

const tokens = FastCheck.oneof(
  { weight: 6, arbitrary: flood },
  { weight: 4, arbitrary: lineOf.map((line) => `${line}\r\n`) },
  { weight: 2, arbitrary: lineOf },
  {
    weight: 4,
    arbitrary: FastCheck.constantFrom(
      "\r",
      "\n",
      "\r\n",
      "\t",
      "\b",
      "   ",
      "\x1b[31m",
      "\x1b[41m",
      "\x1b[0m",
      "\x1b[1A",
      "\x1b[3;1H",
      "\x1b[H\x1b[2J",
      "\x1b[H\x1b[2J\x1b[3J",
      "\x1b[2;3r",
      "\x1b[r",
      "\x1b[4h",
      "\x1b[4l",
      "\x1b[?7l",
      "\x1b[?7h",
      "\x1b(0",
      "\x1b(B",
      "\x1b[?1049h",
      "\x1b[?1049l",
      "\x1b[6n",
      "\x1b]0;title\x07",
      "\x1bc",
      "一二",
      "é",
      marker("C"),
      marker("D", "0")
    )
  }
)

/** A character's first bytes without the rest (a broken stream): the next plain byte ends it as U+FFFD. */
const brokenBytes = FastCheck.constantFrom<ReadonlyArray<number>>([0xc3], [0xe2, 0x80], [0xf0, 0x9f, 0x98])

const scenario = FastCheck.array(
  FastCheck.oneof({ weight: 12, arbitrary: tokens }, { weight: 1, arbitrary: brokenBytes }),
  { minLength: 1, maxLength: 14 }
)
  .map((parts) => bytes(...parts))
  .chain((data) =>
    FastCheck.tuple(
      FastCheck.constant(data),
      FastCheck.array(FastCheck.integer({ min: 0, max: data.length }), { maxLength: 16 }),
      FastCheck.array(FastCheck.boolean(), { minLength: 17, maxLength: 17 })
    )
  )

interface Options {
  readonly scrollbackLines: number
  readonly captureBudget: number
  /** A watch open from the start (output is then parsed as it comes, lines still logged unprinted). */
  readonly watch?: boolean
}

/** Everything a reader can see: the log, the transcript, the screen, the snapshot, a capture, a watch, markers, replies. */
const observe = (chunks: ReadonlyArray<Uint8Array>, readAfter: (index: number) => boolean, options: Options) => {
  const made = make({ cols, rows, scrollbackLines: options.scrollbackLines, scrollbackMaxBytes: 100_000 })
  const { emulator } = made
  const capture = emulator.capture(emulator.cursor(), options.captureBudget)
  const watch = options.watch === true
    ? emulator.watch(emulator.cursor(), Matcher.pattern({ regex: "9[a-z ]*\\n1[0-9]*\\n" }))
    : undefined
  chunks.forEach((chunk, index) => {
    emulator.write(chunk)
    // a reader now: what is held is parsed before it answers
    if (readAfter(index)) emulator.cursor()
  })
  const outcome = { ...observed(made, capture), snapshot: emulator.snapshot().data, watched: watch?.check() }
  const unprinted = emulator.unprintedRows
  emulator.dispose()
  return { observed: outcome, unprinted }
}

/** The bytes cut at every LF: no piece holds two whole lines, so nothing can be skipped. */
const lineByLine = (data: Uint8Array): Array<Uint8Array> =>
  splitAt(data, Array.from(data.entries()).filter(([, byte]) => byte === 0x0a).map(([index]) => index + 1))

let skipped = 0

describe("Emulator: plain output held back and lines logged unprinted read as xterm printing every line", () => {
  it.prop(
    "log, transcript, screen, snapshot, capture, markers and replies match, for any split and any reads between",
    [scenario, FastCheck.constantFrom(30, 500), FastCheck.constantFrom(40, 100_000), FastCheck.boolean()],
    ([[data, cuts, reads], scrollbackLines, captureBudget, watch]) => {
      const options = { scrollbackLines, captureBudget, watch }
      const reference = observe(lineByLine(data), () => true, options).observed
      // node's `Buffer`s at any offset, as a pty's reads come (the one-byte decoding of plain bytes)
      const tested = observe(splitAt(Buffer.from(data), cuts), (index) => reads[index] ?? false, options)
      expect(tested.observed).toEqual(reference)
      if (tested.unprinted > 0) skipped++
    },
    { fastCheck: { numRuns: 250 } }
  )

  it("the runs above did log lines unprinted (else they compared xterm with itself)", () => {
    expect(skipped).toBeGreaterThan(25)
  })

  it("plain output waits for a reader, unless a watch is open: it looks at the screen between writes", () => {
    const lines = bytes(...Array.from({ length: 10 }, (_, i) => `line ${i}\r\n`))
    // the rows the 10 lines and the empty row after them scroll off the screen
    const scrolledOff = Array.from({ length: 10 + 1 - rows }, (_, i) => `line ${i}`)
    const held = make({ cols, rows })
    const heldCapture = held.emulator.capture(held.emulator.cursor(), 1000)
    held.emulator.write(lines)
    // nothing parsed yet: no row has reached the capture (its rows are read without asking the emulator)
    expect(heldCapture.head).toEqual([])
    held.emulator.cursor()
    expect(heldCapture.head.map((line) => line.text)).toEqual(scrolledOff)

    const watched = make({ cols, rows })
    const watchedCapture = watched.emulator.capture(watched.emulator.cursor(), 1000)
    watched.emulator.watch(watched.emulator.cursor(), Matcher.pattern({ text: "never" }))
    watched.emulator.write(lines)
    expect(watchedCapture.head.map((line) => line.text)).toEqual(scrolledOff)
    held.emulator.dispose()
    watched.emulator.dispose()
  })

  it("plain bytes after a character's unfinished start are decoded after it (U+FFFD), not one byte a character", () => {
    const options = { scrollbackLines: 30, captureBudget: 1000 }
    const chunks = [Buffer.from([0x61, 0xe2, 0x80]), Buffer.from("b\r\nc\r\n"), Buffer.from("d\r\n")]
    const tested = observe(chunks, () => false, options).observed
    expect(tested).toEqual(observe([bytes("a", [0xe2, 0x80], "b\r\nc\r\nd\r\n")], () => true, options).observed)
    expect(tested.captured.text).toBe("a\ufffdb\nc\nd")
  })

  it("a flood at the bottom of the screen is logged whole, and xterm prints only the rows it keeps", () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `l${i}`)
    const chunks = [bytes("\x1b[4;1H"), bytes(...lines.map((line) => `${line}\r\n`))]
    const options = { scrollbackLines: 5000, captureBudget: 1 << 20 }
    const { observed: tested, unprinted } = observe(chunks, () => false, options)
    const reference = observe(
      lineByLine(bytes("\x1b[4;1H", ...lines.map((line) => `${line}\r\n`))),
      () => true,
      options
    )
    expect(reference.unprinted).toBe(0)
    // the first line ends the cursor's row; the last rows + 64 are printed
    expect(unprinted).toBe(1000 - 1 - (rows + 64))
    expect(tested).toEqual(reference.observed)
    expect(tested.log).toEqual(["", "", "", ...lines.slice(0, 997)])
    expect(tested.captured.text).toBe(`\n\n\n${lines.join("\n")}`)
  })
})
