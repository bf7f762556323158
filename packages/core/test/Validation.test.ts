import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { InvalidInput } from "../src/Errors.js"
import { OwnerId, SessionId } from "../src/Ids.js"
import * as PtyService from "../src/PtyService.js"
import * as ScriptedShell from "../src/ScriptedShell.js"
import * as Session from "../src/Session.js"
import * as Validation from "../src/Validation.js"

const refusal = <A>(result: Either.Either<A, InvalidInput>) => {
  expect(Either.isLeft(result)).toBe(true)
  const error = (result as Either.Left<InvalidInput, A>).left
  return { field: error.field, reason: error.reason, message: error.message }
}

const huge = "A".repeat(1024 * 1024)

describe("Validation: a refused field is named, its value never repeated", () => {
  const decode = Validation.decoder(Session.OpenRequest)

  it("names the field and states the range for a fraction, a negative, an out-of-range number", () => {
    for (const cols of [1.5, -1, 0, 100000, Number.NaN, Infinity]) {
      expect(refusal(decode({ cols }))).toMatchObject({ field: "cols", reason: "must be an integer from 20 to 1000" })
    }
    expect(refusal(decode({ rows: 501 }))).toMatchObject({ field: "rows", reason: "must be an integer from 5 to 500" })
    expect(Either.isRight(decode({ cols: 1000, rows: 500, name: "ok" }))).toBe(true)
  })

  it("refuses an unknown field, and cuts a long field name to a short prefix", () => {
    expect(refusal(decode({ bogus: 1 }))).toMatchObject({ field: "bogus", reason: "is not a known field" })
    const long = refusal(decode({ [huge]: 1 }))
    expect(long.field.length).toBeLessThanOrEqual(Validation.maxFieldLength)
    expect(long.field.endsWith("…")).toBe(true)
  })

  it("never echoes a value: a megabyte in the wrong place gives a short reason", () => {
    for (const request of [{ cols: huge }, { name: huge }, { cwd: `${huge}\u0000` }, { argv: [huge, huge] }]) {
      const refused = refusal(decode(request))
      expect(refused.message.length).toBeLessThan(200)
      expect(refused.message).not.toContain("AAAA")
    }
  })

  it("says what a union or an optional field takes", () => {
    expect(refusal(decode({ type: "vm" }))).toMatchObject({
      field: "type",
      reason: "must be one of \"shell\", \"command\""
    })
    expect(refusal(decode({ name: 5 })).field).toBe("name")
    const send = Validation.decoder(Session.SendRequest)
    expect(refusal(send({ text: 5 }))).toMatchObject({ field: "text", reason: "must be a string" })
    expect(refusal(send({ keys: ["a".repeat(33)] }))).toMatchObject({ field: "keys.0" })
    const required = Validation.decoder(Schema.Struct({ sessionId: Schema.String }))
    expect(refusal(required({}))).toMatchObject({ field: "sessionId", reason: "is required" })
    expect(refusal(required("nope"))).toMatchObject({ field: "arguments", reason: "must be an object" })
  })

  it("a name: 1-128 characters, no control character", () => {
    for (const name of ["", "a\u0000b", "tab\there", "\u001b[31m", "x".repeat(129), "del\u007f"]) {
      expect(refusal(decode({ name })).field).toBe("name")
    }
    expect(Either.isRight(decode({ name: "build · 日本語 🚀" }))).toBe(true)
  })
})

const owner = OwnerId.make("owner")

describe("the service checks its requests at its entry (Effect callers get InvalidInput too)", () => {
  it.scopedLive("open, send, read and signal refuse bad fields; the session survives and goes on", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const field = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.flip(effect), (error) => (error as unknown as InvalidInput).field ?? error._tag)
      expect(yield* field(service.open(owner, { cols: 1.5 }))).toBe("cols")
      expect(yield* field(service.open(owner, { cols: -1, rows: 0 }))).toBe("cols")
      expect(yield* field(service.open(owner, { name: "a\u0000b" }))).toBe("name")
      expect(yield* field(service.open(owner, { bogus: true } as any))).toBe("bogus")
      expect(yield* service.list(owner)).toEqual([])

      const opened = yield* service.open(owner, { name: "kept" })
      const id = SessionId.make(opened.sessionId)
      expect(yield* field(service.send(owner, id, { text: "true", timeoutMs: -5 }))).toBe("timeoutMs")
      expect(yield* field(service.send(owner, id, { text: "true", timeoutMs: 1e308 }))).toBe("timeoutMs")
      expect(yield* field(service.send(owner, id, { text: "true", idleMs: 0.5 }))).toBe("idleMs")
      expect(yield* field(service.send(owner, id, { text: "x".repeat(2048) }))).toBe("text")
      expect(yield* field(service.send(owner, id, { paste: "é".repeat(600) }))).toBe("paste")
      expect(yield* field(service.send(owner, SessionId.make("s".repeat(65)), { text: "true" }))).toBe("sessionId")
      expect(yield* field(service.read(owner, id, { offset: -1 }))).toBe("offset")
      expect(yield* field(service.signal(owner, id, "SIGBOGUS" as any))).toBe("signal")

      expect(yield* service.send(owner, id, { text: "true" })).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect((yield* service.list(owner)).map((session) => session.name)).toEqual(["kept"])
    }).pipe(Effect.provide(ScriptedShell.layerService({ config: { maxInputBytes: 1024 } }))))

  it("a send of one text skips its decode (PtyService.checked): the schema takes every such request as it is", () => {
    // The fast path is sound only while SendRequest's text is a plain optional string with no rule across
    // fields: a filter added there must fail here.
    const decode = Schema.decodeUnknownEither(Session.SendRequest, { onExcessProperty: "error" })
    for (const text of ["", "true", huge, "\u0000\u001b[31m\r\n", "é🙂\ud800", "x".repeat(70_000)]) {
      expect(decode({ text })).toEqual(Either.right({ text }))
    }
  })

  it.scopedLive("a text-only send is still refused when it is not one: a non-string, a second field, a class", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const opened = yield* service.open(owner, { name: "fast" })
      const id = SessionId.make(opened.sessionId)
      const field = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.flip(effect), (error) => (error as unknown as InvalidInput).field ?? error._tag)
      expect(yield* field(service.send(owner, id, { text: 5 } as any))).toBe("text")
      expect(yield* field(service.send(owner, id, { text: "true", bogus: 1 } as any))).toBe("bogus")
      expect(yield* field(service.send(owner, id, { text: "x".repeat(2048) }))).toBe("text")
      class Odd {
        text = "true"
      }
      expect(yield* service.send(owner, id, new Odd() as any)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect(yield* service.send(owner, id, { text: "true" })).toMatchObject({ waitReason: "prompt", exitCode: 0 })
    }).pipe(Effect.provide(ScriptedShell.layerService({ config: { maxInputBytes: 1024 } }))))
})
