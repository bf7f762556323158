import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import * as Emulator from "../src/Emulator.js"
import * as Utf8 from "../src/Utf8.js"
import { bytes, bytewise, encoder, make, marker, nonce, observe, splitAt } from "./support/emulator.js"

/** Every way to cut `data` in two, and in three around each offset. */
const everySplit = function*(data: Uint8Array): Generator<Array<Uint8Array>> {
  for (let i = 1; i < data.length; i++) {
    yield splitAt(data, [i])
    yield splitAt(data, [i, i + 1])
  }
}

const pageOf = (emulator: Emulator.Emulator, request: { offset?: number; count?: number; maxBytes: number }) =>
  Either.getOrThrow(emulator.page(request))

describe("Emulator scenarios", () => {
  it("scenario 25: pages over the transcript with tiny caps, code points intact", () => {
    const { emulator } = make()
    emulator.write("一\r\n二\r\n三\r\n四")
    expect(pageOf(emulator, { maxBytes: 100 }).text).toBe("一\n二\n三\n四")
    const tiny = pageOf(emulator, { maxBytes: 7 })
    expect(tiny).toMatchObject({ text: "三\n四", truncated: true, lineBegin: 2, lineEnd: 4, totalLines: 4 })
    expect(pageOf(emulator, { maxBytes: 2 })).toMatchObject({ text: "", truncated: true })
    expect(pageOf(emulator, { offset: 1, count: 2, maxBytes: 100 }).text).toBe("二\n三")
    expect(pageOf(emulator, { offset: 9, maxBytes: 100 })).toMatchObject({ text: "", lineBegin: 0, lineEnd: 0 })
    expect(Either.isLeft(emulator.page({ offset: -1, maxBytes: 100 }))).toBe(true)
    expect(Either.isLeft(emulator.page({ count: 0, maxBytes: 100 }))).toBe(true)
    emulator.dispose()
  })

  it("scenario 26: a long line in a page is cut on a code-point boundary", () => {
    const { emulator } = make({ cols: 10 })
    emulator.write("一二三四五六七八九十😀")
    const page = pageOf(emulator, { maxBytes: 8 })
    expect(page.truncated).toBe(true)
    expect(page.text).toBe("十😀")
    expect(Utf8.byteLength(page.text)).toBeLessThanOrEqual(8)
    emulator.dispose()
  })

  describe("scenario 27: escape sequences never leak", () => {
    const sequences = [
      "\x1b[38;5;196m",
      "\x1b[?2004h",
      "\x1b[1;31;4m",
      "\x1b]0;window title\x07",
      "\x1b]8;id=1;https://example.com/path\x1b\\",
      "\x1bP1$qm\x1b\\",
      "\x1bPq#0;2;0;0;0#1!20~-\x1b\\",
      "\x1b_application program command\x1b\\",
      "\x1b^privacy message\x1b\\",
      "\x1b[6n",
      marker("D", "0"),
      marker("B")
    ]

    it.each(sequences)("%j split at every offset shows nothing", (sequence) => {
      const data = bytes("<", sequence, ">")
      for (const chunks of everySplit(data)) {
        const observed = observe(chunks)
        expect(observed.page).toBe("<>")
        expect(observed.captured.text).toBe("<>")
      }
    })

    it("an OSC 8 hyperlink shows its text, never its target", () => {
      const data = bytes("see \x1b]8;;https://example.com/docs\x1b\\the docs\x1b]8;;\x1b\\ now\r\n")
      for (const chunks of [[data], bytewise(data), ...everySplit(data)]) {
        expect(observe(chunks).page).toBe("see the docs now")
      }
    })

    it("DCS payloads (status requests, sixel) never show; the status request is answered", () => {
      const observed = observe([bytes("a\x1bP$qm\x1b\\b\x1bPq\"1;1;8;8#0~~~~\x1b\\c")])
      expect(observed.page).toBe("abc")
      expect(observed.replies).toContain("\x1bP1$r")
    })
  })

  describe("scenario 28: newlines and UTF-8 across chunks", () => {
    it("CRLF split between CR and LF is one newline", () => {
      for (const chunks of [["a\r", "\nb"], [bytes("a\r"), bytes("\nb")], bytewise(bytes("a\r\nb"))]) {
        const observed = observe(chunks)
        expect(observed.log).toEqual([])
        expect(observed.page).toBe("a\nb")
        expect(observed.captured.text).toBe("a\nb")
      }
    })

    it("invalid UTF-8 reads as U+FFFD, also split", () => {
      const data = bytes("a", [0xff], "b", [0xc3, 0x28], "c", [0xe2, 0x80], "d", [0xf0, 0x9f, 0x98], "\r\n")
      for (const chunks of [[data], bytewise(data), ...everySplit(data)]) {
        expect(observe(chunks).page).toBe("a\uFFFDb\uFFFD(c\uFFFDd\uFFFD")
      }
    })

    it.each(["一二三", "😀", "👍🏽", "👨‍👩‍👧", "e\u0301", "—‘’…", "\u{2000B}", "\u{1F000}", "한국어", "🇯🇵"])(
      "%s split at every byte offset comes out whole",
      (text) => {
        const data = bytes(`<${text}>\r\n`)
        for (const chunks of [bytewise(data), ...everySplit(data)]) {
          const observed = observe(chunks, { cols: 40 })
          expect(observed.page).toBe(`<${text}>`)
        }
      }
    )

    it("wide characters take two columns (Unicode 11 widths)", () => {
      const { emulator } = make({ cols: 40 })
      emulator.write("一😀a")
      expect(emulator.cursor().col).toBe(5)
      emulator.dispose()
    })
  })

  describe("scenario 29: an unterminated sequence larger than the read cap", () => {
    const readCap = 256 * 1024
    const chunk = encoder.encode("x".repeat(64 * 1024))
    const long = (open: string, close: string) => {
      const chunks: Array<Uint8Array | string> = ["before", open]
      for (let i = 0; i < (4 * readCap) / chunk.length; i++) chunks.push(chunk)
      chunks.push(close, "after\r\n")
      return chunks
    }

    it.each([
      ["an OSC title", "\x1b]0;", "\x07"],
      ["a hyperlink", "\x1b]8;;", "\x1b\\"],
      ["one of our markers", `\x1b]7331;D;${nonce};`, "\x07"],
      ["a DCS status request", "\x1bP$q", "\x1b\\"],
      ["an APC string", "\x1b_", "\x1b\\"]
    ])("%s is discarded through its terminator", (_, open, close) => {
      const observed = observe(long(open, close))
      expect(observed.page).toBe("beforeafter")
      expect(observed.markers).toEqual([])
      expect(observed.replies).toBe("")
    })

    it("a marker's payload is read as written: ASCII, accented and astral characters alike", () => {
      for (const payload of [`D;${nonce};0`, `D;${nonce};é`, `D;${nonce};😀x`]) {
        for (const chunks of [[bytes(`a\x1b]7331;${payload}\x07b`)], bytewise(bytes(`a\x1b]7331;${payload}\x07b`))]) {
          const observed = observe(chunks)
          expect(observed.markers.map((seen) => seen.payload)).toEqual([payload])
          expect(observed.page).toBe("ab")
        }
      }
    })

    it("memory stays bounded while it streams", () => {
      v8.setFlagsFromString("--expose-gc")
      const gc = vm.runInNewContext("gc") as () => void
      for (const [open, close] of [["\x1b]0;", "\x07"], ["\x1bP$q", "\x1b\\"], [`\x1b]7331;B;${nonce};`, "\x07"]]) {
        const { emulator } = make()
        emulator.write(`start${open}`)
        gc()
        const before = process.memoryUsage().heapUsed
        // 9.8 M characters: just under the 10 M that xterm itself would buffer before giving up
        for (let i = 0; i < 150; i++) emulator.write(chunk)
        gc()
        const growth = process.memoryUsage().heapUsed - before
        emulator.write(`${close}end`)
        expect(pageOf(emulator, { maxBytes: 100 }).text).toBe("startend")
        expect(growth).toBeLessThan(4 * 1024 * 1024)
        emulator.dispose()
      }
    })
  })

  describe("scenario 30: a progress bar reads as its final state", () => {
    it.each([
      ["10%\r20%\r100%", "100%"],
      ["downloading 10%\rdone\x1b[K", "done"],
      ["[==    ] 30%\r[======] 100%\r\n", "[======] 100%"],
      ["\x1b[?25l50%\x1b[4D75%\x1b[4D100%\x1b[?25h\r\n", "100%"]
    ])("%j → %j", (stream, final) => {
      const data = bytes(stream)
      for (const chunks of [[data], bytewise(data), ...everySplit(data)]) {
        const observed = observe(chunks)
        expect(observed.page).toBe(final)
        expect(observed.captured.text).toBe(final)
      }
    })

    it("a progress bar that redraws a block of lines in place", () => {
      const frames = [1, 2, 3].map((n) => `a ${n}0%\r\nb ${n}0%\r\n`).join("\x1b[2A")
      expect(observe([bytes(frames)]).page).toBe("a 30%\nb 30%")
    })
  })

  describe("scenario 31: terminal queries are answered", () => {
    const queries = [
      ["cursor position", "ab\r\ncd\x1b[6n", "\x1b[2;3R"],
      ["primary device attributes", "\x1b[c", "\x1b[?1;2c"],
      ["secondary device attributes", "\x1b[>c", "\x1b[>0;276;0c"],
      ["window size in characters", "\x1b[18t", "\x1b[8;5;20t"],
      ["device status", "\x1b[5n", "\x1b[0n"],
      ["window size in pixels (8 × 16 per cell)", "\x1b[14t", "\x1b[4;80;160t"],
      ["cell size in pixels", "\x1b[16t", "\x1b[6;16;8t"],
      ["background color", "\x1b]11;?\x07", "\x1b]11;rgb:0000/0000/0000\x1b\\"],
      ["foreground color", "\x1b]10;?\x1b\\", "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"],
      ["a palette color", "\x1b]4;1;?\x07", "\x1b]4;1;rgb:cccc/0000/0000\x1b\\"],
      ["a color the program set", "\x1b]11;#102030\x07\x1b]11;?\x07", "\x1b]11;rgb:1010/2020/3030\x1b\\"]
    ] as const

    it.each(queries)("%s, also split at every offset", (_, query, answer) => {
      const data = bytes(query)
      for (const chunks of [[data], bytewise(data), ...everySplit(data)]) {
        expect(observe(chunks).replies).toBe(answer)
      }
    })

    it("a query never shows as text", () => {
      expect(observe([bytes("a\x1b[6nb\x1b[cc")]).page).toBe("abc")
    })
  })

  describe("full screen and resets", () => {
    it("the alternate screen is reported with its rows and never enters the log", () => {
      const { emulator } = make()
      emulator.write("before\r\n$ ")
      emulator.write("\x1b[?1049h\x1b[H\x1b[2Jfile line 1\r\nfile line 2\r\n~\r\n:")
      expect(emulator.modes.alternateScreen).toBe(true)
      const screen = emulator.screen()
      expect(screen.alternate).toBe(true)
      expect(screen.rows.slice(0, 4)).toEqual(["file line 1", "file line 2", "~", ":"])
      expect(screen.cursor).toEqual({ row: 3, col: 1 })
      emulator.write("\x1b[?1049l")
      expect(emulator.modes.alternateScreen).toBe(false)
      expect(pageOf(emulator, { maxBytes: 100 }).text).toBe("before\n$ ")
      emulator.dispose()
    })

    it("the modes a program sets are read as it sets them, and a full reset clears them", () => {
      const { emulator } = make()
      expect(emulator.modes).toEqual({ bracketedPaste: false, applicationCursor: false, alternateScreen: false })
      emulator.write("\x1b[?2004h\x1b[?1h")
      expect(emulator.modes).toEqual({ bracketedPaste: true, applicationCursor: true, alternateScreen: false })
      emulator.write("\x1b[?1049h")
      expect(emulator.modes.alternateScreen).toBe(true)
      emulator.write("\x1b[?2004l\x1b[?1l")
      expect(emulator.modes).toEqual({ bracketedPaste: false, applicationCursor: false, alternateScreen: true })
      emulator.write("\x1b[?2004h\x1bc")
      expect(emulator.modes).toEqual({ bracketedPaste: false, applicationCursor: false, alternateScreen: false })
      emulator.write("\x1b[?1049h")
      expect(emulator.modes.alternateScreen).toBe(true)
      emulator.dispose()
    })

    it("a cleared screen scrolls into the log, and what follows is the send's output", () => {
      const { emulator } = make()
      for (let i = 0; i < 8; i++) emulator.write(`old ${i}\r\n`)
      emulator.write("$ ")
      const capture = emulator.capture(emulator.cursor(), 1000)
      emulator.write("clear\r\n\x1b[H\x1b[2J\x1b[3Jnew 1\r\nnew 2\r\n")
      expect(emulator.finish(capture).text).toBe("clear\nnew 1\nnew 2")
      expect(pageOf(emulator, { maxBytes: 1000 }).text).toContain("old 7\n$ clear\nnew 1\nnew 2")
      emulator.dispose()
    })

    it("a full reset keeps the transcript and the numbering of rows", () => {
      const { emulator, markers } = make()
      for (let i = 0; i < 12; i++) emulator.write(`line ${i}\r\n`)
      const capture = emulator.capture(emulator.cursor(), 1000)
      emulator.write(`\x1bcafter 1\r\nafter 2\r\n${marker("D", "0")}$ ${marker("B")}`)
      const lines = pageOf(emulator, { maxBytes: 1000 }).text.split("\n")
      expect(lines.slice(-4)).toEqual(["line 11", "after 1", "after 2", "$ "])
      expect(emulator.finish(capture, { row: markers[0]!.row, col: markers[0]!.col }).text).toBe("after 1\nafter 2")
      expect(markers[1]!.row).toBe(markers[0]!.row)
      expect(markers[0]!.row).toBeGreaterThan(12)
      emulator.dispose()
    })
  })

  describe("captures", () => {
    it("with xterm's scrollback full, the bottom row reads as itself (not as the row after it, the oldest kept)", () => {
      // xterm keeps its rows in a ring: once its 64 rows of scrollback are full, the index past the bottom
      // row is the oldest row kept, here a piece of the long line, which made the bottom row read as wrapped
      const { emulator } = make({ scrollbackLines: 200, scrollbackMaxBytes: 10_000 })
      emulator.write(`${"w".repeat(20 * 70 + 3)}\r\n`)
      const capture = emulator.capture(emulator.cursor(), 1000)
      emulator.write("1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n$ ")
      expect(emulator.finish(capture).text).toBe("1\n2\n3\n4\n5\n6\n$ ")
      expect(pageOf(emulator, { maxBytes: 10_000 }).text).toMatch(/w{3}\n1\n2\n3\n4\n5\n6\n\$ $/)
      emulator.dispose()
    })

    it("over the budget keep the head and the tail and count what is between", () => {
      const { emulator } = make({ cols: 20, rows: 5 })
      const capture = emulator.capture(emulator.cursor(), 30)
      for (let i = 1; i <= 100; i++) emulator.write(`line ${i}\r\n`)
      const captured = emulator.finish(capture)
      const lines = captured.text.split("\n")
      expect(captured.truncated).toBe(true)
      expect(lines[0]).toBe("line 1")
      expect(lines.at(-1)).toBe("line 100")
      expect(lines).toContain(Emulator.omissionLine(captured.omittedLines, captured.omittedBytes))
      expect(lines.length - 1 + captured.omittedLines).toBe(100)
    })

    it("one huge wrapped line stays within the budget, its start and end kept", () => {
      const { emulator } = make({ cols: 20, rows: 5 })
      const capture = emulator.capture(emulator.cursor(), 100)
      emulator.write("START")
      for (let i = 0; i < 5000; i++) emulator.write("0123456789")
      emulator.write("END\r\n")
      const captured = emulator.finish(capture)
      expect(captured.truncated).toBe(true)
      expect(captured.text.startsWith("START")).toBe(true)
      expect(captured.text.endsWith("END")).toBe(true)
      expect(Utf8.byteLength(captured.text)).toBeLessThan(400)
      expect(captured.omittedBytes).toBeGreaterThan(49_000)
    })

    it("rebasing drops what came before the new start (the echo of a command line)", () => {
      const { emulator } = make({ cols: 20, rows: 5 })
      emulator.write("$ ")
      const capture = emulator.capture(emulator.cursor(), 1000)
      emulator.write("echo hi\r\n")
      const start = emulator.cursor()
      emulator.write("hi\r\n")
      capture.rebase(start)
      expect(emulator.finish(capture).text).toBe("hi")
    })
  })
})
