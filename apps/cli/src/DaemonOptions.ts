/**
 * The options of a client of the daemon (`mcp --daemon`, `console --daemon`) and the daemon's socket: declared
 * apart from the client (`Daemon`), which is loaded only when a command runs.
 */
import { Args, Options } from "@effect/cli"
import type * as Option from "effect/Option"
import { type Parsed, text } from "./CliOptions.js"

/** The socket option, shared with `serve`. */
export const socketOption = text(
  "socket",
  "AGENT_TERMINAL_SOCKET",
  "The daemon's Unix socket (default $XDG_RUNTIME_DIR/agent-terminal/agent-terminal.sock, else " +
    "~/.agent-terminal/agent-terminal.sock)."
)

/** The options of a client of the daemon. */
export const clientOptions = {
  daemon: Options.boolean("daemon").pipe(
    Options.withDescription(
      "Use the terminals of the agent-terminal daemon (agent-terminal serve) instead of in-process ones: they " +
        "outlive this process. `--daemon auto` starts the daemon (detached) when none answers."
    )
  ),
  socket: socketOption,
  owner: text(
    "owner",
    "AGENT_TERMINAL_OWNER",
    "With --daemon: act as this named owner, whose terminals survive a reconnect (default: anonymous, whose " +
      "terminals close with the connection)."
  ),
  ownerSecretFile: text(
    "owner-secret-file",
    "AGENT_TERMINAL_OWNER_SECRET_FILE",
    "The owner's secret, read from this file (or AGENT_TERMINAL_OWNER_SECRET). Without one, a secret the " +
      "daemon issues is kept in ~/.agent-terminal/owners/<owner>.secret (0600) and used from there."
  )
}

/** `auto` after `--daemon`: start the daemon when none answers. */
export const autoArgument = Args.choice([["auto", "auto" as const]], { name: "auto" }).pipe(
  Args.withDescription("With --daemon: start the daemon (detached) when none answers."),
  Args.optional
)

/** The client options, as parsed. */
export type ClientOptions =
  & { readonly [K in keyof typeof clientOptions]: Parsed<(typeof clientOptions)[K]> }
  & { readonly auto?: Option.Option<"auto"> }
