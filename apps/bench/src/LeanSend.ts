/**
 * The cost of a send: the server's CPU per `true` sent over stdio by the official SDK's client (read from
 * `/proc/<pid>/stat` around the calls, after a warm-up), against two floors:
 *
 * - a bare Node process driving node-pty (its own CPU per `true` round trip to a raw bash, `PtyHolder serve`);
 * - the official SDK's server answering `terminal_send true` by writing it to a bare node-pty bash and waiting for
 *   its prompt (`SdkContractServer` with `pty`: our tool list and our result, no emulator, no shell integration),
 *   its CPU read as ours is: what an MCP server that sends to a pty pays at least.
 *
 * A fourth process splits our number: the same send without MCP (`InProcessSend`: `PtyService` over a real pty in a
 * node of its own), `lean.send-cpu.in-process`; ours minus it is what the MCP layer over stdio costs, the SDK's
 * server minus node-pty's loop what the SDK's does.
 *
 * The four run side by side in each round, fresh processes, warmed up alike, and are measured in blocks taken in
 * turn (the order rotating), so that each round's ratios compare CPU spent in the same seconds. A round's ratio is
 * its sums' ratio; the row's ratio is the median of the rounds'.
 *
 * The warm-up reaches the steady state: 8000 sends. V8 compiles our server's hot path for its first ~6000 sends
 * (its compiler threads spent 67 µs a send over sends 3000–6000, 8 after; the SDK's server's ~20 by 3000, node-pty's
 * loop less). What a short-lived server pays meanwhile is its own row, `lean.send-cpu.first`: the first 3000
 * sends' CPU, each process's, measured the same way. Measured one after the other (the floor's window,
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

/**
 * A sender in a forked node that measures itself (`PtyHolder serve`, `InProcessSend`): `{ ready }` once it can
 * send, then `{ cpuUs }`, its own CPU, for each `{ sends }`.
 */
