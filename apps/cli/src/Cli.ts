/**
 * The `agent-terminal` command line: `demo`, `mcp`, `serve`, `console`, `doctor`, `bench`.
 */
import { Command, Options } from "@effect/cli"
import * as Bench from "./bench/Bench.js"
import * as Console from "./Console.js"
import * as Daemon from "./Daemon.js"
import * as Demo from "./Demo.js"
import * as Doctor from "./Doctor.js"
import * as HttpTransport from "./HttpTransport.js"
import * as Mcp from "./Mcp.js"
import * as Serve from "./Serve.js"

const demo = Command.make(
  "demo",
  Mcp.sandboxOptions,
  (options) => Mcp.withSandbox(options, (sandbox) => Demo.run(sandbox, Mcp.limitsInput(options)))
).pipe(
  Command.withDescription("Show a persistent bash session driven the way an agent drives it.")
)

const mcp = Command.make(
  "mcp",
  { ...Mcp.mcpOptions, ...Daemon.clientOptions, auto: Daemon.autoArgument },
  Mcp.run
).pipe(
  Command.withDescription(
    "Serve the terminal tools over MCP: on stdio (logs go to stderr), or over Streamable HTTP at /mcp with --http. " +
      "With --daemon the terminals live in the daemon (agent-terminal serve) and outlive this process."
  )
)

const serve = Command.make("serve", Serve.options, Serve.run).pipe(
  Command.withDescription(
    "Run the daemon: one process that owns the terminals, serves them on a Unix socket to mcp --daemon, the " +
      "console and Effect programs (RemoteTerminal.layer), and with --http over MCP Streamable HTTP too."
  )
)

const console = Command.make(
  "console",
  { ...Console.options, ...Daemon.clientOptions, auto: Daemon.autoArgument },
  Console.run
).pipe(
  Command.withDescription(
    "Drive a terminal session by hand through the same tool calls a model makes, and see what it would see."
  )
)

/** The options of `doctor`: what the server would be started with, and the output's form. */
const doctorOptions = {
  sandbox: Mcp.sandboxOptions.sandbox,
  network: Mcp.sandboxOptions.network,
  networkTool: Mcp.sandboxOptions.networkTool,
  http: Options.boolean("http").pipe(
    Options.withDescription("Check what MCP over HTTP needs too (the bearer token or its file).")
  ),
  tokenFile: HttpTransport.httpOptions.tokenFile,
  json: Options.boolean("json").pipe(Options.withDescription("Print the findings as JSON (for tools)."))
}

const doctor = Command.make("doctor", doctorOptions, Doctor.run).pipe(
  Command.withDescription(
    "Check what this host gives (ptys, the stdin_read tier, cgroup v2, bubblewrap, the isolated network, seccomp, " +
      "the HTTP token) for real; exit 1 naming what the given options need and is missing."
  )
)

const root = Command.make("agent-terminal").pipe(
  Command.withDescription("Persistent, interactive terminal sessions for AI agents."),
  Command.withSubcommands([demo, mcp, serve, console, doctor, Bench.command])
)

/** Run the CLI with the process's arguments. */
export const run = Command.run(root, { name: "agent-terminal", version: Mcp.serverInfo.version })
