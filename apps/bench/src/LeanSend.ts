/**
 * The cost of a send: the server's CPU per `true` sent over stdio by the official SDK's client (read from
 * `/proc/<pid>/stat` around the calls, after a warm-up), against two floors:
 *
 * - a bare Node process driving node-pty (its own CPU per `true` round trip to a raw bash, `PtyHolder serve`);
 * - the official SDK's server answering `terminal_send true` by writing it to a bare node-pty bash and waiting for
 *   its prompt (`SdkContractServer` with `pty`: our tool list and our result, no emulator, no shell integration),
 *   its CPU read as ours is: what an MCP server that sends to a pty pays at least.
 *
 * The three run side by side in each round, fresh processes, warmed up alike, and are measured in blocks taken in
 * turn (the order rotating), so that each round's ratios compare CPU spent in the same seconds. A round's ratio is
 * its sums' ratio; the row's ratio is the median of the rounds'. Measured one after the other (the floor's window,
 * then ours), the ratio moved with the machine's load between the two windows: on a shared machine the floor's
 * CPU per round trip moved 67–189 µs within an hour, and a same-build A/A read 3.7–5.4× (docs/performance.md).
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Forked from "./Forked.js"
import type { RunOptions } from "./Harness.js"
import { promise, size } from "./Harness.js"
import { sdkContractServer, writeContract } from "./LeanStart.js"
import { cliBin, type Connection, stdio } from "./McpPath.js"
import type { Metric } from "./Metric.js"
import { comparePaired, distribution } from "./Metric.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "lean"

/** A process that sends `true` on demand: `sends(n)` does n and gives its CPU over them, µs. */
interface Sender {
  readonly sends: (n: number) => Promise<number>
  readonly close: () => Promise<void>
}

const serverCpuUs = (pid: number) => Proc.stat(pid)!.cpuMs * 1000

/** `n` calls of `terminal_send true` on `connection`, the server's CPU over them (µs). */
const mcpSender = (connection: Connection, sessionId: string): Sender => ({
  sends: async (n) => {
    const before = serverCpuUs(connection.pid)
    for (let i = 0; i < n; i++) {
      const sent = await connection.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "true" } })
      if (sent.isError === true) throw new Error(`terminal_send failed: ${JSON.stringify(sent.content)}`)
    }
    return serverCpuUs(connection.pid) - before
  },
  close: () => connection.close()
})

/** `agent-terminal mcp` over stdio, one session; it also writes the contract the SDK's floor answers with. */
const ours = (contractFile: string) =>
  promise(async (): Promise<Sender> => {
    const connection = await stdio([cliBin, "mcp"])
    const { sessionId } = await writeContract(connection, contractFile)
    return mcpSender(connection, sessionId)
  })

/** The SDK's server with our contract and a bare node-pty bash behind `terminal_open` and `terminal_send`. */
const sdkPty = (contractFile: string) =>
  promise(async (): Promise<Sender> => {
    const connection = await stdio([sdkContractServer, contractFile, "pty"])
    await connection.client.callTool({ name: "terminal_open", arguments: {} })
    return mcpSender(connection, "floor")
  })

/** The bare node-pty loop in a forked node (`PtyHolder serve`), its own CPU per block. */
const nodePty = () =>
  promise(() =>
    new Promise<Sender>((resolve, reject) => {
      const forked = Forked.fork("./PtyHolder.js", ["serve"])
      const exited = new Promise<void>((done) => forked.once("exit", () => done()))
      let next: { readonly answered: (cpuUs: number) => void; readonly failed: (error: Error) => void } | undefined
      forked.once("exit", (code) => {
        const error = new Error(`PtyHolder serve exited with ${code}`)
        reject(error)
        next?.failed(error)
      })
      forked.on("message", (message: { readonly ready?: true; readonly cpuUs?: number }) => {
        if (message.ready === true) {
          resolve({
            sends: (n) =>
              new Promise((answered, failed) => {
                next = { answered, failed }
                forked.send({ sends: n })
              }),
            close: async () => {
              forked.disconnect()
              await Promise.race([exited, new Promise((done) => setTimeout(done, 2000))])
              forked.kill("SIGKILL")
            }
          })
        } else if (message.cpuUs !== undefined) next?.answered(message.cpuUs)
      })
    })
  )

const opened = (sender: Effect.Effect<Sender>) =>
  Effect.acquireRelease(sender, (open) => promise(() => open.close().catch(() => undefined)))

interface Round {
  readonly ours: number
  readonly sdkPty: number
  readonly nodePty: number
}

