import { describe, expect, it } from "@effect/vitest"
import { MAX_INPUT_CHARS, MAX_MESSAGE_BYTES, parse } from "../src/internal/liveSockets.js"

describe("the live view's client messages", () => {
  it("takes the four kinds, each with its fields checked", () => {
    expect(parse(JSON.stringify({ type: "take" }))).toEqual({ type: "take" })
    expect(parse(JSON.stringify({ type: "release", extra: 1 }))).toEqual({ type: "release" })
    expect(parse(JSON.stringify({ type: "input", data: "ls\r" }))).toEqual({ type: "input", data: "ls\r" })
    expect(parse(JSON.stringify({ type: "resize", cols: 90, rows: 30 }))).toEqual({
      type: "resize",
      cols: 90,
      rows: 30
    })
    expect(parse(JSON.stringify({ type: "resize", cols: 90.5, rows: 30 }))).toBeUndefined()
    expect(parse(JSON.stringify({ type: "shell", command: "id" }))).toBeUndefined()
    expect(parse("{not json")).toBeUndefined()
    expect(parse("null")).toBeUndefined()
  })

  it("the largest input, every character escaped, is taken; a larger one and an oversized message are refused", () => {
    const largest = JSON.stringify({ type: "input", data: "\x1b".repeat(MAX_INPUT_CHARS) })
    expect(largest.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES)
    expect(parse(largest)).toMatchObject({ type: "input" })
    expect(parse(JSON.stringify({ type: "input", data: "a".repeat(MAX_INPUT_CHARS + 1) }))).toBeUndefined()
    // refused before it is decoded or parsed, as bytes too
    const oversized = `{"type":"input","data":"${"a".repeat(MAX_MESSAGE_BYTES)}"}`
    expect(parse(oversized)).toBeUndefined()
    expect(parse(new TextEncoder().encode(oversized))).toBeUndefined()
  })
})
