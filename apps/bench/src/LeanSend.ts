/**
 * The cost of a send: the server's CPU per `true` sent over stdio by the official SDK's client (read from
 * `/proc/<pid>/stat` around the calls, after a warm-up), against a bare Node process driving node-pty (its own
 * CPU per `true` round trip to a raw bash, `PtyHolder roundtrip`), in alternating rounds of fresh processes.
 */
import * as Effect from "effect/Effect"
import * as Forked from "./Forked.js"
import type { RunOptions } from "./Harness.js"
import { promise, size } from "./Harness.js"
import { cliBin, stdio } from "./McpPath.js"
import type { Metric } from "./Metric.js"
import { comparePaired, distribution } from "./Metric.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "lean"

/** The server's CPU per send over `n` sends of `true`, after `warmup` of them, µs. */
const ours = (warmup: number, n: number) =>
  Effect.acquireUseRelease(
    promise(() => stdio([cliBin, "mcp"])),
    (connection) =>
      promise(async () => {
        const opened = await connection.client.callTool({ name: "terminal_open", arguments: {} })
        const { sessionId } = opened.structuredContent as { readonly sessionId: string }
        const send = () => connection.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "true" } })
        for (let i = 0; i < warmup; i++) await send()
        const before = Proc.stat(connection.pid)!.cpuMs
        for (let i = 0; i < n; i++) await send()
        return (Proc.stat(connection.pid)!.cpuMs - before) * 1000 / n
      }),
    (connection) => promise(() => connection.close())
  )

const floor = (warmup: number, n: number) =>
  Effect.map(
    Forked.report<{ readonly cpuUsPerSend: number }>("./PtyHolder.js", ["roundtrip", String(warmup), String(n)]),
    (report) => report.cpuUsPerSend
  )

/** The send rows. */
export const send = (options: RunOptions) =>
  Effect.gen(function*() {
    const rounds = size(options, 3, 1)
    const warmup = size(options, 3000, 500)
    const n = size(options, 3000, 500)
    const samples = { ours: [] as Array<number>, floor: [] as Array<number> }
    for (let round = 0; round < rounds; round++) {
      samples.floor.push(yield* floor(warmup, n))
      samples.ours.push(yield* ours(warmup, n))
      options.progress(`lean: send CPU round ${round + 1}/${rounds}`)
    }
    const floorRow: Metric = {
      name: "lean.send-cpu.node-pty",
      group,
      kind: "baseline",
      unit: "µs CPU/send",
      ...distribution(samples.floor),
      compared: [],
      notes: [`a bare Node process, its own CPU per \`true\` round trip to a raw bash, ${n} after ${warmup}`]
    }
    const ratio = comparePaired(samples.ours, samples.floor, floorRow)
    return [
      {
        name: "lean.send-cpu",
        group,
        kind: "ours",
        unit: "µs CPU/send",
        ...distribution(samples.ours),
        compared: [ratio],
        target: {
          text: "server CPU per `true` send over stdio ≤ 4 × bare node-pty's",
          met: options.quick || ratio.ratio === null ? null : ratio.ratio <= 4
        },
        notes: [
          `agent-terminal mcp over stdio, the SDK's client: the server's CPU (/proc) over ${n} terminal_send of ` +
          `true after ${warmup}, per send; rounds ${samples.ours.map((v) => Stats.round(v)).join(", ")}`,
          ...(options.quick ? ["--quick: a shorter warm-up than the steady state needs: not judged"] : [])
        ]
      },
      floorRow
    ] satisfies Array<Metric>
  })
