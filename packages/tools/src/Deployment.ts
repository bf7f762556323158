/**
 * What a server exposes: an allow-list of tool groups (`terminal`: the terminal_* tools, `tasks`:
 * task_output and task_kill, `exec`: exec and process) and whether background work may be started
 * (`run_in_background`, exec's `background`). Applied identically by every transport (MCP over stdio and
 * HTTP, `ToolClient`, `Portable`): a hidden tool is not listed and a call to it is `InvalidInput`; a hidden
 * parameter leaves the tool's JSON Schema and passing it anyway is `InvalidInput`.
 *
 * @since 0.3.0
 */
import { Placement } from "@agent-terminal/core"
import type { Tool } from "@effect/ai"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { ExecTool, TerminalOpen, TerminalSend, TerminalToolkit } from "./TerminalTools.js"

/**
 * The groups of tools a deployment may allow.
 *
 * @since 0.3.0
 */
export const groups = ["terminal", "tasks", "exec"] as const

/** @since 0.3.0 */
export type Group = typeof groups[number]

/**
 * A deployment's switches.
 *
 * @since 0.3.0
 */
export interface Deployment {
  readonly tools: ReadonlyArray<Group>
  readonly background: boolean
  /**
   * How often a tool call that asked for progress (`_meta.progressToken`) and still waits reports it
   * (`notifications/progress`; default 5000 ms).
   */
  readonly progressIntervalMs?: number | undefined
  /**
   * The terminals live on many machines (a fleet over NATS): `terminal_open` takes `machine` and `labels`
   * (where the terminal goes). Default `false`: the tools are those of one machine.
   */
  readonly machines?: boolean | undefined
}

/**
 * Everything exposed (the default).
 *
 * @since 0.3.0
 */
export const all: Deployment = { tools: groups, background: true }

/**
 * The group of a tool.
 *
 * @since 0.3.0
 */
export const groupOf = (name: string): Group =>
  name.startsWith("terminal_") ? "terminal" : name.startsWith("task_") ? "tasks" : "exec"

/**
 * Parse an allow-list such as `terminal,tasks` (commas or spaces; `all` for every group): the groups, or
 * why the list is refused.
 *
 * @since 0.3.0
 */
export const parseTools = (list: string): Either.Either<ReadonlyArray<Group>, string> => {
  const names = list.split(/[\s,]+/).filter((name) => name !== "")
  if (names.length === 0) return Either.left(`name at least one of ${groups.join(", ")}`)
  if (names.includes("all")) return Either.right(groups)
  const unknown = names.find((name) => !(groups as ReadonlyArray<string>).includes(name))
  if (unknown !== undefined) {
    return Either.left(`${JSON.stringify(unknown.slice(0, 32))} is not a tool group (${groups.join(", ")}, all)`)
  }
  return Either.right(groups.filter((group) => names.includes(group)))
}

/** `terminal_open`'s parameters in a fleet: where the terminal goes. */
const placementFields = {
  machine: Schema.optional(Placement.Token.annotations({
    description: "The machine to open it on (default: the one with the most room)."
  })),
  labels: Schema.optional(
    Schema.Array(Placement.Token).pipe(Schema.maxItems(16)).annotations({
      description: "Only on a machine with all of these labels (gpu, build…)."
    })
  )
}

const omit = <F extends Record<string, unknown>>(fields: F, name: string): F =>
  Object.fromEntries(Object.entries(fields).filter(([key]) => key !== name)) as F

/**
 * The tools a deployment exposes, in the toolkit's order, each with the parameters it allows. Background
 * sends are offered only while something can follow a task (the `tasks` group, or `exec`'s process tool).
 *
 * @since 0.3.0
 */
export const toolsOf = (deployment: Deployment = all): ReadonlyArray<Tool.Any> => {
  const followed = deployment.tools.includes("tasks") || deployment.tools.includes("exec")
  const sendBackground = deployment.background && followed
  return Object.values(TerminalToolkit.tools).flatMap((tool): Array<Tool.Any> => {
    if (!deployment.tools.includes(groupOf(tool.name))) return []
    if (tool.name === TerminalSend.name && !sendBackground) {
      return [TerminalSend.setParameters(omit(TerminalSend.parametersSchema.fields, "run_in_background")) as Tool.Any]
    }
    if (tool.name === TerminalOpen.name && deployment.machines === true) {
      return [TerminalOpen.setParameters({ ...TerminalOpen.parametersSchema.fields, ...placementFields }) as Tool.Any]
    }
    if (tool.name === ExecTool.name && !deployment.background) {
      return [ExecTool.setParameters(omit(ExecTool.parametersSchema.fields, "background")) as Tool.Any]
    }
    return [tool as Tool.Any]
  })
}
