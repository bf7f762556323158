/**
 * What the contract costs a model (issue 30), over a real MCP client: the tool list within 10 KB as a model
 * sees it (less with --tools terminal), with no title or description that Schema generated; every tool's
 * `structuredContent` valid against the `outputSchema` it declares (checked with the SDK's own validator, on
 * results and on failures), the output sent once; a one-terminal task with no `terminal_open`; a signal that
 * waits; a full-screen program's screen with its padding folded.
 */
import { describe, expect, it } from "@effect/vitest"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { bodyOf, connectStdio, structured, textOf } from "../support/mcp.js"
import { alive } from "../support/terminal.js"

type Connected = Awaited<ReturnType<typeof connectStdio>>
type Tools = Awaited<ReturnType<Connected["client"]["listTools"]>>["tools"]

/** The tool list as a model sees it: each tool's name, description and input schema. */
const seenBytes = (tools: Tools) =>
  tools.reduce(
    (sum, tool) =>
      sum +
      Buffer.byteLength(
        JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })
      ),
    0
  )

/** Every `title` and `description` anywhere in a schema. */
const annotationsOf = (schema: unknown, out: Array<[string, unknown]> = []): Array<[string, unknown]> => {
  if (Array.isArray(schema)) schema.forEach((item) => annotationsOf(item, out))
  else if (typeof schema === "object" && schema !== null) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === "title" || key === "description") out.push([key, value])
      annotationsOf(value, out)
    }
  }
  return out
}

