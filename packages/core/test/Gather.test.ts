import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Watch from "../src/Watch.js"

const output = (text: string): Watch.WatchEvent => ({ _tag: "Output", data: new TextEncoder().encode(text) })
const textOf = (event: Watch.WatchEvent) => event._tag === "Output" ? new TextDecoder().decode(event.data) : event._tag

/** A source the test feeds, and the messages gather sends, as they are sent. */
const harness = Effect.gen(function*() {
  const source = yield* Mailbox.make<Watch.WatchEvent>()
  const messages: Array<Array<string>> = []
  yield* Watch.gather(Mailbox.toStream(source), { waitMs: 5, streamingBytes: 100 }).pipe(
    Stream.runForEachChunk((chunk) => Effect.sync(() => messages.push(Chunk.toArray(chunk).map(textOf)))),
    Effect.forkScoped
  )
  // let the consumer take what was offered (no time passes)
  const settle = Effect.yieldNow().pipe(Effect.repeatN(20))
  return { source, messages, settle }
})

describe("gather: a watch's events as the socket sends them", () => {
  it.scoped("interactive output (small messages) is sent at once, one message per moment", () =>
    Effect.gen(function*() {
      const { messages, settle, source } = yield* harness
      for (const text of ["$ ", "l", "s", "\r\n"]) {
        yield* source.offer(output(text))
        yield* settle
      }
      expect(messages).toEqual([["$ "], ["l"], ["s"], ["\r\n"]])
    }))

  it.scoped("after a message of streaming output, the next waits for more: what came meanwhile goes as one", () =>
    Effect.gen(function*() {
      const { messages, settle, source } = yield* harness
      const big = "x".repeat(150)
      yield* source.offer(output(big))
      yield* settle
      // the first message of a flood is not held
      expect(messages).toEqual([[big]])
      for (const text of ["a", "b", "c"]) {
        yield* source.offer(output(text))
        yield* settle
      }
      // taken ("a") but held 5 ms: b and c wait in the source meanwhile
      expect(messages.length).toBe(1)
      yield* TestClock.adjust(5)
      yield* settle
      expect(messages).toEqual([[big], ["a"], ["bc"]])
      // "a" was small: the stream is interactive again, nothing waits
      yield* source.offer(output("d"))
      yield* settle
      expect(messages).toEqual([[big], ["a"], ["bc"], ["d"]])
    }))

  it.scoped("nothing is lost or reordered: other events keep their place between outputs", () =>
    Effect.gen(function*() {
      const { messages, settle, source } = yield* harness
      yield* source.offerAll([
        output("y".repeat(120)),
        { _tag: "Resized", cols: 100, rows: 30 },
        output("z")
      ])
      yield* settle
      yield* source.offerAll([output("1"), output("2"), { _tag: "Exited", exitCode: 0, signal: null }])
      yield* source.end
      yield* settle
      yield* TestClock.adjust(5)
      yield* settle
      expect(messages.flat()).toEqual(["y".repeat(120), "Resized", "z", "12", "Exited"])
    }))
})
