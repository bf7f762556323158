/**
 * The deployment switches of `agent-terminal mcp` (both transports): `--tools` (an allow-list of tool
 * groups), `--no-background` and `--progress-interval-ms`, each with an environment fallback
 * (`AGENT_TERMINAL_TOOLS`, `AGENT_TERMINAL_NO_BACKGROUND`, `AGENT_TERMINAL_PROGRESS_INTERVAL_MS`), as the
 * `Deployment` every transport applies.
 */
import { Deployment } from "@agent-terminal/tools"
import { Options } from "@effect/cli"
import * as Config from "effect/Config"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { integer, type Parsed, text } from "./CliOptions.js"

/**
 * What the server exposes (`Deployment`): `--tools terminal,tasks,exec` (an allow-list of tool groups) and
 * `--no-background` (no run_in_background, no exec background), each with an environment fallback.
 */
export const deploymentOptions = {
  tools: text(
    "tools",
    "AGENT_TERMINAL_TOOLS",
    "The tool groups served, comma-separated: terminal (terminal_*), tasks (task_output, task_kill), exec " +
      "(exec, process), or all (the default)."
  ),
  noBackground: Options.boolean("no-background").pipe(
    Options.withDescription(
      "Offer no background work: run_in_background (terminal_send) and background (exec) leave the tools' " +
        "schemas and are refused. Environment: AGENT_TERMINAL_NO_BACKGROUND=1."
    ),
    Options.withFallbackConfig(Config.boolean("AGENT_TERMINAL_NO_BACKGROUND")),
    Options.withDefault(false)
  ),
  progressIntervalMs: integer(
    "progress-interval-ms",
    "AGENT_TERMINAL_PROGRESS_INTERVAL_MS",
    "How often a tool call that asked for progress (a progressToken) reports it while it waits (ms; default 5000)."
  )
}

/** The deployment options, as parsed. */
export type DeploymentOptions = {
  readonly [K in keyof typeof deploymentOptions]: Parsed<(typeof deploymentOptions)[K]>
}

/** The deployment the options ask for, or why the tool list is refused. */
export const deploymentFrom = (
  options: DeploymentOptions
): Either.Either<Deployment.Deployment, { readonly field: string; readonly message: string }> => {
  const list = Option.getOrUndefined(options.tools)
  const tools = list === undefined ? Either.right(Deployment.groups) : Deployment.parseTools(list)
  const progressIntervalMs = Option.getOrUndefined(options.progressIntervalMs)
  if (progressIntervalMs !== undefined && !(progressIntervalMs >= 1)) {
    return Either.left({ field: "progressIntervalMs", message: "must be at least 1" })
  }
  return Either.match(tools, {
    onLeft: (reason) => Either.left({ field: "tools", message: `--tools: ${reason}` }),
    onRight: (groups) =>
      Either.right({
        tools: groups,
        background: !options.noBackground,
        ...(progressIntervalMs === undefined ? {} : { progressIntervalMs })
      })
  })
}
