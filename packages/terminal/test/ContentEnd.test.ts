import { describe, expect, it } from "@effect/vitest"
import { Unicode11Addon } from "@xterm/addon-unicode11"
import xterm from "@xterm/headless"
import * as FastCheck from "effect/FastCheck"
import type { CellRow } from "../src/internal/contentEnd.js"
import * as ContentEnd from "../src/internal/contentEnd.js"
import { coreOf, eraseAbove } from "../src/internal/xtermCore.js"
import * as Utf8 from "../src/Utf8.js"

/** Every way a program can put content into a cell, move it, copy a row or clear it. */
const tokens: ReadonlyArray<string> = [
  "hello",
  "a",
  "x".repeat(37),
  "y".repeat(90),
  "一二三",
  "😀",
  // up to U+00FF a row is read as one byte a character; from the first wider one on, as code units
  "café ÿ\u00a0",
  "\u00ff\u0100",
  "e\u0301",
  "\u0301",
  "\r\n",
  "\n",
  "\r",
  "\t",
  "\b",
  "\x1b[41m",
  "\x1b[0m",
  "\x1b[K",
  "\x1b[1K",
  "\x1b[2K",
  "\x1b[J",
  "\x1b[1J",
  "\x1b[2J",
  "\x1b[3J",
  "\x1b[5@",
  "\x1b[3P",
  "\x1b[4X",
  "\x1b[2L",
  "\x1b[2M",
  "\x1b[S",
  "\x1b[2T",
  "\x1b[3;6r",
  "\x1b[r",
  "\x1b[4h",
  "\x1b[4l",
  "\x1b[?7l",
  "\x1b[?7h",
  "\x1b[5b",
  "\x1b#8",
  "\x1b[?1049h",
  "\x1b[?1049l",
  "\x1b7",
  "\x1b8",
  "\x1bc",
  "\x1b[2'}",
  "\x1b[2'~",
  "\x1b[3 @",
  "\x1b[3 A",
  "\x1bM",
  "\x1bD",
  "\x1bE",
  "\x1b[1A",
  "\x1b[5C",
  "\x1b[3D",
  "\x1b[2;30H",
  "\x1b[8;1H",
  "\x1b[?6h",
  "\x1b[?6l",
  "\x1b[?69h\x1b[5;30s",
  "\x1b[?69l",
  "\x1b[1\"q",
  "\x1b[0\"q",
  "\x1b[?2J",
  "\x1b[?2K"
]

interface Step {
  readonly text: string
  readonly resize?: { readonly cols: number; readonly rows: number }
}

const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  {
    weight: 12,
    arbitrary: FastCheck.array(FastCheck.constantFrom(...tokens), { minLength: 1, maxLength: 8 }).map((parts) => ({
      text: parts.join("")
    }))
  },
  {
    weight: 1,
    arbitrary: FastCheck.record({
      cols: FastCheck.integer({ min: 8, max: 70 }),
      rows: FastCheck.integer({ min: 2, max: 12 })
    })
      .map((resize) => ({ text: "", resize }))
  }
)

const rowsOf = (terminal: xterm.Terminal): Array<CellRow & { getTrimmedLength(): number }> => {
  const rows: Array<CellRow & { getTrimmedLength(): number }> = []
  for (const buffer of [terminal.buffer.normal, terminal.buffer.alternate]) {
    for (let y = 0; y < buffer.length; y++) {
      const view = buffer.getLine(y) as unknown as { readonly _line: CellRow & { getTrimmedLength(): number } }
      rows.push(view._line)
    }
  }
  return rows
}

