/**
 * What a model reads for a typical session: `ls`, a failing C build, a progress bar, a Python REPL
 * exchange with a traceback. The tool text we render (`Render.openResult` / `Render.sendResult`, what
 * `terminal_open` and `terminal_send` return) against the raw bytes a pty produces for the same script
 * (bash on node-pty, what a tool that forwards the terminal's bytes would hand over).
 */
import { Ids, PtyService, TerminalConfig } from "@agent-terminal/core"
import { Render } from "@agent-terminal/tools"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Group, RunOptions } from "./Harness.js"
import { guard, owner, promise, tally, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { compare } from "./Metric.js"
import { promptMarker, RawTerminal } from "./RawPty.js"

const group = "transcript"

const badC = `#include <stdio.h>

int main(void) {
  int count = "three";
  printf("%d\\n", total);
  return 0
}
`

interface Step {
  readonly text: string
  /** The raw prompt after this step: the shell's marker or the REPL's. */
  readonly rawPrompt: string
}

const script = (dir: string): ReadonlyArray<Step> => {
  const shell = (text: string): Step => ({ text, rawPrompt: promptMarker })
  const python = (text: string): Step => ({ text, rawPrompt: ">>> " })
  return [
    shell(`cd ${dir}`),
    shell("ls -la /etc"),
    shell(fs.existsSync("/usr/bin/cc") ? "cc -Wall -c bad.c" : "make -f bad.c"),
    shell("for i in $(seq 1 50); do printf '\\rdownloading %3d%%' $((i*2)); sleep 0.01; done; echo"),
    python("python3 -q"),
    python("import math"),
    python("math.sqrt(2)"),
    python("[i * i for i in range(12)]"),
    python("1/0"),
    shell("exit()")
  ]
}

const utf8 = (text: string) => Buffer.byteLength(text, "utf8")

const ours = (steps: ReadonlyArray<Step>) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const settings = yield* TerminalConfig.make({})
      const service = yield* PtyService.PtyService
      const opened = yield* service.open(owner, { name: "transcript" })
      const id = Ids.SessionId.make(opened.sessionId)
      let text = utf8(Render.openResult(opened, settings.maxResultBytes))
      let structured = utf8(JSON.stringify(opened))
      const reasons: Array<string> = []
      const perStep: Array<number> = []
      for (const step of steps) {
        const result = yield* service.send(owner, id, { text: step.text })
        const rendered = utf8(Render.sendResult(result, settings.maxResultBytes))
        perStep.push(rendered)
        text += rendered
        structured += utf8(JSON.stringify(result))
        reasons.push(result.waitReason)
      }
      yield* service.close(owner, id)
      // a long output with the defaults: what an MCP client receives, in text, in structuredContent, both
      const long = yield* service.open(owner, { name: "transcript-seq" })
      const longId = Ids.SessionId.make(long.sessionId)
      const seq = yield* service.send(owner, longId, { text: "seq 1 10000" })
      yield* service.close(owner, longId)
      const seqText = Render.sendResult(seq, settings.maxResultBytes)
      const seqBytes = {
        text: utf8(seqText),
        structured: utf8(JSON.stringify(seq)),
        both: utf8(
          JSON.stringify({ content: [{ type: "text", text: seqText }], structuredContent: seq, isError: false })
        )
      }
      return { text, structured, perStep, reasons: tally(reasons), seqBytes }
    })
  )

const raw = (steps: ReadonlyArray<Step>) =>
  promise(async () => {
    const terminal = RawTerminal.bash()
    try {
      await terminal.next()
      const perStep: Array<number> = []
      for (const step of steps) {
        const before = terminal.bytes
        await terminal.roundTrip(`${step.text}\r`, step.rawPrompt)
        perStep.push(terminal.bytes - before)
      }
      return { total: terminal.bytes, perStep }
    } finally {
      await terminal.kill()
    }
  })

const measure = (options: RunOptions) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-bench-"))
      fs.writeFileSync(path.join(dir, "bad.c"), badC)
      return dir
    }),
    (dir) =>
      Effect.gen(function*() {
        const steps = script(dir)
        const rawRun = yield* raw(steps)
        const m = yield* ours(steps)
        options.progress("transcript: done")
        const baseline: Metric = {
          name: "transcript.raw-pty-bytes",
          group,
          kind: "baseline",
          unit: "bytes",
          value: rawRun.total,
          compared: [],
          notes: ["every byte a pty produced for the same script (bash --norc on node-pty, echo and escapes included)"]
        }
        return [
          {
            name: "transcript.tool-text",
            group,
            kind: "ours",
            unit: "bytes",
            value: m.text,
            compared: [compare(m.text, baseline)],
            notes: [
              `terminal_open + ${steps.length} × terminal_send rendered as the model reads them: ${
                steps.map((s) => s.text.split(" ")[0]).join(", ")
              }`,
              `structuredContent JSON of the same results: ${m.structured} bytes`
            ],
            detail: {
              waitReason: m.reasons,
              structuredBytes: m.structured,
              steps: steps.map((step, i) => ({ input: step.text, toolText: m.perStep[i], rawPty: rawRun.perStep[i] }))
            }
          },
          baseline,
          ...(["text", "structured", "both"] as const).map((part): Metric => ({
            name: `transcript.seq-10000.${part}`,
            group,
            kind: "ours",
            unit: "bytes",
            value: m.seqBytes[part],
            compared: [],
            notes: [
              part === "text"
                ? "terminal_send 'seq 1 10000' with the defaults (maxResultBytes 32 KiB): the text content"
                : part === "structured"
                ? "the same call's structuredContent (JSON)"
                : "the whole CallToolResult: text and structuredContent together (the output travels in both)"
            ]
          }))
        ] satisfies Array<Metric>
      }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** The group. */
export const transcript: Group = {
  name: group,
  description: "result bytes for a typical transcript: rendered tool text vs the raw pty bytes",
  run: (options) =>
    guard(
      [
        { name: "transcript.tool-text", group, unit: "bytes" },
        ...["text", "structured", "both"].map((part) => ({
          name: `transcript.seq-10000.${part}`,
          group,
          unit: "bytes"
        }))
      ],
      measure(options)
    )
}
