import { describe, expect, it } from "@effect/vitest"
import { bodyOf, connectStdio, expectToolContract, structured, textOf } from "../support/mcp.js"
import { alive } from "../support/terminal.js"

const waitUntil = async (condition: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

describe("MCP over stdio with a real client", () => {
  it("lists the tools of the contract with their schemas and annotations", async () => {
    const { client } = await connectStdio()
    try {
      const { tools } = await client.listTools()
      const names = tools.map((tool) => tool.name).sort()
      expect(names).toEqual([
        "exec",
        "process",
        "task_kill",
        "task_output",
        "terminal_close",
        "terminal_list",
        "terminal_open",
        "terminal_read",
        "terminal_request_human",
        "terminal_resize",
        "terminal_send",
        "terminal_signal",
        "terminal_snapshot"
      ])
      expectToolContract(tools)
    } finally {
      await client.close()
    }
  })

  it("runs the whole lifecycle: open → send → read → signal → close → list (37)", async () => {
    const { client } = await connectStdio()
    try {
      const opened = await client.callTool({ name: "terminal_open", arguments: { name: "lifecycle" } })
      expect(opened.isError).toBeFalsy()
      const { pid, sessionId } = structured(opened)
      expect(typeof sessionId).toBe("string")
      expect(textOf(opened)).toContain(sessionId)

      const sent = await client.callTool({
        name: "terminal_send",
        arguments: { sessionId, text: "cd / && echo \"hello from $PWD\"; (exit 3)" }
      })
      expect(structured(sent)).toMatchObject({ waitReason: "prompt", exitCode: 3 })
      expect(bodyOf(sent)).toBe("hello from /")
      expect(textOf(sent)).toMatch(/^\[wait: prompt\] \[exit: 3\]\nhello from \/$/)

      const read = await client.callTool({ name: "terminal_read", arguments: { sessionId } })
      expect(bodyOf(read)).toContain("hello from /")

      const slow = await client.callTool({
        name: "terminal_send",
        arguments: { sessionId, text: "sleep 60", timeoutMs: 300 }
      })
      expect(structured(slow).waitReason).toBe("timeout")
      expect(textOf(slow)).toContain("may still be running")
      const signalled = await client.callTool({ name: "terminal_signal", arguments: { sessionId, signal: "SIGINT" } })
      expect(structured(signalled).delivered).toBe(true)
      const back = await client.callTool({ name: "terminal_send", arguments: { sessionId, text: "echo back" } })
      expect(structured(back)).toMatchObject({ waitReason: "prompt", exitCode: 0 })

      const listed = await client.callTool({ name: "terminal_list", arguments: {} })
      expect(structured(listed).sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([sessionId])

      const closed = await client.callTool({ name: "terminal_close", arguments: { sessionId } })
      expect(structured(closed)).toMatchObject({ sessionId, outcome: "closed", survivors: [] })
      expect(alive(pid)).toBe(false)

      const empty = await client.callTool({ name: "terminal_list", arguments: {} })
      expect(structured(empty).sessions).toEqual([])
    } finally {
      await client.close()
    }
  })

  it("answers failures with isError, the error's _tag and a message", async () => {
    const { client } = await connectStdio()
    try {
      const missing = await client.callTool({ name: "terminal_read", arguments: { count: 1 } })
      expect(missing.isError).toBe(true)
      expect(structured(missing)).toMatchObject({ _tag: "InvalidInput", field: "sessionId" })
      expect(textOf(missing)).toMatch(/^\[error: InvalidInput\]/)

      const unknown = await client.callTool({
        name: "terminal_send",
        arguments: { sessionId: "s-nosuchsession", text: "echo hi" }
      })
      expect(unknown.isError).toBe(true)
      expect(structured(unknown)).toMatchObject({ _tag: "SessionNotFound", sessionId: "s-nosuchsession" })
      expect(structured(unknown).message).toContain("s-nosuchsession")

      const badSignal = await client.callTool({
        name: "terminal_signal",
        arguments: { sessionId: "s-nosuchsession", signal: "SIGBOGUS" }
      })
      expect(structured(badSignal)).toMatchObject({ _tag: "InvalidInput", field: "signal" })

      const badCwd = await client.callTool({ name: "terminal_open", arguments: { cwd: "/no/such/dir" } })
      expect(structured(badCwd)).toMatchObject({ _tag: "InvalidInput", field: "cwd" })
    } finally {
      await client.close()
    }
  })

  it("closes the connection's sessions when the client disconnects, and writes only protocol to stdout", async () => {
    const { client, serverPid, stderr } = await connectStdio()
    const opened = await client.callTool({ name: "terminal_open", arguments: {} })
    const { pid, sessionId } = structured(opened)
    await client.callTool({ name: "terminal_send", arguments: { sessionId, text: "sleep 300 &" } })
    expect(alive(pid)).toBe(true)
    await client.close()
    expect(await waitUntil(() => !alive(pid))).toBe(true)
    expect(await waitUntil(() => serverPid === null || !alive(serverPid))).toBe(true)
    expect(stderr.join("")).not.toContain("Unhandled")
  })
})
