#!/usr/bin/env node
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Cli from "./Cli.js"

// A failure ends the program with exit code 1 and its report on stderr: stdout belongs to what the command prints
// (MCP's messages for `mcp`). A command line @effect/cli refuses was already told on stderr by it; the runtime's own
// report (through its pretty logger, to stdout) repeated it there as JSON. The loggers are left as they are: the
// commands set their own (to stderr), and a logger added here would print each of their lines twice.
const reported = <A, E, R>(program: Effect.Effect<A, E, R>) =>
  Effect.tapErrorCause(
    program,
    (cause) =>
      Cause.isInterruptedOnly(cause) || Option.exists(Cause.failureOption(cause), ValidationError.isValidationError)
        ? Effect.void
        : Console.error(`agent-terminal: ${Cause.pretty(cause)}`)
  )

Cli.run(process.argv).pipe(
  reported,
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
