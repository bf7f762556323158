/**
 * Bad tool inputs over a real MCP client on stdio (issue 15, finding 8; SCENARIOS 39): each refused as
 * `InvalidInput` naming the field, answered small, never echoed, and the connection goes on. And the
 * stdio transport's own refusals, with raw lines: a batch, a line that is not JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { bodyOf, cliBin, connectStdio, structured, textOf } from "../support/mcp.js"

type Connected = Awaited<ReturnType<typeof connectStdio>>

const withClient = async (args: ReadonlyArray<string>, use: (connected: Connected) => Promise<void>) => {
  const connected = await connectStdio(args)
  try {
    await use(connected)
  } finally {
    await connected.client.close()
  }
}

const wholeSize = (result: unknown) =>
  Buffer.byteLength(textOf(result)) + Buffer.byteLength(JSON.stringify(structured(result)))

/** Every tool with arguments it accepts, to which an unknown parameter is added. */
const valid: ReadonlyArray<[string, Record<string, unknown>]> = [
  ["terminal_open", {}],
  ["terminal_send", { sessionId: "s-none", text: "true" }],
  ["terminal_read", { sessionId: "s-none" }],
  ["terminal_signal", { sessionId: "s-none", signal: "SIGINT" }],
  ["terminal_close", { sessionId: "s-none" }],
  ["terminal_list", {}],
  ["task_output", { taskId: "t-none" }],
  ["task_kill", { taskId: "t-none" }],
  ["exec", { command: "true" }],
  ["process", { action: "list" }]
]

describe("tool inputs, refused for real over stdio", () => {
  it("every tool rejects an unknown parameter the same way, before doing anything", async () => {
    await withClient([], async ({ client }) => {
      for (const [name, args] of valid) {
        const result = await client.callTool({ name, arguments: { ...args, colour: "blue" } })
        expect(result.isError).toBe(true)
        expect(structured(result)).toMatchObject({ _tag: "InvalidInput", field: "colour" })
        expect(structured(result).reason).toContain(`is not a parameter of ${name}`)
      }
      expect(structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions).toEqual([])
    })
  })

  it("fractions, negatives, out-of-range numbers and control characters are InvalidInput naming the field", async () => {
    await withClient([], async ({ client }) => {
      const cases: ReadonlyArray<[string, Record<string, unknown>, string]> = [
        ["terminal_open", { cols: 1.5 }, "cols"],
        ["terminal_open", { cols: -1 }, "cols"],
        ["terminal_open", { cols: 0, rows: 0 }, "cols"],
        ["terminal_open", { cols: 100000, rows: 100000 }, "cols"],
        ["terminal_open", { rows: 501 }, "rows"],
        ["terminal_open", { name: "a\u0000b" }, "name"],
        ["terminal_open", { name: "" }, "name"],
        ["terminal_open", { name: "n".repeat(129) }, "name"],
        ["terminal_send", { sessionId: "s-none", text: "x", timeoutMs: -5 }, "timeoutMs"],
        ["terminal_send", { sessionId: "s-none", text: "x", timeoutMs: 1e308 }, "timeoutMs"],
        ["terminal_send", { sessionId: "s-none", text: "x", idleMs: 2.5 }, "idleMs"],
        ["terminal_send", { sessionId: "s".repeat(65), text: "x" }, "sessionId"],
        ["task_output", { taskId: "t-none", timeoutMs: -1 }, "timeoutMs"],
        ["exec", { command: "true", timeoutMs: 1.5 }, "timeoutMs"],
        ["exec", { command: "true", yieldMs: 86_400_001 }, "yieldMs"],
        ["exec", { command: "true", noOutputTimeoutMs: -1 }, "noOutputTimeoutMs"],
        ["process", { action: "poll", taskId: "t-none", timeoutMs: 0.1 }, "timeoutMs"]
      ]
      for (const [name, args, field] of cases) {
        const result = await client.callTool({ name, arguments: args })
        expect({ name, args, refused: structured(result) }).toMatchObject({
          refused: { _tag: "InvalidInput", field }
        })
      }
      expect(structured(await client.callTool({ name: "terminal_list", arguments: {} })).sessions).toEqual([])
    })
  })

  it("text and paste over maxInputBytes are refused; the session keeps working", async () => {
    await withClient(["--max-input-bytes", "4096"], async ({ client }) => {
      const { sessionId } = structured(await client.callTool({ name: "terminal_open", arguments: {} }))
      for (const args of [{ text: "x".repeat(5000) }, { paste: "é".repeat(3000) }]) {
        const refused = await client.callTool({ name: "terminal_send", arguments: { sessionId, ...args } })
        expect(structured(refused)).toMatchObject({ _tag: "InvalidInput", field: Object.keys(args)[0] })
      }
      const fine = await client.callTool({ name: "terminal_send", arguments: { sessionId, text: "echo still here" } })
      expect(structured(fine)).toMatchObject({ waitReason: "prompt" })
      expect(bodyOf(fine)).toBe("still here")
    })
  })

  it("an 8 MiB unknown parameter (or value, or name) is answered within maxResultBytes, nothing echoed", async () => {
    await withClient(["--max-result-bytes", "1024"], async ({ client }) => {
      const huge = "Z".repeat(8 * 1024 * 1024)
      const attempts: ReadonlyArray<[string, Record<string, unknown>]> = [
        ["terminal_open", { bogus: huge }],
        ["terminal_open", { [huge]: true }],
        ["terminal_open", { cols: huge }],
        ["terminal_send", { sessionId: huge, text: "x" }],
        ["terminal_signal", { sessionId: "s-none", signal: huge }]
      ]
      for (const [name, args] of attempts) {
        const result = await client.callTool({ name, arguments: args })
        expect(result.isError).toBe(true)
        expect(wholeSize(result)).toBeLessThanOrEqual(1024)
        expect(JSON.stringify(result)).not.toContain("Z".repeat(80))
      }
      // not a tool call the terminal tools answer: the protocol error McpServer gives is cut short too
      for (const [name, args] of [[huge, {}], ["terminal_open", huge]] as const) {
        const error = await client.callTool({ name, arguments: args as any }).then(() => undefined, (e: Error) => e)
        expect(error).toBeInstanceOf(Error)
        expect(error!.message.length).toBeLessThan(1024)
      }
    })
  })
})

