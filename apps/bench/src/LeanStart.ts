/**
 * What every agent pays to start the server, against floors started the same way in the same run, in
 * alternating pairs (the ratio is the median of the pairs' ratios):
 *
 * - the cold start: `node bin.js mcp` spawned by the official SDK's client, until the first `true` result
 *   (initialize, tools/list, terminal_open, terminal_send), against the official SDK's no-op server (as the
 *   SDK ships, unbundled), spawned the same way, initialize and one call — and against the floor of our
 *   contract: the SDK's server answering the same four requests with what ours answered (`SdkContractServer`:
 *   our tool list, each `outputSchema` the client compiles, and our results), no terminal behind it — and the
 *   honest floor: that server with a real bash on node-pty behind `terminal_open` and `terminal_send true`
 *   (no server answers `true` without starting a shell);
 * - `--help` against `node -e 0`, with a minimal @effect/cli program's `--help` (bundled as ours is) as the
 *   floor of the CLI library itself.
 */
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { RunOptions } from "./Harness.js"
import { promise, size } from "./Harness.js"
import { cliBin, type Connection, sdkServer, stdio } from "./McpPath.js"
import type { Metric } from "./Metric.js"
import { comparePaired, distribution } from "./Metric.js"
import * as Stats from "./Stats.js"

const group = "lean"
const helpFloor = fileURLToPath(new URL("./HelpFloor.js", import.meta.url))
/** The SDK's server answering our tool list and our results (unbundled, beside the no-op server). */
export const sdkContractServer = fileURLToPath(new URL("./sdk/SdkContractServer.js", import.meta.url))

/**
 * Spawn → connected (initialize) → … → the first `true` result, ms. `clientMs` gets this process's CPU over
 * `tools/list`: the client's own work on our list (the SDK parses it and compiles each tool's `outputSchema`
 * into a validator), which the floor, listing nothing, does not do.
 */
const coldOurs = (clientMs: Array<number>) =>
  promise(async () => {
    const started = performance.now()
    const connection = await stdio([cliBin, "mcp"])
    try {
      const before = process.cpuUsage()
      await connection.client.listTools()
      const used = process.cpuUsage(before)
      clientMs.push((used.user + used.system) / 1000)
      const opened = await connection.client.callTool({ name: "terminal_open", arguments: {} })
      const { sessionId } = opened.structuredContent as { readonly sessionId: string }
      const sent = await connection.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "true" } })
      const elapsed = performance.now() - started
      if ((sent.structuredContent as { readonly waitReason?: string }).waitReason !== "prompt") {
        throw new Error(`true ended with ${JSON.stringify(sent.structuredContent)}`)
      }
      return elapsed
    } finally {
      await connection.close()
    }
  })

/**
 * What the client says and what ours answered, for `SdkContractServer`, from a connection to ours: its list, and
 * a `terminal_open` and a `terminal_send true` of its own. Returns the list's size in bytes and the session.
 */
export const writeContract = async (connection: Connection, file: string) => {
  const { tools } = await connection.client.listTools()
  const opened = await connection.client.callTool({ name: "terminal_open", arguments: {} })
  const { sessionId } = opened.structuredContent as { readonly sessionId: string }
  const sent = await connection.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "true" } })
  fs.writeFileSync(file, JSON.stringify({ tools, results: { terminal_open: opened, terminal_send: sent } }))
  return { listBytes: Buffer.byteLength(JSON.stringify(tools)), sessionId }
}

/** The contract of one run of ours, not timed. */
const captureContract = (file: string) =>
  promise(async () => {
    const connection = await stdio([cliBin, "mcp"])
    try {
      const { listBytes } = await writeContract(connection, file)
      // this start runs until its start is over (the launcher's 2 s), so the code cache the measured starts read
      // is the one any server that lived leaves, whatever shorter start wrote it first (apps/cli/launcher.cjs)
      await new Promise((resolve) => setTimeout(resolve, CACHE_SETTLED_MS))
      return listBytes
    } finally {
      await connection.close()
    }
  })

/** Past the launcher's point where a start is over and writes its code cache (2 s after it began). */
const CACHE_SETTLED_MS = 2_500

