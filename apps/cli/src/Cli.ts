/**
 * The `agent-terminal` command line: `demo`, `mcp`.
 */
import { Command } from "@effect/cli"
import * as Demo from "./Demo.js"
import * as Mcp from "./Mcp.js"

const demo = Command.make("demo", {}, () => Demo.run).pipe(
  Command.withDescription("Show a persistent bash session driven the way an agent drives it.")
)

const mcp = Command.make("mcp", {}, () => Mcp.serveStdio({})).pipe(
  Command.withDescription("Serve the terminal tools over MCP on stdio (logs go to stderr).")
)

const root = Command.make("agent-terminal").pipe(
  Command.withDescription("Persistent, interactive terminal sessions for AI agents."),
  Command.withSubcommands([demo, mcp])
)

/** Run the CLI with the process's arguments. */
export const run = Command.run(root, { name: "agent-terminal", version: Mcp.serverInfo.version })
