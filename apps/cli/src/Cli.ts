/**
 * The `agent-terminal` command line: `demo`, `mcp`, `console`, `bench`.
 */
import { Command } from "@effect/cli"
import * as Bench from "./bench/Bench.js"
import * as Console from "./Console.js"
import * as Demo from "./Demo.js"
import * as Mcp from "./Mcp.js"

const demo = Command.make(
  "demo",
  Mcp.sandboxOptions,
  (options) => Mcp.withSandbox(options, (sandbox) => Demo.run(sandbox, Mcp.limitsInput(options)))
).pipe(
  Command.withDescription("Show a persistent bash session driven the way an agent drives it.")
)

const mcp = Command.make("mcp", Mcp.mcpOptions, Mcp.run).pipe(
  Command.withDescription(
    "Serve the terminal tools over MCP: on stdio (logs go to stderr), or over Streamable HTTP at /mcp with --http."
  )
)

const console = Command.make("console", Console.options, Console.run).pipe(
  Command.withDescription(
    "Drive a terminal session by hand through the same tool calls a model makes, and see what it would see."
  )
)

const root = Command.make("agent-terminal").pipe(
  Command.withDescription("Persistent, interactive terminal sessions for AI agents."),
  Command.withSubcommands([demo, mcp, console, Bench.command])
)

/** Run the CLI with the process's arguments. */
export const run = Command.run(root, { name: "agent-terminal", version: Mcp.serverInfo.version })
