/**
 * The options of `agent-terminal serve`: declared apart from the daemon (`Serve`), which is loaded only when it
 * starts.
 */
import { integer, type Parsed, text } from "./CliOptions.js"
import * as DaemonOptions from "./DaemonOptions.js"
import * as HttpOptions from "./HttpOptions.js"
import * as McpOptions from "./McpOptions.js"
import * as NatsOptions from "./NatsOptions.js"

/** The options of `agent-terminal serve`. */
export const options = {
  ...McpOptions.settingsOptions,
  ...McpOptions.sandboxOptions,
  ...HttpOptions.httpOptions,
  ...NatsOptions.machineOptions,
  socket: DaemonOptions.socketOption,
  detachedTtl: integer(
    "detached-ttl",
    "AGENT_TERMINAL_DETACHED_TTL_MS",
    "Keep a named owner's terminals this long after its last client went, then close them with their whole " +
      "tree (ms; default 1800000)."
  ),
  logFile: text("log-file", "AGENT_TERMINAL_LOG_FILE", "Append the log to this file instead of stderr.")
}

/** The options, as parsed. */
export type ServeOptions = { readonly [K in keyof typeof options]: Parsed<(typeof options)[K]> }