const open = (cols = 30, rows = 8): xterm.Terminal => {
  const terminal = new xterm.Terminal({ cols, rows, scrollback: 20, allowProposedApi: true, logLevel: "off" })
  terminal.loadAddon(new Unicode11Addon())
  terminal.unicode.activeVersion = "11"
  ContentEnd.install(terminal)
  // as the emulator does: xterm 6.0.0's own erase-above throws on some screens (EmulatorFaults.test.ts)
  for (const prefix of ["", "?"]) {
    terminal.parser.registerCsiHandler({ prefix, final: "J" }, (params) => {
      if (params[0] !== 1) return false
      eraseAbove(coreOf(terminal), prefix === "?")
      return true
    })
  }
  return terminal
}

const writeSync = (terminal: xterm.Terminal, text: string): void =>
  (terminal as unknown as { readonly _core: { writeSync(data: string): void } })._core.writeSync(text)

type Row = Parameters<typeof ContentEnd.rowText>[0]

/** Every row of an 80-column terminal after each step of a random stream of editing sequences, to `check`. */
const everyRow = (check: (row: Row) => void, numRuns: number) =>
  FastCheck.assert(
    FastCheck.property(FastCheck.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
      // wide enough for the rows read from their cells (32 columns and more)
      const terminal = open(80)
      try {
        for (const { resize, text } of steps) {
          if (resize !== undefined) terminal.resize(resize.cols, resize.rows)
          else writeSync(terminal, text)
          for (const row of rowsOf(terminal) as unknown as Array<Row>) check(row)
        }
      } finally {
        terminal.dispose()
      }
    }),
    { numRuns }
  )

describe("ContentEnd", () => {
  it("reads every row's text exactly as xterm's translateToString does, through any stream of editing sequences", () => {
    everyRow((row) => {
      const trimmed = ContentEnd.trimmedLength(row)
      expect(ContentEnd.rowText(row, 0, row.length)).toBe(row.translateToString(false, 0, row.length))
      expect(ContentEnd.rowText(row, 0, trimmed)).toBe(row.translateToString(true))
      expect(ContentEnd.rowText(row, 3, 11)).toBe(row.translateToString(false, 3, 11))
      expect(ContentEnd.rowText(row, 5, 45)).toBe(row.translateToString(false, 5, 45))
    }, 300)
  })

  it("counts every row's UTF-8 bytes as it reads its text, through any stream of editing sequences", () => {
    everyRow((row) => {
      for (const [start, end] of [[0, ContentEnd.trimmedLength(row)], [0, row.length], [3, 11], [0, 5]]) {
        const read = ContentEnd.rowText(row, start!, end!)
        expect(ContentEnd.lastRow.bytes).toBe(Utf8.countBytes(read))
      }
    }, 300)
  })

  it("finds every row's trimmed length exactly as xterm does, through any stream of editing sequences", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        const terminal = open()
        try {
          for (const { resize, text } of steps) {
            if (resize !== undefined) terminal.resize(resize.cols, resize.rows)
            else writeSync(terminal, text)
            for (const row of rowsOf(terminal)) {
              expect(ContentEnd.trimmedLength(row)).toBe(row.getTrimmedLength())
            }
          }
        } finally {
          terminal.dispose()
        }
      }),
      { numRuns: 300 }
    )
  })

  it("bounds the rows it has seen written close to their content, so the scan starts near it", () => {
    const terminal = open(160, 6)
    try {
      writeSync(terminal, Array.from({ length: 40 }, (_, i) => `${i + 1}\r\n`).join(""))
      const rows = rowsOf(terminal).slice(0, 26)
      for (const row of rows) {
        expect(row.__end).toBeLessThanOrEqual(ContentEnd.trimmedLength(row) + 2)
      }
    } finally {
      terminal.dispose()
    }
  })

  it("scans a row from its edge when it holds no bound (made before the wrap)", () => {
    const row = {
      length: 4,
      _data: new Uint32Array([0, 0, 0, 0x400000 | 65, 0, 0, 0x400000, 0, 0, 0x400000, 0, 0]),
      __end: Number.POSITIVE_INFINITY
    }
    expect(ContentEnd.trimmedLength(row)).toBe(2)
  })
})
