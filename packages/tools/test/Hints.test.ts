import { Errors } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as ToolCall from "../src/ToolCall.js"

const sessionId = "s-0123456789abcdef01234567"

/** Core's errors that have a tool to suggest, and the tool the model reads after them. */
const hinted: ReadonlyArray<[Errors.TerminalError, string]> = [
  [new Errors.SessionNotFound({ sessionId }), "(terminal_list shows your sessions)"],
  [new Errors.SendActive({ sessionId }), "(terminal_signal SIGINT interrupts it)"],
  [new Errors.CleanupFailed({ sessionId, survivors: [4242] }), "(retry terminal_close)"],
  [new Errors.LimitReached({ limit: "terminals", max: 32 }), "(terminal_close closes one)"],
  [new Errors.LimitReached({ limit: "tasks", max: 64, scope: "server" }), "(task_kill ends one)"],
  [
    new Errors.SignalRefused({ sessionId, signal: "SIGKILL", reason: "SIGKILL would kill the session's shell itself" }),
    "(terminal_close closes the session)"
  ],
  [
    new Errors.HumanInControl({ sessionId, holder: "person:ana", since: "2026-01-01T00:00:00.000Z" }),
    "(terminal_read shows what happens meanwhile; terminal_request_human waits for the hand-back)"
  ]
]

const toolName = /\b(terminal|task)_[a-z_]+|\bexec\b|\bprocess (poll|kill|list)/

describe("error hints", () => {
  it("core's messages name no tool; the rendered failure adds the one that helps", () => {
    for (const [error, hint] of hinted) {
      expect(error.message).not.toMatch(toolName)
      const outcome = ToolCall.failureOutcome(error, 32 * 1024)
      expect(outcome.text).toContain(`${error.message} ${hint}`)
      expect(outcome.structured).toMatchObject({ _tag: error._tag, message: `${error.message} ${hint}` })
    }
  })

  it("an error with no tool to suggest is rendered with core's message as it is", () => {
    const error = new Errors.SignalRefused({ sessionId, signal: "SIGINT", reason: "no foreground group" })
    expect(ToolCall.failureOutcome(error, 32 * 1024).structured).toMatchObject({ message: error.message })
  })
})
