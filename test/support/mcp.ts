import { expect } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as path from "node:path"

/** The built CLI (`pnpm test` builds first). */
export const cliBin = path.resolve(__dirname, "../../apps/cli/dist/bin.js")

/** A real MCP client connected over stdio to a freshly spawned `agent-terminal mcp`. */
export const connectStdio = async (args: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliBin, "mcp", ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "pipe"
  })
  const stderr: Array<string> = []
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")))
  const client = new Client({ name: "agent-terminal-tests", version: "0.0.0" })
  await client.connect(transport)
  return { client, transport, stderr, serverPid: transport.pid }
}

/** The structured result of a call, typed loosely for assertions. */
export const structured = (result: unknown): Record<string, any> =>
  (result as { structuredContent?: Record<string, any> }).structuredContent ?? {}

/** The text content of a call. */
export const textOf = (result: unknown): string =>
  ((result as { content?: Array<{ type: string; text?: string }> }).content ?? [])
    .map((block) => block.text ?? "").join("\n")

/**
 * The body of a result's text: what follows its facts line — a send's output (the screen of a full-screen
 * program after it), a page, a first screen. Sent once, there: `structuredContent` has the facts only.
 */
export const bodyOf = (result: unknown): string => {
  const text = textOf(result)
  const newline = text.indexOf("\n")
  return newline === -1 ? "" : text.slice(newline + 1)
}

/** The names, parameters and hints every transport must list for the contract's core tools. */
export const expectToolContract = (
  tools: Awaited<ReturnType<Client["listTools"]>>["tools"]
) => {
  expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining([
    "terminal_open",
    "terminal_send",
    "terminal_read",
    "terminal_signal",
    "terminal_close",
    "terminal_list",
    "task_output",
    "task_kill",
    "exec",
    "process"
  ]))
  const send = tools.find((tool) => tool.name === "terminal_send")!
  // without a sessionId a send goes to the caller's default terminal
  expect(send.inputSchema.required).toBeUndefined()
  expect(Object.keys(send.inputSchema.properties ?? {})).toEqual(
    expect.arrayContaining(["sessionId", "text", "keys", "paste", "submit", "timeoutMs", "run_in_background"])
  )
  expect(send.description).toContain("inferred_idle")
  const read = tools.find((tool) => tool.name === "terminal_read")!
  expect(read.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
  const close = tools.find((tool) => tool.name === "terminal_close")!
  expect(close.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
}