describe("the contract over a real MCP client", () => {
  it("the tool list stays within 10 KB as a model sees it, less with --tools terminal, with no generated noise", async () => {
    const all = await connectStdio([])
    const terminal = await connectStdio(["--tools", "terminal"])
    try {
      const tools = (await all.client.listTools()).tools
      const terminalTools = (await terminal.client.listTools()).tools
      expect(tools.length).toBe(13)
      expect(seenBytes(tools)).toBeLessThanOrEqual(10 * 1024)
      expect(seenBytes(terminalTools)).toBeLessThan(seenBytes(tools))
      for (const tool of tools) {
        // the descriptions are ours: none of Schema's ("a string at most 32 character(s) long"), no title
        for (const [key, value] of annotationsOf(tool.inputSchema)) {
          expect(key).toBe("description")
          expect(value).not.toMatch(/^an? [a-z0-9]/)
        }
        expect(JSON.stringify(tool.inputSchema)).not.toContain("\"required\":[]")
        expect(tool.outputSchema?.type).toBe("object")
      }
      // waitFor is written once in terminal_send, shared by the send and its steps
      const send = tools.find((tool) => tool.name === "terminal_send")!
      expect(JSON.stringify(send.inputSchema).split("\"screenStableMs\"").length - 1).toBe(1)
    } finally {
      await all.client.close()
      await terminal.client.close()
    }
  })

  it(
    "every tool's structuredContent validates against its outputSchema, results and failures; the output comes once",
    async () => {
      const { client } = await connectStdio(["--idle-silence-ms", "1500"])
      try {
        const tools = (await client.listTools()).tools
        const validator = new AjvJsonSchemaValidator()
        const checked = new Set<string>()
        const call = async (name: string, args: Record<string, unknown>) => {
          const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })
          const schema = tools.find((tool) => tool.name === name)!.outputSchema!
          const verdict = validator.getValidator(schema as never)(result.structuredContent)
          expect(verdict, `${name}: ${JSON.stringify(result.structuredContent)}`).toMatchObject({ valid: true })
          checked.add(name)
          return result
        }
        const opened = await call("terminal_open", { name: "check" })
        const sessionId = structured(opened).sessionId
        expect(structured(opened).motd).toBeUndefined()
        const sent = await call("terminal_send", { sessionId, text: "printf 'one\\ntwo\\n'" })
        expect(textOf(sent)).toBe("[wait: prompt] [exit: 0]\none\ntwo")
        // the output is in the text only: a client that hands both to a model pays for it once
        expect(JSON.stringify(sent.structuredContent)).not.toContain("two")
        await call("terminal_send", { sessionId, steps: [{ text: "echo first" }, { text: "echo second" }] })
        await call("terminal_read", { sessionId, count: 5 })
        const shown = await call("terminal_snapshot", { sessionId })
        // the screen's rows are in the text only
        expect(textOf(shown)).toContain("second")
        expect(structured(shown).screen).toBeUndefined()
        await call("terminal_resize", { sessionId, cols: 100, rows: 30 })
        await call("terminal_list", {})
        await call("terminal_send", { sessionId, text: "sleep 30", timeoutMs: 300 })
        await call("terminal_signal", { sessionId, signal: "SIGINT" })
        await call("terminal_signal", { sessionId, signal: "SIGCONT", wait: false })
        const background = await call("terminal_send", {
          sessionId,
          text: "sleep 0.5; echo bg",
          run_in_background: true
        })
        const taskId = structured(background).taskId
        await call("task_output", { taskId, wait: true })
        await call("task_kill", { taskId })
        const ran = await call("exec", { command: "echo ran" })
        expect(bodyOf(ran)).toBe("ran")
        const long = await call("exec", { command: "sleep 5", yieldMs: 100 })
        await call("process", { action: "poll", taskId: structured(long).taskId })
        await call("process", { action: "log", taskId: structured(long).taskId })
        await call("process", { action: "list" })
        await call("process", { action: "kill", taskId: structured(long).taskId })
        await call("process", { action: "remove", taskId: structured(long).taskId })
        const asked = await call("terminal_request_human", { sessionId, reason: "check" })
        await call("task_kill", { taskId: structured(asked).taskId })
        // failures: the error's structured content is declared too
        const failed = await call("terminal_send", { sessionId: "s-nosuchsession", text: "x" })
        expect(failed.isError).toBe(true)
        expect(structured(failed)._tag).toBe("SessionNotFound")
        await call("terminal_close", { sessionId })
        expect([...checked].sort()).toEqual(tools.map((tool) => tool.name).sort())
      } finally {
        await client.close()
      }
    },
    120_000
  )

  it("a task that needs one terminal runs with no terminal_open: sends go to the default terminal", async () => {
    const { client } = await connectStdio(["--idle-silence-ms", "1500"])
    try {
      const send = (args: Record<string, unknown>) => client.callTool({ name: "terminal_send", arguments: args })
      const first = await send({ text: "cd /tmp && export KEEP=yes" })
      const { sessionId } = structured(first)
      expect(sessionId).toMatch(/^s-/)
      // opened for this send: its id and first screen come back with it
      expect(textOf(first)).toContain(`[opened: ${sessionId}]`)
      const second = await send({ text: "echo $PWD $KEEP" })
      expect(bodyOf(second)).toBe("/tmp yes")
      expect(structured(second).sessionId).toBe(sessionId)
      expect(textOf(second)).not.toContain("[opened")
      const listed = structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions
      expect(listed).toMatchObject([{ sessionId, name: "default" }])
      // its shell exits: the next send opens a fresh default terminal
      await send({ text: "exit" })
      const fresh = await send({ text: "echo ${KEEP:-gone}" })
      expect(bodyOf(fresh)).toBe("gone")
      expect(structured(fresh).sessionId).not.toBe(sessionId)
      const pid = structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions[0].pid
      await client.close()
      // closing stays optional: the owner's terminals end with its connection
      const deadline = Date.now() + 10_000
      while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(alive(pid)).toBe(false)
    } finally {
      await client.close()
    }
  })

  it("terminal_signal SIGINT on sleep 100 returns the prompt and exit 130 in the same call", async () => {
    const { client } = await connectStdio([])
    try {
      const slept = await client.callTool({ name: "terminal_send", arguments: { text: "sleep 100", timeoutMs: 1000 } })
      expect(textOf(slept)).toContain("[wait: timeout]")
      expect(textOf(slept)).toMatch(/\[foreground: sleep \(pid \d+\) sleeping/)
      const { sessionId } = structured(slept)
      const signalled = await client.callTool({ name: "terminal_signal", arguments: { sessionId, signal: "SIGINT" } })
      expect(textOf(signalled)).toMatch(/^\[SIGINT → process group \d+: delivered\] \[wait: prompt\] \[exit: 130\]/)
      expect(structured(signalled)).toMatchObject({ delivered: true, waitReason: "prompt", exitCode: 130 })
    } finally {
      await client.close()
    }
  })

  it("a full-screen program's screen folds its repeated rows: vim's ~ lines are one line and a count", async () => {
    const { client } = await connectStdio(["--rows", "40"])
    try {
      const file = `/tmp/agent-terminal-vim-${process.pid}.txt`
      const opened = await client.callTool({ name: "terminal_send", arguments: { text: `vim -u NONE -N ${file}` } })
      const text = textOf(opened)
      expect(text).toContain("[full-screen program: screen")
      const folded = /^~ {2}\[×(\d+)\]$/m.exec(text)
      expect(Number(folded?.[1])).toBeGreaterThan(30)
      expect(text.split("\n").filter((line) => line.startsWith("~")).length).toBe(1)
      expect(Buffer.byteLength(text)).toBeLessThan(512)
      // the screen is in the text: not sent again in structuredContent
      expect(structured(opened).screen).toBeUndefined()
      await client.callTool({ name: "terminal_send", arguments: { keys: ["Escape", ":", "q", "!", "Enter"] } })
    } finally {
      await client.close()
    }
  })
})