/** Raw lines to `agent-terminal mcp` on stdio; the lines it answered. */
const rawStdio = (lines: ReadonlyArray<string>, expected: number) =>
  new Promise<Array<Record<string, any>>>((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, "mcp"], { stdio: ["pipe", "pipe", "ignore"] })
    let out = ""
    const answers: Array<Record<string, any>> = []
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      let newline = out.indexOf("\n")
      while (newline !== -1) {
        answers.push(JSON.parse(out.slice(0, newline)))
        out = out.slice(newline + 1)
        newline = out.indexOf("\n")
      }
      if (answers.length >= expected) child.stdin.end()
    })
    child.once("exit", () => resolve(answers))
    child.once("error", reject)
    for (const line of lines) child.stdin.write(`${line}\n`)
  })

describe("the stdio transport's own refusals", () => {
  it("a batch is refused and runs nothing; a line that is not JSON is a parse error; the connection goes on", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
    }
    const exec = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "exec", arguments: { command: "echo ran" } }
    }
    const answers = await rawStdio([
      JSON.stringify([init, exec]),
      "{not json",
      JSON.stringify(init),
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "terminal_list", arguments: {} } })
    ], 4)
    expect(answers[0]).toMatchObject({ id: null, error: { code: -32600 } })
    expect(answers[1]).toMatchObject({ id: null, error: { code: -32700 } })
    // responses carry their ids; a tool call may be answered before an earlier initialize
    const byId = (id: number) => answers.find((answer) => answer.id === id)
    expect(byId(1)).toMatchObject({ result: { protocolVersion: "2025-06-18" } })
    expect(byId(3)).toMatchObject({ result: { isError: false, structuredContent: { sessions: [] } } })
    expect(byId(2)).toBeUndefined()
    expect(JSON.stringify(answers)).not.toContain("ran")
  })
})
