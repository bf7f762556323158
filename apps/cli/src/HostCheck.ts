/**
 * The host check an MCP server logs a moment after its start: `agent-terminal doctor`, with the server's own
 * needs (its sandbox, network, HTTP token file), run as a child process, and its findings logged on stderr —
 * as information when everything the options need is there, as a warning naming what is missing otherwise.
 *
 * A child, not the server itself: the checks open a shell on a pty and start sandboxes, and the code they load
 * (the doctor, the sandbox's and the network's set-up) and what they allocate stayed in the server for its whole
 * life. Measured at rest, one session: the server 69.3–69.5 MiB with the check in it, 67.7 with the check in a
 * child (67.2 with no check). The price is the child's own start: ~0.45 s of CPU against ~0.17 s in the server,
 * once, off the path of the client's first requests. The child is ended (SIGTERM, its checks' processes by its
 * own teardown) if the server ends first.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** What the server needs of the host: the options `doctor` checks for. */
export interface Needs {
  readonly sandbox: string | undefined
  readonly network: string | undefined
  readonly networkTool: string | undefined
  readonly http: boolean
  readonly tokenFile: string | undefined
}

/** `doctor`'s arguments for these needs. */
export const argumentsOf = (needs: Needs): Array<string> => [
  "doctor",
  ...(needs.sandbox === undefined ? [] : ["--sandbox", needs.sandbox]),
  ...(needs.network === undefined ? [] : ["--network", needs.network]),
  ...(needs.networkTool === undefined ? [] : ["--network-tool", needs.networkTool]),
  ...(needs.http ? ["--http"] : []),
  ...(needs.tokenFile === undefined ? [] : ["--token-file", needs.tokenFile])
]

/** At most this much of each of the child's streams is kept: its findings are ~1.5 KiB. */
const OUTPUT_LIMIT = 64 * 1024

/** How long an ended server waits for the child it sent SIGTERM before SIGKILL. */
const KILL_AFTER_MS = 3_000

interface Outcome {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly error?: string
}

/** This CLI's binary, beside the bundle's chunks (`dist/bin.js`). */
const cliBin = () => path.join(path.dirname(fileURLToPath(import.meta.url)), "bin.js")

const runChild = (args: ReadonlyArray<string>) =>
  Effect.async<Outcome>((resume) => {
    const child = spawn(process.execPath, [cliBin(), ...args], { stdio: ["ignore", "pipe", "pipe"] })
    const kept = { stdout: "", stderr: "" }
    const keep = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      if (kept[stream].length < OUTPUT_LIMIT) kept[stream] += chunk.toString("utf8", 0, OUTPUT_LIMIT)
    }
    child.stdout.on("data", keep("stdout"))
    child.stderr.on("data", keep("stderr"))
    let closed = false
    child.once("error", (error) => {
      closed = true
      resume(Effect.succeed({ code: null, signal: null, ...kept, error: error.message }))
    })
    child.once("close", (code, signal) => {
      // a child that could not start emits `error` and may still emit `close`: the first says what happened
      if (closed) return
      closed = true
      resume(Effect.succeed({ code, signal, ...kept }))
    })
    return Effect.async<void>((done) => {
      if (closed || child.exitCode !== null || child.signalCode !== null) return done(Effect.void)
      const force = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS)
      child.once("close", () => {
        clearTimeout(force)
        done(Effect.void)
      })
      child.kill("SIGTERM")
    })
  })

const firstLine = (text: string) => text.trim().split("\n")[0] ?? ""

/** Run `doctor` for these needs as a child and log its findings (or why it could not run). */
export const log = (needs: Needs): Effect.Effect<void> =>
  Effect.flatMap(runChild(argumentsOf(needs)), (outcome) => {
    const findings = `host check (agent-terminal doctor):\n${outcome.stdout.trimEnd()}`
    if (outcome.code === 0) return Effect.logInfo(findings)
    if (outcome.code === 1 && outcome.stdout !== "") return Effect.logWarning(findings)
    const how = outcome.error !== undefined
      ? `could not start: ${outcome.error}`
      : `ended ${outcome.signal !== null ? `by ${outcome.signal}` : `with ${outcome.code}`}: ${
        firstLine(outcome.stderr)
      }`
    return Effect.logWarning(`host check (agent-terminal doctor) ${how}`)
  })
