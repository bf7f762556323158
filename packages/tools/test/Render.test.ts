import { Errors, Ids, type Session } from "@agent-terminal/core"
import { Utf8 } from "@agent-terminal/terminal"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Handlers, Render, ToolCall } from "../src/index.js"
import { fakeTerminal } from "./support/fakeTerminal.js"

// SCENARIO 26: metadata and ids survive the smallest result cap (64 bytes) — for every result and error.
const min = 64
const sessionId = "s-0123456789ab"
const taskId = "t-0123456789abcdef"
const long = `${"a long line of output that goes on and on ".repeat(40)}\n`.repeat(20)
const cjk = "一二三四五六七八九十".repeat(50)

const fits = (text: string) => {
  expect(Utf8.byteLength(text)).toBeLessThanOrEqual(min)
  expect(text.startsWith("[")).toBe(true)
  expect(text).not.toContain("\uFFFD")
  return text
}

const send = (overrides: Partial<Session.SendResult>): Session.SendResult => ({
  output: long,
  waitReason: "prompt",
  exitCode: 0,
  sessionStatus: { _tag: "running" },
  truncated: true,
  elapsedMs: 12,
  ...overrides
})

describe("rendered results within 64 bytes (26)", () => {
  it("send results keep the wait reason, the exit code and the other facts first", () => {
    const cases: ReadonlyArray<[Partial<Session.SendResult>, ReadonlyArray<string>]> = [
      [{ exitCode: 127 }, ["[wait: prompt]", "[exit: 127]"]],
      [{ output: cjk, exitCode: 1 }, ["[wait: prompt]", "[exit: 1]"]],
      [{ waitReason: "stdin_read", exitCode: undefined }, ["[wait: stdin_read]"]],
      [{ waitReason: "inferred_idle", exitCode: undefined }, ["[wait: inferred_idle]", "may still"]],
      [{ waitReason: "timeout", exitCode: undefined }, ["[wait: timeout]", "may still", "[truncated]"]],
      [
        {
          waitReason: "session_exit",
          exitCode: 9,
          sessionStatus: { _tag: "exited", exitCode: null, signal: "SIGKILL" }
        },
        ["[wait: session_exit]", "[exit: 9]", "[exited]"]
      ],
      [{ continuation: true, exitCode: undefined }, ["[wait: prompt]", "[continuation]"]],
      [{ screen: { rows: Array(40).fill("~".padEnd(160)), cursor: { row: 0, col: 0 } } }, ["[wait: prompt]"]],
      [{ waitReason: "timeout", exitCode: undefined, taskId } as Partial<Session.SendResult>, [taskId]],
      [{ truncated: false }, ["[wait: prompt]", "[exit: 0]", "[truncated]"]]
    ]
    for (const [overrides, facts] of cases) {
      const text = fits(Render.sendResult(send(overrides), min))
      for (const fact of facts) expect(text).toContain(fact)
    }
  })

  it("an open keeps the session id and pid even with a long name", () => {
    const text = fits(Render.openResult({
      sessionId,
      name: "n".repeat(128),
      type: "shell",
      pid: 4194304,
      status: { _tag: "running" },
      cwd: "/",
      containment: "cgroup",
      busy: false,
      motd: long,
      limits: {}
    }, min))
    expect(text).toContain(sessionId)
    expect(text).toContain("4194304")
  })

  it("a read, a signal and a close keep their facts and ids", () => {
    expect(
      fits(
        Render.readResult({ text: cjk, totalLines: 123456, lineBegin: 123400, lineEnd: 123456, truncated: true }, min)
      )
    )
      .toContain("[lines 123401-123456 of 123456]")
    expect(fits(Render.signalResult({ delivered: false, targetPgid: 4194304 }, "SIGQUIT", min))).toContain("4194304")
    const closed = fits(Render.closeResult({
      sessionId,
      outcome: "already-closing",
      survivors: Array.from({ length: 50 }, (_, i) => 100000 + i)
    }, min))
    expect(closed).toContain(sessionId)
  })

  it("a list keeps the count and the ids when the details do not fit", () => {
    const info = (i: number): Session.SessionInfo => ({
      sessionId: `s-00000000000${i}`,
      name: `a-rather-long-session-name-${i}`,
      type: "shell",
      pid: 100 + i,
      status: { _tag: "running" },
      cwd: "/a/very/long/working/directory/path",
      containment: "sweep",
      busy: i === 1
    })
    expect(fits(Render.listResult([], min))).toBe("[sessions: 0]")
    const one = fits(Render.listResult([info(1)], min))
    expect(one).toContain("s-000000000001")
    const two = fits(Render.listResult([info(1), info(2)], min))
    expect(two).toContain("[sessions: 2]")
    expect(two).toContain("s-000000000001")
    expect(two).toContain("s-000000000002")
  })

  it("task views keep the task id and status", () => {
    for (const status of ["running", "waiting_input", "completed", "failed", "killed"]) {
      const text = fits(Render.taskView({
        taskId,
        status,
        output: long,
        ...(status === "completed" ? { result: send({ exitCode: 2 }) } : {}),
        ...(status === "failed" ? { error: { _tag: "SessionExited", message: "session exited" } } : {}),
        elapsedMs: 5
      }, min))
      expect(text).toContain(taskId)
      expect(text).toContain(`[status: ${status}]`)
    }
  })
})

