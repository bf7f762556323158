import { Ids, Validation } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import { Handlers, TerminalTools, ToolCall } from "../src/index.js"
import { fakeTerminal } from "./support/fakeTerminal.js"

const local = Ids.OwnerId.make("local")
const options = { maxResultBytes: 4096 }

describe("terminal_send's plain call (a text, a sessionId) skips its Schema decode", () => {
  it("the full decode takes every such call as it is (what makes the skip sound)", () => {
    // The skip holds only while `text` is a plain optional string and no rule ties it to `sessionId`: a change
    // to the parameters that breaks this must fail here.
    const decode = Validation.decoder(
      TerminalTools.TerminalSend.parametersSchema as unknown as Schema.Schema<unknown, unknown>
    )
    const ids = ["", "s-0123456789ab", "x".repeat(64), "é🙂"]
    const texts = ["", "true", "\u0000\u001b[31m\r\n", "é🙂\ud800", "x".repeat(70_000)]
    for (const text of texts) {
      expect(decode({ text })).toEqual(Either.right({ text }))
      for (const sessionId of ids) expect(decode({ sessionId, text })).toEqual(Either.right({ sessionId, text }))
    }
  })

  it.effect("a plain call reaches the session; any other shape is still decoded, and refused by field", () =>
    Effect.gen(function*() {
      const caller = yield* ToolCall.make(options)
      const opened = yield* caller.call(local, "terminal_open", {})
      const sessionId = (opened.structured as { readonly sessionId: string }).sessionId
      const sent = yield* caller.call(local, "terminal_send", { sessionId, text: "echo hi" })
      expect(sent).toMatchObject({ isError: false, structured: { waitReason: "prompt", exitCode: 0 } })
      expect(sent.text).toContain("echo hi")
      const field = (payload: unknown) =>
        Effect.map(caller.call(local, "terminal_send", payload), (outcome) => {
          expect(outcome.isError).toBe(true)
          return (outcome.structured as { readonly field?: string }).field
        })
      expect(yield* field({ sessionId: "x".repeat(65), text: "true" })).toBe("sessionId")
      expect(yield* field({ sessionId: 5, text: "true" })).toBe("sessionId")
      expect(yield* field({ sessionId, text: 5 })).toBe("text")
      expect(yield* field({ sessionId, text: "true", bogus: 1 })).toBe("bogus")
      expect(yield* field({ text: "true", bogus: 1 })).toBe("bogus")
      // a second field of its own still goes through the decode, and is taken
      const submitted = yield* caller.call(local, "terminal_send", { sessionId, text: "ls", submit: true })
      expect(submitted.isError).toBe(false)
    }).pipe(Effect.provide(Handlers.layer), Effect.provide(fakeTerminal().layer)))
})