/**
 * One round: the three started, `warmup` sends each, then `n` each in `blocks` blocks taken in turn; CPU per send
 * (µs) over the measured blocks.
 */
const round = (contractFile: string, warmup: number, n: number, blocks: number) =>
  Effect.scoped(Effect.gen(function*() {
    const senders = [
      yield* opened(ours(contractFile)),
      yield* opened(sdkPty(contractFile)),
      yield* opened(nodePty())
    ]
    return yield* promise(async (): Promise<Round> => {
      for (let block = 0; block < blocks; block++) {
        for (const sender of senders) await sender.sends(warmup / blocks)
      }
      const cpuUs = senders.map(() => 0)
      for (let block = 0; block < blocks; block++) {
        for (let i = 0; i < senders.length; i++) {
          const k = (block + i) % senders.length
          cpuUs[k]! += await senders[k]!.sends(n / blocks)
        }
      }
      return { ours: cpuUs[0]! / n, sdkPty: cpuUs[1]! / n, nodePty: cpuUs[2]! / n }
    })
  }))

/** The send rows. */
export const send = (options: RunOptions) =>
  Effect.gen(function*() {
    const rounds = size(options, 5, 1)
    const warmup = size(options, 3000, 500)
    const n = size(options, 3000, 500)
    const blocks = size(options, 6, 5)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-send-"))
    const samples = { ours: [] as Array<number>, sdkPty: [] as Array<number>, nodePty: [] as Array<number> }
    yield* Effect.ensuring(
      Effect.gen(function*() {
        for (let i = 0; i < rounds; i++) {
          const measured = yield* round(path.join(dir, "contract.json"), warmup, n, blocks)
          samples.ours.push(measured.ours)
          samples.sdkPty.push(measured.sdkPty)
          samples.nodePty.push(measured.nodePty)
          options.progress(`lean: send CPU round ${i + 1}/${rounds}`)
        }
      }),
      Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const listed = (values: ReadonlyArray<number>) => values.map((v) => Stats.round(v)).join(", ")
    const measuredAs = `${n} after ${warmup}, in ${blocks} blocks taken in turn with the other rows' processes`
    const floorRow: Metric = {
      name: "lean.send-cpu.node-pty",
      group,
      kind: "baseline",
      unit: "µs CPU/send",
      ...distribution(samples.nodePty),
      compared: [],
      notes: [
        `a bare Node process, its own CPU per \`true\` round trip to a raw bash, ${measuredAs}; rounds ${
          listed(samples.nodePty)
        }`
      ]
    }
    const sdkRow: Metric = {
      name: "lean.send-cpu.sdk-pty",
      group,
      kind: "baseline",
      unit: "µs CPU/send",
      ...distribution(samples.sdkPty),
      compared: [comparePaired(samples.sdkPty, samples.nodePty, floorRow)],
      notes: [
        "the official SDK's server (unbundled, as the SDK ships) answering terminal_send true with our result, after " +
        "writing `true` to a bare node-pty bash and seeing its prompt (SdkContractServer pty): the server's CPU " +
        `(/proc), ${measuredAs}; rounds ${listed(samples.sdkPty)}`
      ]
    }
    const ratio = comparePaired(samples.ours, samples.nodePty, floorRow)
    const ofMedians = Stats.ratio(distribution(samples.ours).value, floorRow.value)
    return [
      {
        name: "lean.send-cpu",
        group,
        kind: "ours",
        unit: "µs CPU/send",
        ...distribution(samples.ours),
        compared: [ratio, comparePaired(samples.ours, samples.sdkPty, sdkRow)],
        target: {
          text: "server CPU per `true` send over stdio ≤ 4 × bare node-pty's",
          met: options.quick || ratio.ratio === null ? null : ratio.ratio <= 4
        },
        notes: [
          `agent-terminal mcp over stdio, the SDK's client: the server's CPU (/proc) over ${measuredAs}; ` +
          `rounds ${listed(samples.ours)}`,
          `the ratios are the median of the rounds' (each round's floors measured in the same seconds); per round ` +
          `to node-pty ${listed(samples.ours.map((v, i) => v / samples.nodePty[i]!))}, to the SDK's ${
            listed(samples.ours.map((v, i) => v / samples.sdkPty[i]!))
          }; the medians' ratio to node-pty ${ofMedians === null ? "—" : Stats.round(ofMedians)}`,
          ...(options.quick ? ["--quick: a shorter warm-up than the steady state needs: not judged"] : [])
        ]
      },
      sdkRow,
      floorRow
    ] satisfies Array<Metric>
  })