const forkedSender = (module: string, args: ReadonlyArray<string>) =>
  promise(() =>
    new Promise<Sender>((resolve, reject) => {
      const forked = Forked.fork(module, args)
      const exited = new Promise<void>((done) => forked.once("exit", () => done()))
      let next: { readonly answered: (cpuUs: number) => void; readonly failed: (error: Error) => void } | undefined
      forked.once("exit", (code) => {
        const error = new Error(`${module} ${args.join(" ")} exited with ${code}`)
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

/** The bare node-pty loop (`PtyHolder serve`). */
const nodePty = () => forkedSender("./PtyHolder.js", ["serve"])

/** Our send without MCP: `PtyService` over `NodeTerminal.layer` in a node of its own (`InProcessSend`). */
const inProcess = () => forkedSender("./InProcessSend.js", [])

const opened = (sender: Effect.Effect<Sender>) =>
  Effect.acquireRelease(sender, (open) => promise(() => open.close().catch(() => undefined)))

interface Round {
  readonly ours: number
  readonly sdkPty: number
  readonly nodePty: number
  readonly inProcess: number
}

/** `n` sends of each sender in `blocks` blocks taken in turn (the order rotating): CPU per send (µs), each's. */
const inTurn = async (senders: ReadonlyArray<Sender>, n: number, blocks: number): Promise<Round> => {
  const cpuUs = senders.map(() => 0)
  for (let block = 0; block < blocks; block++) {
    for (let i = 0; i < senders.length; i++) {
      const k = (block + i) % senders.length
      cpuUs[k]! += await senders[k]!.sends(n / blocks)
    }
  }
  return { ours: cpuUs[0]! / n, sdkPty: cpuUs[1]! / n, nodePty: cpuUs[2]! / n, inProcess: cpuUs[3]! / n }
}

/**
 * One round: the four started; their first `first` sends measured, then `warmup` more (not measured), then `n`
 * measured, each part in `blocks` blocks taken in turn.
 */
const round = (contractFile: string, sizes: { first: number; warmup: number; n: number; blocks: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const senders = [
      yield* opened(ours(contractFile)),
      yield* opened(sdkPty(contractFile)),
      yield* opened(nodePty()),
      yield* opened(inProcess())
    ]
    return yield* promise(async () => {
      const first = await inTurn(senders, sizes.first, sizes.blocks)
      await inTurn(senders, sizes.warmup, sizes.blocks)
      return { first, steady: await inTurn(senders, sizes.n, sizes.blocks) }
    })
  }))

/** The send rows. */
export const send = (options: RunOptions) =>
  Effect.gen(function*() {
    const rounds = size(options, 5, 1)
    const sizes = {
      first: size(options, 3000, 500),
      warmup: size(options, 5000, 0),
      n: size(options, 3000, 500),
      blocks: size(options, 6, 5)
    }
    const { blocks, n } = sizes
    const warmup = sizes.first + sizes.warmup
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-send-"))
    const perSender = () => ({
      ours: [] as Array<number>,
      sdkPty: [] as Array<number>,
      nodePty: [] as Array<number>,
      inProcess: [] as Array<number>
    })
    const samples = perSender()
    const first = perSender()
    yield* Effect.ensuring(
      Effect.gen(function*() {
        for (let i = 0; i < rounds; i++) {
          const measured = yield* round(path.join(dir, "contract.json"), sizes)
          for (const key of ["ours", "sdkPty", "nodePty", "inProcess"] as const) {
            samples[key].push(measured.steady[key])
            first[key].push(measured.first[key])
          }
          options.progress(`lean: send CPU round ${i + 1}/${rounds}`)
        }
      }),
      Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const listed = (values: ReadonlyArray<number>) => values.map((v) => Stats.round(v)).join(", ")
    const perRound = (values: ReadonlyArray<number>, floor: ReadonlyArray<number>) =>
      listed(values.map((v, i) => v / floor[i]!))
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
          `to node-pty ${perRound(samples.ours, samples.nodePty)}, to the SDK's ${
            perRound(samples.ours, samples.sdkPty)
          }; the medians' ratio to node-pty ${ofMedians === null ? "—" : Stats.round(ofMedians)}`,
          ...(options.quick ? ["--quick: a shorter warm-up than the steady state needs: not judged"] : [])
        ]
      },
      sdkRow,
      floorRow,
      {
        name: "lean.send-cpu.first",
        group,
        kind: "ours",
        unit: "µs CPU/send",
        ...distribution(first.ours),
        compared: [],
        notes: [
          `the same server's first ${sizes.first} sends (V8 still compiling its hot path; no target: what a short ` +
          `session pays), in ${blocks} blocks taken in turn; rounds ${listed(first.ours)}`,
          `the floors' first ${sizes.first}, same blocks: node-pty ${listed(first.nodePty)}, the SDK's server ${
            listed(first.sdkPty)
          }; ours per round to node-pty's ${perRound(first.ours, first.nodePty)}, to the SDK's ${
            perRound(first.ours, first.sdkPty)
          }`
        ]
      },
      {
        name: "lean.send-cpu.in-process",
        group,
        kind: "ours",
        unit: "µs CPU/send",
        ...distribution(samples.inProcess),
        compared: [comparePaired(samples.inProcess, samples.nodePty, floorRow)],
        notes: [
          "the same send without MCP: PtyService.send of true over NodeTerminal.layer (a real pty and bash, the " +
          `shell integration, the emulator, the readiness race, the audit) in a node of its own, its CPU, ${measuredAs}; ` +
          `rounds ${listed(samples.inProcess)} (no target: it splits lean.send-cpu)`,
          `the MCP layer over stdio, per round: ours minus this ${
            listed(samples.ours.map((v, i) => v - samples.inProcess[i]!))
          } µs; the SDK's server minus node-pty's loop ${
            listed(samples.sdkPty.map((v, i) => v - samples.nodePty[i]!))
          } µs`
        ]
      }
    ] satisfies Array<Metric>
  })