/**
 * The same four requests answered by the SDK's server with our list and our results: spawn → the `true`
 * result, ms; `clientMs` gets this process's CPU over `tools/list`, as for ours. With `pty`, its open spawns
 * bash on node-pty and its send writes `true` to it and answers when the prompt is back.
 */
const coldContract = (file: string, clientMs: Array<number>, pty = false) =>
  promise(async () => {
    const started = performance.now()
    const connection = await stdio(pty ? [sdkContractServer, file, "pty"] : [sdkContractServer, file])
    try {
      const before = process.cpuUsage()
      await connection.client.listTools()
      const used = process.cpuUsage(before)
      clientMs.push((used.user + used.system) / 1000)
      const opened = await connection.client.callTool({ name: "terminal_open", arguments: {} })
      const { sessionId } = opened.structuredContent as { readonly sessionId: string }
      const sent = await connection.client.callTool({ name: "terminal_send", arguments: { sessionId, text: "true" } })
      const elapsed = performance.now() - started
      if ((sent.structuredContent as { readonly waitReason?: string }).waitReason !== "prompt") {
        throw new Error(`the contract's true ended with ${JSON.stringify(sent.structuredContent)}`)
      }
      return elapsed
    } finally {
      await connection.close()
    }
  })

/** Spawn → connected (initialize) → one call of the no-op tool, ms. */
const coldSdk = () =>
  promise(async () => {
    const started = performance.now()
    const connection = await stdio([sdkServer])
    try {
      await connection.client.callTool({ name: "noop", arguments: {} })
      return performance.now() - started
    } finally {
      await connection.close()
    }
  })

