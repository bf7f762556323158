/**
 * The terminal tools for any agent SDK, without Effect at the call site: plain JSON Schema definitions to
 * register, and Promise-based handlers that run the same call path as MCP (validation, owner, the bounded
 * rendering). The services run in a `ManagedRuntime` built once from the layer you pass.
 *
 * ```ts
 * import { NodeTerminal } from "@agent-terminal/node"
 * import { Portable } from "@agent-terminal/tools"
 *
 * const terminal = Portable.make({ layer: NodeTerminal.layer(), owner: "agent-1" })
 * for (const tool of terminal.definitions) registerWithMySdk(tool.name, tool.description, tool.inputSchema)
 * const result = await terminal.callTool("terminal_open", {}) // { isError, structured, text }
 * await terminal.dispose() // closes every session
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Deployment from "./Deployment.js"
import * as Instructions from "./Instructions.js"
import { describe } from "./McpTools.js"
import * as ToolClient from "./ToolClient.js"

/**
 * A tool as an agent SDK registers it: name, description, JSON Schema of the arguments, MCP-style hints.
 *
 * @since 0.1.0
 */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly inputSchema: Record<string, unknown>
  readonly annotations: {
    readonly title?: string
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: boolean
  }
}

/**
 * What a call returns: `text` is what the model should read (bounded by `maxResultBytes`), `structured`
 * the same facts as JSON (on failure: `_tag`, `message` and the error's fields).
 *
 * @since 0.1.0
 */
export interface ToolResult {
  readonly isError: boolean
  readonly structured: Record<string, unknown>
  readonly text: string
}

/**
 * Every terminal tool's definition, as plain JSON.
 *
 * @since 0.1.0
 */
export const toolDefinitions = (deployment: Deployment.Deployment = Deployment.all): Array<ToolDefinition> =>
  Deployment.toolsOf(deployment).map((tool) => {
    const described = describe(tool)
    const hints = described.annotations
    return JSON.parse(JSON.stringify({
      name: described.name,
      description: described.description ?? "",
      inputSchema: described.inputSchema,
      annotations: {
        ...(hints?.title === undefined ? {} : { title: hints.title }),
        readOnlyHint: hints?.readOnlyHint ?? false,
        destructiveHint: hints?.destructiveHint ?? true,
        idempotentHint: hints?.idempotentHint ?? false,
        openWorldHint: hints?.openWorldHint ?? true
      }
    })) as ToolDefinition
  })

/**
 * The tools, ready to call from plain JavaScript.
 *
 * @since 0.1.0
 */
export interface PortableTools {
  readonly definitions: ReadonlyArray<ToolDefinition>
  /** The guide an MCP server sends in `initialize` (`instructions`): for the model's system prompt. */
  readonly instructions: string
  /**
   * Call a tool; resolves with its outcome (a tool failure is `isError: true`, not a rejection). Rejects
   * only when the services cannot start (e.g. `InvalidConfig`) or the call is aborted.
   */
  readonly callTool: (
    name: string,
    args?: unknown,
    options?: { readonly owner?: string | undefined; readonly signal?: AbortSignal | undefined }
  ) => Promise<ToolResult>
  /** One handler per tool name, for SDKs that register a function per tool. */
  readonly handlers: Readonly<Record<string, (args: unknown) => Promise<ToolResult>>>
  /** Close every session and stop the services. */
  readonly dispose: () => Promise<void>
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 */
export interface Options<E> extends ToolClient.Options {
  /** What provides the handlers' services, e.g. `NodeTerminal.layer({ idleSilenceMs: 2000 })`. */
  readonly layer: Layer.Layer<ToolClient.Requirements, E>
  /**
   * Where the services' logs go: `stderr` (default — stdout may be a protocol, e.g. an MCP stdio server),
   * `stdout`, or `none`.
   */
  readonly logs?: "stderr" | "stdout" | "none" | undefined
}

const loggerLayer = (logs: Options<unknown>["logs"]) =>
  logs === "stdout"
    ? Layer.empty
    : logs === "none"
    ? Logger.remove(Logger.defaultLogger)
    : Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))

/**
 * Build the tools over a layer. The services start on the first call (an invalid setting rejects it) and
 * live until `dispose`.
 *
 * @since 0.1.0
 */
export const make = <E>(options: Options<E>): PortableTools => {
  const runtime = ManagedRuntime.make(
    ToolClient.layer(options).pipe(Layer.provide(options.layer), Layer.provide(loggerLayer(options.logs)))
  )
  const callTool: PortableTools["callTool"] = (name, args, callOptions) =>
    runtime.runPromiseExit(
      Effect.flatMap(ToolClient.ToolClient, (client) => client.call(name, args ?? {}, { owner: callOptions?.owner })),
      callOptions?.signal === undefined ? undefined : { signal: callOptions.signal }
    ).then((exit) => Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause)))
  const deployment = options.deployment ?? Deployment.all
  const definitions = toolDefinitions(deployment)
  return {
    definitions,
    instructions: Instructions.text(deployment),
    callTool,
    handlers: Object.fromEntries(definitions.map(({ name }) => [name, (args: unknown) => callTool(name, args)])),
    dispose: () => runtime.dispose()
  }
}
