import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Exec from "../src/Exec.js"
import * as TerminalConfig from "../src/TerminalConfig.js"

const decode = Schema.decodeUnknownEither(Exec.ExecRequest)

describe("Exec contract", () => {
  it("the spawn input is a discriminated union: argv on pipes, or a command line on a terminal", () => {
    expect(decode({ spawn: { _tag: "child", argv: ["ls", "-l", "a b"] } })).toEqual(
      Either.right({ spawn: { _tag: "child", argv: ["ls", "-l", "a b"] } })
    )
    expect(decode({ spawn: { _tag: "pty", command: "ls | wc -l" }, background: true })).toEqual(
      Either.right({ spawn: { _tag: "pty", command: "ls | wc -l" }, background: true })
    )
    expect(Either.isLeft(decode({ spawn: { _tag: "child", argv: [] } }))).toBe(true)
    expect(Either.isLeft(decode({ spawn: { _tag: "child", command: "ls" } }))).toBe(true)
    expect(Either.isLeft(decode({ spawn: { _tag: "pty", argv: ["ls"] } }))).toBe(true)
    expect(Either.isLeft(decode({ spawn: { _tag: "pty", command: "" } }))).toBe(true)
  })

  it("times are non-negative integers (0 turns a limit off)", () => {
    const spawn = { _tag: "child", argv: ["true"] }
    expect(Either.isRight(decode({ spawn, timeoutMs: 0, noOutputTimeoutMs: 0, yieldMs: 0 }))).toBe(true)
    expect(Either.isLeft(decode({ spawn, timeoutMs: -1 }))).toBe(true)
    expect(Either.isLeft(decode({ spawn, yieldMs: 1.5 }))).toBe(true)
  })

  it("a command string runs with the shell as one argument, never split", () => {
    expect(Exec.shellArgv("bash", "echo 'a b' && ls")).toEqual(["bash", "-c", "echo 'a b' && ls"])
  })

  it.effect("the shared defaults: 30 min overall, 10 min without output, a 30 s yield window", () =>
    Effect.gen(function*() {
      const config = yield* TerminalConfig.make({})
      expect(config).toMatchObject({ execTimeoutMs: 1_800_000, execNoOutputTimeoutMs: 600_000, execYieldMs: 30_000 })
      expect(yield* TerminalConfig.make({ execTimeoutMs: 0, execNoOutputTimeoutMs: 0 })).toMatchObject({
        execTimeoutMs: 0,
        execNoOutputTimeoutMs: 0
      })
      const negative = yield* Effect.flip(TerminalConfig.make({ execNoOutputTimeoutMs: -5 }))
      expect(negative).toMatchObject({ _tag: "InvalidConfig", field: "execNoOutputTimeoutMs" })
    }))
})
