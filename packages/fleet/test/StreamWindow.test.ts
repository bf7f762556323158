import { describe, expect, it } from "vitest"
import { Credits } from "../src/internal/streamWindow.js"

describe("a stream's window", () => {
  it("of one chunk: every chunk waits for the client's acknowledgement (@effect/rpc's own pace)", () => {
    const credits = new Credits({ maxChunks: 1, maxBytes: 1_000_000 })
    expect(credits.sent("1", 10)).toBe(false)
    expect(credits.acked("1", 1)).toBe(true)
    expect(credits.sent("1", 10)).toBe(false)
    expect(credits.acked("1", 1)).toBe(true)
  })

  it("of n chunks: the machine acknowledges until n are out, then passes the client's acknowledgements on", () => {
    const credits = new Credits({ maxChunks: 3, maxBytes: 1_000_000 })
    expect([credits.sent("1", 10), credits.sent("1", 10), credits.sent("1", 10)]).toEqual([true, true, false])
    expect(credits.acked("1", 1)).toBe(true)
    // The acknowledgement owed was given: the next ones only free room.
    expect(credits.acked("1", 1)).toBe(false)
    expect([credits.sent("1", 10), credits.sent("1", 10)]).toEqual([true, false])
    expect(credits.acked("1", 3)).toBe(true)
  })

  it("of bytes: a large chunk fills it alone", () => {
    const credits = new Credits({ maxChunks: 100, maxBytes: 100 })
    expect(credits.sent("1", 60)).toBe(true)
    expect(credits.sent("1", 60)).toBe(false)
    expect(credits.acked("1", 1)).toBe(true)
    expect(credits.sent("1", 500)).toBe(false)
    expect(credits.acked("1", 1)).toBe(false)
    expect(credits.acked("1", 1)).toBe(true)
  })

  it("streams are apart; acknowledgements of an unknown or ended stream, or more than were sent, change nothing", () => {
    const credits = new Credits({ maxChunks: 2, maxBytes: 1_000_000 })
    expect([credits.sent("1", 1), credits.sent("1", 1)]).toEqual([true, false])
    expect(credits.sent("2", 1)).toBe(true)
    expect(credits.acked("3", 5)).toBe(false)
    expect(credits.acked("1", 50)).toBe(true)
    expect([credits.sent("1", 1), credits.sent("1", 1)]).toEqual([true, false])
    credits.ended("1")
    expect(credits.acked("1", 1)).toBe(false)
    expect(credits.sent("1", 1)).toBe(true)
  })
})
