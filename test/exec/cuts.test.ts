/**
 * Honest cuts (issue 30): a 50 000-line test run through `exec`, one failure near the end. The text a model
 * reads keeps a head and the tail (where the failure is) around one omission line that counts every line
 * and byte left out of the whole run; `process log` says which lines the retention bound dropped, with
 * line numbers counted from the run's first line.
 */
import { Ids } from "@agent-terminal/core"
import { Handlers, ToolCall } from "@agent-terminal/tools"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { TestTerminal } from "../support/terminal.js"

const lines = 50_000
const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "at-cuts-")), "run_tests.py")
fs.writeFileSync(
  script,
  "import sys\n" +
    `for i in range(1, ${lines + 1}):\n` +
    "    print(f'test_case_{i} ... ' + ('FAILED: expected 3, got 4' if i == 49990 else 'ok'))\n" +
    "sys.exit(1)\n"
)
const lineOf = (i: number) => `test_case_${i} ... ${i === 49990 ? "FAILED: expected 3, got 4" : "ok"}`
const wholeBytes = Array.from({ length: lines }, (_, i) => Buffer.byteLength(lineOf(i + 1)) + 1).reduce((a, b) => a + b)

const call = (name: string, payload: unknown) =>
  ToolCall.call(Ids.OwnerId.make("local"), name, payload, { maxResultBytes: 32 * 1024 })

layer(Handlers.layer.pipe(Layer.provideMerge(TestTerminal({ scrollbackLines: 10_000 }))), {
  excludeTestServices: true
})("honest cuts", (it) => {
  for (const mode of ["pty", "child"] as const) {
    it.scoped(`exec (${mode}): the failure and an omission line that counts the whole run`, () =>
      Effect.gen(function*() {
        const result = yield* call("exec", { command: `python3 ${script}`, mode, yieldMs: 120_000 })
        const text = result.text
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(32 * 1024)
        expect(text.split("\n")[0]).toMatch(/\[exit: 1\] \[truncated\]/)
        expect(text).toContain("test_case_49990 ... FAILED: expected 3, got 4")
        const body = text.split("\n").slice(1).filter((line) => line !== "")
        const marker = body.findIndex((line) => line.startsWith("… [omitted"))
        const counts = /^… \[omitted (\d+) lines, (\d+) bytes\] …$/.exec(body[marker]!)
        expect(counts).not.toBeNull()
        // every line is shown or counted, once
        const shown = body.length - 1
        expect(shown + Number(counts![1])).toBe(lines)
        const shownBytes = body.filter((_, i) => i !== marker).reduce(
          (sum, line) => sum + Buffer.byteLength(line) + 1,
          0
        )
        expect(shownBytes + Number(counts![2])).toBe(wholeBytes)
        expect(body[marker - 1]).toBe(lineOf(marker))
        expect(body[marker + 1]).toBe(lineOf(marker + 1 + Number(counts![1])))
        expect(body[body.length - 1]).toBe(lineOf(lines))

        // the log: absolute line numbers, and the lines the retention bound dropped said as such
        const taskId = result.structured.taskId
        const newest = yield* call("process", { action: "log", taskId, count: 2 })
        expect(newest.text).toMatch(
          /^\[task: t-\w+\] \[lines 49999-50000 of 50000\] \[lines 1-\d+ dropped: the last \d+ are kept\]\n/
        )
        expect(newest.text.endsWith(`${lineOf(49999)}\n${lineOf(50000)}`)).toBe(true)
        const gone = yield* call("process", { action: "log", taskId, offset: 45_000, count: 3 })
        expect(gone.text).toMatch(
          /^\[task: t-\w+\] \[no lines of 50000\] \[lines 1-\d+ dropped: the last \d+ are kept\]$/
        )
      }))
  }
})
