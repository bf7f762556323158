/**
 * The deployment switches of `agent-terminal mcp` (both transports): `--tools` (an allow-list of tool
 * groups), `--no-background` and `--progress-interval-ms`, each with an environment fallback
 * (`AGENT_TERMINAL_TOOLS`, `AGENT_TERMINAL_NO_BACKGROUND`, `AGENT_TERMINAL_PROGRESS_INTERVAL_MS`), as the
 * `Deployment` every transport applies.
 */
import { Deployment } from "@agent-terminal/tools"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { DeploymentOptions } from "./McpOptions.js"

export { type DeploymentOptions, deploymentOptions } from "./McpOptions.js"

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
