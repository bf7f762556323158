/**
 * A clean process for one flood of the lean group: the CPU this process spends while `command` prints
 * through it. `ours`: a session of `PtyService` (node-pty, the reader, the emulator, the line log, the send's
 * capture and readiness); `floor`: a raw node-pty read loop (it also counts the bytes); `xterm`: the same
 * bytes written to `@xterm/headless` alone, configured as our emulator configures it (160×40, unicode 11,
 * a 64-row scrollback), with nothing of ours around it. Each is warmed up with a small flood first.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { Unicode11Addon } from "@xterm/addon-unicode11"
import xterm from "@xterm/headless"
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import { RawTerminal } from "./RawPty.js"

/** What the child reports. */
export interface FloodReport {
  readonly mode: "ours" | "floor" | "xterm"
  /** CPU of this process over the flood (user + system), ms. */
  readonly cpuMs: number
  /** Bytes through the pty (the floor counts them; the others report 0). */
  readonly bytes: number
  readonly wallMs: number
}

const warmup = "seq 1 20000"
const owner = Ids.OwnerId.make("bench-flood")

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}

const ours = (command: string) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, { name: "flood" })
    const id = Ids.SessionId.make(opened.sessionId)
    yield* service.send(owner, id, { text: warmup })
    const before = process.cpuUsage()
    const started = performance.now()
    const result = yield* service.send(owner, id, { text: command, timeoutMs: 1_800_000 })
    if (result.waitReason !== "prompt") throw new Error(`the flood ended with ${result.waitReason}`)
    return { mode: "ours", cpuMs: cpuMs(before), bytes: 0, wallMs: performance.now() - started } satisfies FloodReport
  }).pipe(Effect.scoped, Effect.provide(NodeTerminal.layer({})))

const floor = async (command: string): Promise<FloodReport> => {
  const raw = RawTerminal.bash()
  await raw.next()
  await raw.roundTrip(`${warmup}\r`)
  const bytes = raw.bytes
  const before = process.cpuUsage()
  const started = performance.now()
  await raw.roundTrip(`${command}\r`, undefined, 1_800_000)
  const report = { mode: "floor", cpuMs: cpuMs(before), bytes: raw.bytes - bytes, wallMs: performance.now() - started }
  await raw.kill()
  return report as FloodReport
}

/** The command's output as a pty delivers it (`\n` as `\r\n`), in reads of 64 KiB. */
const output = (command: string): Array<Buffer> => {
  const bytes = childProcess.execFileSync("bash", ["-c", command], { maxBuffer: 2 ** 31 - 1 })
  const text = bytes.toString("latin1").replaceAll("\n", "\r\n")
  const all = Buffer.from(text, "latin1")
  const chunks: Array<Buffer> = []
  for (let at = 0; at < all.length; at += 65536) chunks.push(all.subarray(at, at + 65536))
  return chunks
}

const write = (terminal: xterm.Terminal, chunks: ReadonlyArray<Buffer>) =>
  new Promise<void>((resolve) => {
    chunks.forEach((chunk, i) => terminal.write(chunk, i === chunks.length - 1 ? resolve : undefined))
    if (chunks.length === 0) resolve()
  })

const headless = async (command: string): Promise<FloodReport> => {
  const terminal = new xterm.Terminal({ cols: 160, rows: 40, scrollback: 64, allowProposedApi: true })
  terminal.loadAddon(new Unicode11Addon())
  terminal.unicode.activeVersion = "11"
  await write(terminal, output(warmup))
  const chunks = output(command)
  const before = process.cpuUsage()
  const started = performance.now()
  await write(terminal, chunks)
  const report = { mode: "xterm", cpuMs: cpuMs(before), bytes: 0, wallMs: performance.now() - started }
  terminal.dispose()
  return report as FloodReport
}

const [mode, command] = process.argv.slice(2)
const report = mode === "floor"
  ? floor(command!)
  : mode === "xterm"
  ? headless(command!)
  : Effect.runPromise(ours(command!))
report.then(
  (value) => process.send?.(value, () => process.exit(0)),
  (error) => {
    process.stderr.write(`flood child failed: ${String(error)}\n`)
    process.exit(1)
  }
)
