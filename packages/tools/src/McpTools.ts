/**
 * The terminal tools on an `@effect/ai` MCP server: each call runs as the owner of its connection and
 * answers `isError: true` with the error's `_tag` and message on failure.
 *
 * @since 0.1.0
 */
import type { Ids } from "@agent-terminal/core"
import { McpSchema, McpServer, Tool } from "@effect/ai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Deployment from "./Deployment.js"
import * as Contract from "./internal/contract.js"
import * as ToolRequests from "./internal/toolRequests.js"
import * as ToolCall from "./ToolCall.js"

/**
 * How a call's owner is found from its MCP client.
 *
 * @since 0.1.0
 */
export type OwnerOf = (client: McpSchema.McpServerClient["Type"]) => Effect.Effect<Ids.OwnerId>

/**
 * The MCP description of a tool: its JSON Schema (as a model reads it: `internal/contract.ts`) and its
 * annotations.
 *
 * @since 0.1.0
 */
export const describe = (tool: Tool.Any): McpSchema.Tool =>
  new McpSchema.Tool({
    name: tool.name,
    description: tool.description,
    inputSchema: Contract.inputSchemaOf(tool),
    annotations: new McpSchema.ToolAnnotations({
      ...Option.match(Context.getOption(tool.annotations, Tool.Title), {
        onNone: () => ({}),
        onSome: (title) => ({ title })
      }),
      readOnlyHint: Context.get(tool.annotations, Tool.Readonly),
      destructiveHint: Context.get(tool.annotations, Tool.Destructive),
      idempotentHint: Context.get(tool.annotations, Tool.Idempotent),
      openWorldHint: Context.get(tool.annotations, Tool.OpenWorld)
    })
  })

/**
 * The answer to `tools/list` for a deployment, as the transports send it: each tool's name, description,
 * input schema and annotations, and its `outputSchema` (the shape of its `structuredContent`), which
 * `McpServer`'s own listing has no field for.
 *
 * @since 0.4.0
 */
export const list = (deployment?: Deployment.Deployment | undefined): { readonly tools: ReadonlyArray<object> } => ({
  tools: Deployment.toolsOf(deployment).map((tool) => {
    const described = describe(tool)
    return JSON.parse(JSON.stringify({
      name: described.name,
      description: described.description,
      inputSchema: described.inputSchema,
      outputSchema: Contract.outputSchemaOf(tool),
      annotations: described.annotations
    }))
  })
})

/**
 * How the calls of a server find their owner: one owner for every call (a stdio connection, an HTTP MCP
 * session), or `ownerOf` asked per call.
 *
 * @since 0.2.0
 */
export type Options =
  & { readonly maxResultBytes: number; readonly deployment?: Deployment.Deployment | undefined }
  & ({ readonly owner: Ids.OwnerId } | { readonly ownerOf: OwnerOf })

/**
 * Register every terminal tool on the MCP server in context. The call path is compiled once, here; a
 * result is built without re-validating what the call path already checked.
 *
 * @since 0.1.0
 */
export const register = (options: Options) =>
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const caller = yield* ToolCall.make(options)
    const toResult = (outcome: ToolCall.ToolOutcome) =>
      new McpSchema.CallToolResult(ToolRequests.callToolResult(outcome) as any, true)
    for (const tool of Deployment.toolsOf(options.deployment)) {
      const name = tool.name
      yield* server.addTool({
        tool: describe(tool),
        handle: "owner" in options
          ? (payload) => Effect.map(caller.call(options.owner, name, payload), toResult)
          : (payload) =>
            McpSchema.McpServerClient.pipe(
              Effect.flatMap(options.ownerOf),
              Effect.flatMap((owner) => caller.call(owner, name, payload)),
              Effect.map(toResult)
            )
      })
    }
  })

/**
 * A layer registering the terminal tools on the MCP server.
 *
 * @since 0.1.0
 */
export const layer = (options: Options) => Layer.effectDiscard(register(options))
