/**
 * The `agent-terminal` command line: `demo`, `mcp`, `serve`, `console`, `doctor`, `replay` (the benchmark is an
 * app of its own, apps/bench).
 *
 * Only the commands' options are loaded to parse a command line (and for `--help`); each command's module is
 * loaded when it runs, so a command loads what it uses and nothing of the others.
 */
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as DaemonOptions from "./DaemonOptions.js"
import type * as Doctor from "./Doctor.js"
import * as HttpOptions from "./HttpOptions.js"
import * as McpOptions from "./McpOptions.js"
import * as NatsOptions from "./NatsOptions.js"
import * as Replay from "./Replay.js"
import * as ServeOptions from "./ServeOptions.js"

/** A command's work, loaded when it runs. */
const lazily = <M, A, E, R>(load: () => Promise<M>, use: (loaded: M) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.promise(load), use)

const demo = Command.make(
  "demo",
  McpOptions.sandboxOptions,
  (options) =>
    lazily(
      () => import("./Settings.js"),
      (Settings) =>
        Settings.withSandbox(
          options,
          (sandbox) => lazily(() => import("./Demo.js"), (Demo) => Demo.run(sandbox, Settings.limitsInput(options)))
        )
    )
).pipe(
  Command.withDescription("Show a persistent bash session driven the way an agent drives it.")
)

const mcp = Command.make(
  "mcp",
  {
    ...McpOptions.mcpOptions,
    ...DaemonOptions.clientOptions,
    ...NatsOptions.connectionOptions,
    auto: DaemonOptions.autoArgument
  },
  (options) => lazily(() => import("./Mcp.js"), (Mcp) => Mcp.run(options))
).pipe(
  Command.withDescription(
    "Serve the terminal tools over MCP: on stdio (logs go to stderr), or over Streamable HTTP at /mcp with --http. " +
      "With --daemon the terminals live in the daemon (agent-terminal serve) and outlive this process."
  )
)

const serve = Command.make(
  "serve",
  ServeOptions.options,
  (options) => lazily(() => import("./Serve.js"), (Serve) => Serve.run(options))
).pipe(
  Command.withDescription(
    "Run the daemon: one process that owns the terminals, serves them on a Unix socket to mcp --daemon, the " +
      "console and Effect programs (RemoteTerminal.layer), and with --http over MCP Streamable HTTP too."
  )
)

const console = Command.make(
  "console",
  {
    ...McpOptions.settingsOptions,
    ...McpOptions.sandboxOptions,
    ...DaemonOptions.clientOptions,
    ...NatsOptions.connectionOptions,
    auto: DaemonOptions.autoArgument
  },
  (options) => lazily(() => import("./Console.js"), (Console) => Console.run(options))
).pipe(
  Command.withDescription(
    "Drive a terminal session by hand through the same tool calls a model makes, and see what it would see."
  )
)

/** The options of `doctor`: what the server would be started with, and the output's form. */
const doctorOptions = {
  sandbox: McpOptions.sandboxOptions.sandbox,
  network: McpOptions.sandboxOptions.network,
  networkTool: McpOptions.sandboxOptions.networkTool,
  http: Options.boolean("http").pipe(
    Options.withDescription("Check what MCP over HTTP needs too (the bearer token or its file).")
  ),
  tokenFile: HttpOptions.httpOptions.tokenFile,
  ...NatsOptions.connectionOptions,
  json: Options.boolean("json").pipe(Options.withDescription("Print the findings as JSON (for tools)."))
}

const doctor = Command.make(
  "doctor",
  doctorOptions,
  (options: Doctor.Parsed) => lazily(() => import("./Doctor.js"), (Doctor) => Doctor.run(options))
).pipe(
  Command.withDescription(
    "Check what this host gives (ptys, the stdin_read tier, cgroup v2, bubblewrap, the isolated network, seccomp, " +
      "the HTTP token) for real; exit 1 naming what the given options need and is missing."
  )
)

const root = Command.make("agent-terminal").pipe(
  Command.withDescription("Persistent, interactive terminal sessions for AI agents."),
  Command.withSubcommands([demo, mcp, serve, console, doctor, Replay.command])
)

/** Run the CLI with the process's arguments. */
export const run = Command.run(root, { name: "agent-terminal", version: McpOptions.serverInfo.version })
