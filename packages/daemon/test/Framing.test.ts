import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Msgpackr from "msgpackr"
import { Framing } from "../src/index.js"

const messages = [
  { _tag: "Request", id: "1", tag: "Hello", payload: { version: 2 }, headers: [] },
  { _tag: "Ping" },
  { _tag: "Request", id: "2", tag: "Send", payload: { text: "x".repeat(70_000) }, headers: [] }
]

describe("Framing", () => {
  it.prop(
    "the same frames split anywhere give the same messages",
    [fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 30 })],
    ([cuts]) => {
      const packr = new Msgpackr.Packr({ useRecords: true })
      const bytes = Buffer.concat(messages.map((message) => Framing.encode(packr, message)))
      const decoder = new Framing.Decoder(1024 * 1024)
      const out: Array<unknown> = []
      for (let at = 0, i = 0; at < bytes.length; i++) {
        const size = cuts[i % cuts.length]!
        out.push(...decoder.push(bytes.subarray(at, at + size)))
        at += size
      }
      expect(out).toEqual(messages)
      expect(decoder.buffered).toBe(0)
    }
  )

  it("a frame over the bound is refused at its header; an unfinished frame is never parsed", () => {
    const decoder = new Framing.Decoder(64 * 1024)
    expect(() => decoder.push(Uint8Array.from([0xdd, 0xff, 0xff, 0xff, 0xff]))).toThrow("maximum size of 65536")
    let unpacked = 0
    const counting = new Msgpackr.Unpackr({ useRecords: true })
    const unpack = counting.unpack.bind(counting)
    counting.unpack = ((buffer: Uint8Array) => {
      unpacked++
      return unpack(buffer)
    }) as typeof counting.unpack
    const slow = new Framing.Decoder(64 * 1024, counting)
    const frame = Framing.encode(new Msgpackr.Packr({ useRecords: true }), { text: "y".repeat(60_000) })
    for (let at = 0; at < frame.length - 1; at += 100) {
      expect(slow.push(frame.subarray(at, Math.min(at + 100, frame.length - 1)))).toEqual([])
    }
    expect(unpacked).toBe(0)
    expect(slow.push(frame.subarray(frame.length - 1))).toEqual([{ text: "y".repeat(60_000) }])
    expect(unpacked).toBe(1)
  })
})
