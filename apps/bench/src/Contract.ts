/**
 * What the tool contract costs a model (issue 30), through a real MCP client over stdio: the tool list as
 * a model sees it on every turn (each tool's name, description and input schema), with every tool on and
 * with `--tools terminal`; and the bytes of one fixed task — the same calls on every version — as the text
 * the model reads and as whole `CallToolResult`s (text, `structuredContent` and the rest), which is what a
 * client that hands both to the model pays. The values measured on the code before issue 30 are rows of
 * their own, so each run shows the change next to them.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Group, RunOptions } from "./Harness.js"
import { guard, promise } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { compare } from "./Metric.js"

const group = "contract"
const cliBin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))

/** Measured with this group on the code before issue 30 (`f782a34`), to set each run's numbers beside. */
const before = {
  "contract.tool-list.all": 19187,
  "contract.tool-list.terminal": 11539,
  "contract.task.text": 66400,
  "contract.task.whole": 151460
} as const

type Row = keyof typeof before

const badC = `#include <stdio.h>

int main(void) {
  int count = "three";
  printf("%d\\n", total);
  return 0
}
`

/** 50 000 test lines, one failure near the end, the way a test runner prints them. */
const testRun = "import sys\n" +
  "for i in range(1, 50001):\n" +
  "    print(f'test_case_{i} ... ' + ('FAILED: expected 3, got 4' if i == 49990 else 'ok'))\n" +
  "sys.exit(1)\n"

interface Connection {
  readonly client: Client
  readonly close: () => Promise<void>
}

const connect = async (args: ReadonlyArray<string>): Promise<Connection> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliBin, "mcp", ...args],
    stderr: "ignore"
  })
  const client = new Client({ name: "agent-terminal-bench", version: "0.0.0" })
  await client.connect(transport)
  return { client, close: () => client.close() }
}

const utf8 = (text: string) => Buffer.byteLength(text, "utf8")

/** The tool list as a model sees it: each tool's name, description and input schema. */
const listBytes = (args: ReadonlyArray<string>) =>
  promise(async () => {
    const connection = await connect(args)
    try {
      const { tools } = await connection.client.listTools()
      const seen = tools.map((tool) =>
        utf8(JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }))
      )
      return {
        bytes: seen.reduce((sum, n) => sum + n, 0),
        whole: utf8(JSON.stringify(tools)),
        perTool: Object.fromEntries(tools.map((tool, i) => [tool.name, seen[i]]))
      }
    } finally {
      await connection.close()
    }
  })

const textOf = (result: unknown) =>
  (((result as { readonly content?: unknown }).content ?? []) as Array<{ readonly text?: string }>).map((block) =>
    block.text ?? ""
  ).join("\n")

/** The fixed task: the same calls, with the same arguments, on every version. */
const task = (dir: string) =>
  promise(async () => {
    const connection = await connect([])
    const calls: Array<{ readonly call: string; readonly text: number; readonly whole: number }> = []
    const call = async (name: string, args: Record<string, unknown>, label: string) => {
      const result = await connection.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
      calls.push({ call: label, text: utf8(textOf(result)), whole: utf8(JSON.stringify(result)) })
      return result
    }
    try {
      const opened = await call("terminal_open", { name: "task" }, "terminal_open")
      const sessionId = (opened.structuredContent as { readonly sessionId: string }).sessionId
      const send = (args: Record<string, unknown>, label: string) =>
        call("terminal_send", { sessionId, ...args }, `terminal_send ${label}`)
      await send({ text: `cd ${dir}` }, "cd")
      await send({ text: "cc -Wall -c bad.c" }, "cc")
      await send({ text: "python3 -q" }, "python3")
      await send({ text: "1/0" }, "1/0")
      await send({ text: "exit()" }, "exit()")
      await send({ text: "vim -u NONE -N notes.txt" }, "vim")
      await send({ keys: ["Escape", ":", "q", "!", "Enter"] }, ":q!")
      await send({ text: "seq 1 10000" }, "seq")
      await send({ text: "sleep 100", timeoutMs: 1500 }, "sleep 100")
      await call("terminal_signal", { sessionId, signal: "SIGINT" }, "terminal_signal SIGINT")
      await send({ text: "echo after" }, "echo")
      await call("exec", { command: `python3 ${path.join(dir, "run_tests.py")}` }, "exec tests")
      await call("terminal_close", { sessionId }, "terminal_close")
      return {
        text: calls.reduce((sum, c) => sum + c.text, 0),
        whole: calls.reduce((sum, c) => sum + c.whole, 0),
        calls
      }
    } finally {
      await connection.close()
    }
  })

const beforeRow = (name: Row, notes: ReadonlyArray<string>): Metric => ({
  name: `${name}.before`,
  group,
  kind: "baseline",
  unit: "bytes",
  value: before[name],
  compared: [],
  notes: ["measured with this group on the code before issue 30 (f782a34)", ...notes]
})

const measure = (options: RunOptions) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-bench-"))
      fs.writeFileSync(path.join(dir, "bad.c"), badC)
      fs.writeFileSync(path.join(dir, "run_tests.py"), testRun)
      return dir
    }),
    (dir) =>
      Effect.gen(function*() {
        const all = yield* listBytes([])
        const terminal = yield* listBytes(["--tools", "terminal"])
        options.progress("contract: tool lists measured")
        const run = yield* task(dir)
        options.progress("contract: task done")
        const rows: Array<Metric> = []
        const row = (name: Row, value: number, notes: ReadonlyArray<string>, detail?: Record<string, unknown>) => {
          const old = beforeRow(name, [])
          rows.push(old, {
            name,
            group,
            kind: "ours",
            unit: "bytes",
            value,
            compared: [compare(value, old)],
            notes,
            ...(detail === undefined ? {} : { detail })
          })
        }
        row("contract.tool-list.all", all.bytes, [
          "tools/list with every tool on, as a model sees it: name, description and inputSchema of each tool",
          `the whole list (annotations, outputSchema): ${all.whole} bytes`
        ], { perTool: all.perTool })
        row("contract.tool-list.terminal", terminal.bytes, [
          "the same with --tools terminal",
          `the whole list: ${terminal.whole} bytes`
        ], { perTool: terminal.perTool })
        const labels = run.calls.map((c) => c.call.replace(/^terminal_send /, "")).join(", ")
        row("contract.task.text", run.text, [
          `${run.calls.length} calls over stdio (${labels}): the text content a model reads`
        ], { calls: run.calls })
        row("contract.task.whole", run.whole, [
          "the same calls: the whole CallToolResult JSON (text, structuredContent, isError)"
        ])
        return rows
      }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** The group. */
export const contract: Group = {
  name: group,
  description: "the tool contract's cost to a model: the tool list's bytes, and a fixed task's text and whole results",
  run: (options) =>
    guard(
      (Object.keys(before) as Array<Row>).map((name) => ({ name, group, unit: "bytes" })),
      measure(options)
    )
}
