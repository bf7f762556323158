import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Keys from "../src/Keys.js"

const normal: Keys.Modes = { applicationCursor: false }
const application: Keys.Modes = { applicationCursor: true }

const encode = (name: string, modes: Keys.Modes = normal): string | Keys.KeyError =>
  Either.merge(Keys.encodeKey(name, modes))

describe("Keys", () => {
  it.each([
    ["Enter", "\r"],
    ["Return", "\r"],
    ["Tab", "\t"],
    ["S-Tab", "\x1b[Z"],
    ["Escape", "\x1b"],
    ["Esc", "\x1b"],
    ["Backspace", "\x7f"],
    ["Delete", "\x1b[3~"],
    ["Insert", "\x1b[2~"],
    ["Space", " "],
    ["PageUp", "\x1b[5~"],
    ["PageDown", "\x1b[6~"],
    ["F1", "\x1bOP"],
    ["F2", "\x1bOQ"],
    ["F3", "\x1bOR"],
    ["F4", "\x1bOS"],
    ["F5", "\x1b[15~"],
    ["F6", "\x1b[17~"],
    ["F7", "\x1b[18~"],
    ["F8", "\x1b[19~"],
    ["F9", "\x1b[20~"],
    ["F10", "\x1b[21~"],
    ["F11", "\x1b[23~"],
    ["F12", "\x1b[24~"]
  ])("scenario 32: %s", (name, bytes) => {
    expect(encode(name)).toBe(bytes)
    expect(encode(name, application)).toBe(bytes)
  })

  it("scenario 32: arrows, Home and End follow the application-cursor mode", () => {
    const keys = { Up: "A", Down: "B", Right: "C", Left: "D", Home: "H", End: "F" }
    for (const [name, final] of Object.entries(keys)) {
      expect(encode(name)).toBe(`\x1b[${final}`)
      expect(encode(name, application)).toBe(`\x1bO${final}`)
    }
  })

  it("scenario 32: modified special keys use xterm's modifier parameter in either mode", () => {
    for (const modes of [normal, application]) {
      expect(encode("C-Up", modes)).toBe("\x1b[1;5A")
      expect(encode("S-Up", modes)).toBe("\x1b[1;2A")
      expect(encode("M-Up", modes)).toBe("\x1b[1;3A")
      expect(encode("C-S-Up", modes)).toBe("\x1b[1;6A")
      expect(encode("C-M-Left", modes)).toBe("\x1b[1;7D")
      expect(encode("C-M-S-End", modes)).toBe("\x1b[1;8F")
    }
    expect(encode("S-F5")).toBe("\x1b[15;2~")
    expect(encode("C-F1")).toBe("\x1b[1;5P")
    expect(encode("C-Delete")).toBe("\x1b[3;5~")
    expect(encode("S-PageUp")).toBe("\x1b[5;2~")
  })

  it("scenario 32: Ctrl, Alt and Shift on characters", () => {
    expect(encode("C-c")).toBe("\x03")
    expect(encode("C-C")).toBe("\x03")
    expect(encode("C-a")).toBe("\x01")
    expect(encode("C-z")).toBe("\x1a")
    expect(encode("C-[")).toBe("\x1b")
    expect(encode("C-\\")).toBe("\x1c")
    expect(encode("C-]")).toBe("\x1d")
    expect(encode("C-^")).toBe("\x1e")
    expect(encode("C-_")).toBe("\x1f")
    expect(encode("C-?")).toBe("\x7f")
    expect(encode("C-Space")).toBe("\x00")
    expect(encode("C-@")).toBe("\x00")
    expect(encode("C- ")).toBe("\x00")
    expect(encode("M-x")).toBe("\x1bx")
    expect(encode("M-X")).toBe("\x1bX")
    expect(encode("A-x")).toBe("\x1bx")
    expect(encode("M-C-c")).toBe("\x1b\x03")
    expect(encode("C-M-c")).toBe("\x1b\x03")
    expect(encode("S-a")).toBe("A")
    expect(encode("M-S-a")).toBe("\x1bA")
    expect(encode("C-S-a")).toBe("\x01")
    expect(encode("M-Enter")).toBe("\x1b\r")
    expect(encode("M-Backspace")).toBe("\x1b\x7f")
    expect(encode("C-Backspace")).toBe("\x08")
    expect(encode("M-Escape")).toBe("\x1b\x1b")
    expect(encode("M-Space")).toBe("\x1b ")
    expect(encode("M-Tab")).toBe("\x1b\t")
  })

  it("scenario 32: single printable characters pass through, case kept", () => {
    for (const char of ["q", "Q", ":", "y", "-", "é", "世", "😀", " "]) expect(encode(char)).toBe(char)
    expect(encode("S--")).toBeInstanceOf(Keys.KeyError)
    expect(encode("M--")).toBe("\x1b-")
  })

  it("names and modifier letters are case-insensitive", () => {
    expect(encode("enter")).toBe("\r")
    expect(encode("ENTER")).toBe("\r")
    expect(encode("pageup")).toBe("\x1b[5~")
    expect(encode("f12")).toBe("\x1b[24~")
    expect(encode("c-c")).toBe("\x03")
    expect(encode("s-tab")).toBe("\x1b[Z")
    expect(encode("m-UP")).toBe("\x1b[1;3A")
  })

  it("rejects unknown keys and combinations a terminal cannot send, naming the key and the valid forms", () => {
    for (
      const name of ["Foo", "", "C-", "C-Enter", "S-Enter", "C-Tab", "S-Escape", "S-1", "C-1", "C-C-c", "\x03", "F13"]
    ) {
      const result = Keys.encodeKey(name, normal)
      expect(Either.isLeft(result), name).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left._tag).toBe("KeyError")
        expect(result.left.key).toBe(name)
        expect(result.left.message).toContain(JSON.stringify(name))
        expect(result.left.message).toContain("C-c")
      }
    }
    expect(encode("Foo")).toMatchObject({ reason: "unknown key" })
  })

  it("encodes a sequence, failing on the first bad key", () => {
    expect(Keys.encodeKeys(["C-a", "k", "Up", "Enter"], application)).toEqual(Either.right("\x01k\x1bOA\r"))
    expect(Keys.encodeKeys([], normal)).toEqual(Either.right(""))
    const bad = Keys.encodeKeys(["Up", "Nope", "Bad"], normal)
    expect(Either.isLeft(bad) && bad.left.key).toBe("Nope")
  })

  it("scenario 32: raw bytes >= 0x80 pass unchanged; text is its exact UTF-8", () => {
    const raw = new Uint8Array([0xff, 0x80, 0xc3, 0x00, 0x1b])
    const bytes = Keys.toBytes(raw)
    expect(bytes).toBe(raw)
    expect(Array.from(bytes)).toEqual([0xff, 0x80, 0xc3, 0x00, 0x1b])
    expect(Array.from(Keys.toBytes("é一😀"))).toEqual(Array.from(Buffer.from("é一😀", "utf8")))
  })
})
