import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Instructions, Portable, TerminalTools, ToolClient } from "../src/index.js"
import { fakeTerminal } from "./support/fakeTerminal.js"

describe("Portable: the tools for any agent SDK, no Effect at the call site", () => {
  it("gives plain JSON definitions of every tool of the toolkit", () => {
    const definitions = Portable.toolDefinitions()
    expect(definitions.map((tool) => tool.name)).toEqual(Object.keys(TerminalTools.TerminalToolkit.tools))
    expect(JSON.parse(JSON.stringify(definitions))).toEqual(definitions)
    const send = definitions.find((tool) => tool.name === "terminal_send")!
    // no parameter is required: without a sessionId, a send goes to the caller's default terminal
    expect(send.inputSchema).toMatchObject({ type: "object" })
    expect(send.inputSchema.required).toBeUndefined()
    expect(Object.keys(send.inputSchema.properties as object)).toEqual(
      expect.arrayContaining(["sessionId", "text", "keys", "paste", "submit", "timeoutMs"])
    )
    expect(send.description).toContain("inferred_idle")
    const read = definitions.find((tool) => tool.name === "terminal_read")!
    expect(read.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
    const list = definitions.find((tool) => tool.name === "terminal_list")!
    expect(list.inputSchema).toMatchObject({ type: "object", properties: {} })
  })

  it("calls tools with Promises: results, failures as isError, owners kept apart", async () => {
    const terminal = Portable.make({ layer: fakeTerminal().layer, owner: "local", maxResultBytes: 4096 })
    try {
      const opened = await terminal.callTool("terminal_open", { name: "work" })
      expect(opened.isError).toBe(false)
      const sessionId = opened.structured.sessionId as string
      expect(opened.text).toContain(`[session: ${sessionId}] [name: work]`)

      const sent = await terminal.handlers.terminal_send!({ sessionId, text: "echo hi" })
      expect(sent).toMatchObject({ isError: false, structured: { waitReason: "prompt", exitCode: 0 } })
      expect(sent.text).toBe("[wait: prompt] [exit: 0]\necho hi")

      const foreign = await terminal.callTool("terminal_read", { sessionId }, { owner: "someone-else" })
      expect(foreign).toMatchObject({ isError: true, structured: { _tag: "ForeignSession", sessionId } })
      const theirs = await terminal.callTool("terminal_list", {}, { owner: "someone-else" })
      expect(theirs.structured.sessions).toEqual([])

      const invalid = await terminal.callTool("terminal_signal", { sessionId, signal: "SIGBOGUS" })
      expect(invalid).toMatchObject({ isError: true, structured: { _tag: "InvalidInput", field: "signal" } })
      expect(invalid.text).toMatch(/^\[error: InvalidInput\] \[field: signal\]/)

      const closed = await terminal.callTool("terminal_close", { sessionId })
      expect(closed.structured).toMatchObject({ sessionId, outcome: "closed" })
    } finally {
      await terminal.dispose()
    }
  })

  it("rejects calls when the settings are invalid, naming the field", async () => {
    const terminal = Portable.make({ layer: fakeTerminal().layer, owner: "local", maxResultBytes: 10 })
    try {
      await expect(terminal.callTool("terminal_list", {})).rejects.toMatchObject({
        _tag: "InvalidConfig",
        field: "maxResultBytes"
      })
    } finally {
      await terminal.dispose()
    }
  })
})

describe("ToolClient: the tools from an Effect program", () => {
  it.effect("calls through the same path as MCP, as the client's owner", () =>
    Effect.gen(function*() {
      const tools = yield* ToolClient.ToolClient
      expect(tools.maxResultBytes).toBe(32768)
      const opened = yield* tools.call("terminal_open", {})
      const sessionId = opened.structured.sessionId as string
      const listed = yield* tools.call("terminal_list")
      expect(listed.structured.sessions).toMatchObject([{ sessionId }])
      const other = yield* tools.call("terminal_send", { sessionId, text: "x" }, { owner: "intruder" })
      expect(other.structured).toMatchObject({ _tag: "ForeignSession" })
    }).pipe(Effect.provide(ToolClient.layer({ owner: "agent-1" }).pipe(Layer.provide(fakeTerminal().layer)))))

  it("a deployment hides tools and parameters the same way in definitions and calls; instructions follow it", async () => {
    const deployment = { tools: ["terminal"] as const, background: false }
    const terminal = Portable.make({ layer: fakeTerminal().layer, owner: "local", deployment })
    try {
      expect(terminal.definitions.map((tool) => tool.name)).toEqual(
        Object.keys(TerminalTools.TerminalToolkit.tools).filter((name) => name.startsWith("terminal_"))
      )
      const send = terminal.definitions.find((tool) => tool.name === "terminal_send")!
      expect(Object.keys(send.inputSchema.properties as object)).not.toContain("run_in_background")
      expect(terminal.instructions).toBe(Instructions.text(deployment))
      expect(terminal.instructions).not.toContain("task_output")
      const hidden = await terminal.callTool("task_output", { taskId: "t-1" })
      expect(hidden).toMatchObject({ isError: true, structured: { _tag: "InvalidInput", field: "name" } })
      const opened = await terminal.callTool("terminal_open", {})
      const background = await terminal.callTool("terminal_send", {
        sessionId: opened.structured.sessionId,
        text: "true",
        run_in_background: true
      })
      expect(background).toMatchObject({
        isError: true,
        structured: { _tag: "InvalidInput", field: "run_in_background" }
      })
    } finally {
      await terminal.dispose()
    }
  })
})