const errors: ReadonlyArray<[Errors.TerminalError, ReadonlyArray<string>]> = [
  [new Errors.SessionNotFound({ sessionId }), [sessionId]],
  [new Errors.ForeignSession({ sessionId }), [sessionId]],
  [new Errors.SendActive({ sessionId, taskId }), [sessionId, taskId]],
  [new Errors.SessionExited({ sessionId, exitCode: null, signal: "SIGKILL" }), [sessionId]],
  [new Errors.DuplicateName({ name: "build", sessionId }), [sessionId]],
  [new Errors.InvalidInput({ field: "sessionId", reason: "is required" }), ["sessionId"]],
  [new Errors.InvalidConfig({ field: "maxResultBytes", reason: "must be at least 64" }), ["maxResultBytes"]],
  [new Errors.SignalRefused({ sessionId, signal: "SIGKILL", reason: "the shell itself is in the foreground" }), [
    sessionId
  ]],
  [new Errors.SpawnFailed({ command: "/no/such/program", reason: "ENOENT" }), []],
  [new Errors.SandboxUnavailable({ mode: "workspace-write", reason: "bwrap not found" }), []],
  [new Errors.CleanupFailed({ sessionId, survivors: Array.from({ length: 40 }, (_, i) => 200000 + i) }), [
    sessionId
  ]],
  [new Errors.TaskNotFound({ taskId }), [taskId]]
]

/** A failure's whole result — its text and its structured content together — within the bound. */
const wholeFits = (outcome: ToolCall.ToolOutcome, bound = min) => {
  expect(Utf8.byteLength(outcome.text) + Utf8.byteLength(JSON.stringify(outcome.structured))).toBeLessThanOrEqual(bound)
  return outcome.text
}

const local = Ids.OwnerId.make("local")

describe("errors within 64 bytes over the one call path (26)", () => {
  for (const [error, ids] of errors) {
    it.effect(`${error._tag}: the tag and its ids first, isError, text and structured content within the bound`, () =>
      Effect.gen(function*() {
        const roomy = yield* ToolCall.call(local, "terminal_send", { sessionId, text: "echo hi" }, {
          maxResultBytes: 4096
        })
        // core's message first; the tool layer may add the tool that helps next (internal/hints.ts)
        expect(roomy.structured).toMatchObject({ _tag: error._tag, message: expect.stringMatching(/./) })
        expect((roomy.structured as { readonly message: string }).message.startsWith(error.message)).toBe(true)
        wholeFits(roomy, 4096)
        const outcome = yield* ToolCall.call(local, "terminal_send", { sessionId, text: "echo hi" }, {
          maxResultBytes: min
        })
        expect(outcome.isError).toBe(true)
        const text = fits(wholeFits(outcome))
        expect(text).toContain(`[error: ${error._tag}]`)
        for (const id of ids) expect(text).toContain(id)
        const shown = text.split("\n").slice(1).join("\n").replace(/…$/, "")
        expect(error.message.startsWith(shown)).toBe(true)
      }).pipe(
        Effect.provide(Handlers.layer),
        Effect.provide(fakeTerminal({ failWith: error }).layer)
      ))
  }

  it.effect("an invalid parameter, an unknown tool and an unknown task are bounded too", () =>
    Effect.gen(function*() {
      const missing = yield* ToolCall.call(local, "terminal_read", { count: 1 }, { maxResultBytes: min })
      expect(fits(missing.text)).toContain("[field: sessionId]")
      const unknown = yield* ToolCall.call(local, "no_such_tool_with_a_long_name", {}, { maxResultBytes: min })
      expect(fits(unknown.text)).toContain("[error: InvalidInput]")
      const task = yield* ToolCall.call(local, "task_output", { taskId }, { maxResultBytes: min })
      expect(fits(wholeFits(task))).toContain(taskId)
      const roomy = yield* ToolCall.call(local, "task_output", { taskId }, { maxResultBytes: 1024 })
      expect(roomy.structured).toMatchObject({ _tag: "TaskNotFound", taskId })
    }).pipe(Effect.provide(Handlers.layer), Effect.provide(fakeTerminal().layer)))
})

describe("a snapshot's text", () => {
  const snapshot = {
    screen: { rows: ["hello", ...Array.from({ length: 20 }, () => "~"), "\"f.txt\" 1L"], cursor: { row: 0, col: 4 } },
    cols: 80,
    rows: 22,
    alternate: true,
    busy: true,
    sessionStatus: { _tag: "exited" as const, exitCode: 3, signal: null }
  }

  it("the facts (the cursor from 1), then the rows folded as a send's screen is", () => {
    expect(Render.snapshotResult(snapshot, 4096)).toBe(
      "[size: 80x22] [cursor: 1:5] [full-screen program] [busy] [session: exited with 3]\nhello\n~  [×20]\n\"f.txt\" 1L"
    )
    const quiet = { ...snapshot, alternate: false, busy: false, sessionStatus: { _tag: "running" as const } }
    expect(Render.snapshotResult(quiet, 4096).split("\n")[0]).toBe("[size: 80x22] [cursor: 1:5]")
  })

  it("within the smallest cap, the size first", () => {
    expect(fits(Render.snapshotResult(snapshot, min))).toContain("[size: 80x22]")
  })
})