/** The wall time of `node <args>` to its exit, ms. */
const run = (args: ReadonlyArray<string>) =>
  Effect.sync(() => {
    const started = performance.now()
    const result = spawnSync(process.execPath, [...args], { stdio: ["ignore", "ignore", "ignore"] })
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${result.status}`)
    return performance.now() - started
  })

/** `rounds` of each measure, taken in turn (the order rotating), so a slower minute weighs on all alike. */
const paired = <K extends string>(
  rounds: number,
  measures: Record<K, Effect.Effect<number>>
): Effect.Effect<Record<K, Array<number>>> =>
  Effect.gen(function*() {
    const keys = Object.keys(measures) as Array<K>
    const samples = Object.fromEntries(keys.map((key) => [key, [] as Array<number>])) as Record<K, Array<number>>
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < keys.length; i++) {
        const key = keys[(i + round) % keys.length]!
        samples[key].push(yield* measures[key])
      }
    }
    return samples
  })

/** The cold start of `mcp` and of the SDK's no-op server. */
export const coldStart = (options: RunOptions) =>
  Effect.gen(function*() {
    const rounds = size(options, 9, 3)
    const clientMs: Array<number> = []
    const contractClientMs: Array<number> = []
    const ptyClientMs: Array<number> = []
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-contract-"))
    const file = path.join(dir, "contract.json")
    const samples = yield* Effect.ensuring(
      Effect.flatMap(captureContract(file), (listBytes) =>
        Effect.map(
          paired(rounds, {
            ours: coldOurs(clientMs),
            sdk: coldSdk(),
            contract: coldContract(file, contractClientMs),
            pty: coldContract(file, ptyClientMs, true)
          }),
          (samples) => ({ ...samples, listBytes })
        )),
      Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    options.progress(`lean: cold start, ${rounds} rounds of four`)
    const floor: Metric = {
      name: "lean.cold-start.sdk",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(samples.sdk),
      compared: [],
      notes: ["the official SDK's no-op server (unbundled, as the SDK ships), spawned with node: initialize + one call"]
    }
    const contractRatio = comparePaired(samples.contract, samples.sdk, floor)
    const contract: Metric = {
      name: "lean.cold-start.sdk-contract",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(samples.contract),
      compared: [contractRatio],
      notes: [
        "the floor of our contract: the SDK's server (as its no-op server) answering the same requests as ours " +
        `— initialize, tools/list with our list (${Stats.round(samples.listBytes / 1024)} KiB, each outputSchema), ` +
        "terminal_open, terminal_send true — with the results ours gave, no terminal behind it",
        `the client's own CPU over tools/list: median ${Stats.round(Stats.percentile(contractClientMs, 50))} ms`
      ]
    }
    const withPty: Metric = {
      name: "lean.cold-start.sdk-pty",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(samples.pty),
      compared: [
        comparePaired(samples.pty, samples.sdk, floor),
        comparePaired(samples.pty, samples.contract, contract)
      ],
      notes: [
        "the honest floor: the contract floor with a real terminal behind it — terminal_open spawns " +
        "`bash --noprofile --norc -i` on node-pty (loaded at the open) and answers at its first prompt, " +
        "terminal_send writes `true` and answers when the prompt is back (a marker prompt in the raw bytes; " +
        "no emulator, no shell integration)",
        `the client's own CPU over tools/list: median ${Stats.round(Stats.percentile(ptyClientMs, 50))} ms`
      ]
    }
    const ratio = comparePaired(samples.ours, samples.sdk, floor)
    const ours: Metric = {
      name: "lean.cold-start",
      group,
      kind: "ours",
      unit: "ms",
      ...distribution(samples.ours),
      compared: [
        ratio,
        comparePaired(samples.ours, samples.contract, contract),
        comparePaired(samples.ours, samples.pty, withPty)
      ],
      target: {
        text: "spawn → first `true` result ≤ 1.5 × the SDK's no-op server (initialize + one call)",
        met: ratio.ratio === null ? null : ratio.ratio <= 1.5
      },
      notes: [
        "node apps/cli/dist/bin.js mcp spawned by the SDK's client: initialize, tools/list, terminal_open, " +
        "terminal_send true, until its result; the ratio is the median of the pairs' ratios; after a first " +
        "start that ran its 2 s (the code cache as any server that lived leaves it)",
        `rounds (ours/sdk/contract/sdk-pty): ${
          samples.ours.map((v, i) =>
            `${Stats.round(v)}/${Stats.round(samples.sdk[i]!)}/${Stats.round(samples.contract[i]!)}/${
              Stats.round(samples.pty[i]!)
            }`
          ).join(", ")
        }`,
        `of which the client's own CPU over tools/list (the SDK parses the list and compiles each tool's ` +
        `outputSchema; the floor lists nothing): median ${Stats.round(Stats.percentile(clientMs, 50))} ms ` +
        `(${clientMs.map((v) => Stats.round(v)).join(", ")})`
      ]
    }
    return [ours, floor, contract, withPty]
  })

/** `--help` of ours, of a minimal @effect/cli program, and `node -e 0`. */
export const help = (options: RunOptions) =>
  Effect.gen(function*() {
    const rounds = size(options, 15, 5)
    const samples = yield* paired(rounds, {
      ours: run([cliBin, "--help"]),
      node: run(["-e", "0"]),
      library: run([helpFloor, "--help"])
    })
    options.progress(`lean: --help, ${rounds} rounds`)
    const node: Metric = {
      name: "lean.help.node",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(samples.node),
      compared: [],
      notes: ["node -e 0"]
    }
    const libraryRatio = comparePaired(samples.library, samples.node, node)
    const library: Metric = {
      name: "lean.help.effect-cli",
      group,
      kind: "baseline",
      unit: "ms",
      ...distribution(samples.library),
      compared: [libraryRatio],
      notes: ["a program of one command and one option on @effect/cli, bundled as ours: the CLI library's own floor"]
    }
    const ratio = comparePaired(samples.ours, samples.node, node)
    const ours: Metric = {
      name: "lean.help",
      group,
      kind: "ours",
      unit: "ms",
      ...distribution(samples.ours),
      compared: [ratio, comparePaired(samples.ours, samples.library, library)],
      target: {
        text: "`agent-terminal --help` ≤ 3 × `node -e 0`",
        met: ratio.ratio === null ? null : ratio.ratio <= 3
      },
      notes: ["node apps/cli/dist/bin.js --help to its exit, wall time; ratios are medians of the rounds' ratios"]
    }
    return [ours, node, library]
  })
