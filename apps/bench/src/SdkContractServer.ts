/**
 * The floor of our contract, for the lean group's cold start: the official SDK's server (as the SDK ships,
 * unbundled, started as its no-op server is) answering `tools/list` with OUR tool list — the definitions our
 * server listed, every `outputSchema` in it, which the client parses and compiles — and each call with the result
 * our server gave to the same call. Spawned with the path of a JSON file `{ tools, results }` that `LeanStart`
 * writes from a run of ours.
 *
 * With `pty` after the file, a real terminal behind it (the honest floor: no server answers `terminal_send true`
 * without starting a shell): `terminal_open` spawns bash on node-pty with the flags our sessions use
 * (`--noprofile --norc -i`) and answers once its first prompt is drawn, `terminal_send` writes `true` and answers
 * once the prompt is back. Nothing else: no emulator, no shell integration, a marker prompt found in the raw bytes.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type * as Pty from "node-pty"
import * as fs from "node:fs"

interface Contract {
  readonly tools: ReadonlyArray<Record<string, unknown>>
  readonly results: Record<string, Record<string, unknown>>
}

/** The raw bash's prompt: a marker nothing else prints. */
const marker = "#P#"

/** A bash on node-pty and a wait for its next prompt in the raw bytes (the marker may span two chunks). */
const shell = (pty: typeof Pty) => {
  const bash = pty.spawn("bash", ["--noprofile", "--norc", "-i"], {
    name: "xterm-256color",
    cols: 80,
    rows: 24,
    cwd: process.cwd(),
    env: { ...process.env, PS1: marker, PS2: "" },
    encoding: null
  })
  let seen = ""
  let waiting: (() => void) | undefined
  bash.onData((data: string | Buffer) => {
    seen = (seen + data.toString("latin1")).slice(-64)
    if (waiting !== undefined && seen.includes(marker)) {
      seen = ""
      const resolve = waiting
      waiting = undefined
      resolve()
    }
  })
  const prompt = (): Promise<void> => {
    if (seen.includes(marker)) {
      seen = ""
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      waiting = resolve
    })
  }
  process.once("exit", () => {
    try {
      process.kill(-bash.pid, "SIGKILL")
    } catch {
      // gone
    }
  })
  return { bash, prompt }
}

const contract = JSON.parse(fs.readFileSync(process.argv[2]!, "utf8")) as Contract
const withPty = process.argv[3] === "pty"
let terminal: ReturnType<typeof shell> | undefined
const server = new McpServer({ name: "sdk-contract", version: "0.0.0" })
// the SDK's low-level handlers (McpServer's own take zod schemas): our definitions go out as they are
server.server.registerCapabilities({ tools: {} })
server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...contract.tools] }))
server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const name = request.params.name
  if (withPty && name === "terminal_open") {
    terminal = shell(await import("node-pty"))
    await terminal.prompt()
  } else if (withPty && name === "terminal_send" && terminal !== undefined) {
    const back = terminal.prompt()
    terminal.bash.write(`${String(request.params.arguments?.["text"] ?? "")}\r`)
    await back
  }
  return contract.results[name] ??
    { content: [{ type: "text", text: `no result of ${name}` }], isError: true }
})
await server.connect(new StdioServerTransport())
