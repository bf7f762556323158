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
import { CurrentOwner } from "./Owner.js"
import { TerminalToolkit } from "./TerminalTools.js"
import * as ToolCall from "./ToolCall.js"

/**
 * How a call's owner is found from its MCP client.
 *
 * @since 0.1.0
 */
export type OwnerOf = (client: McpSchema.McpServerClient["Type"]) => Effect.Effect<Ids.OwnerId>

/**
 * The MCP description of a tool: its JSON Schema and its annotations.
 *
 * @since 0.1.0
 */
export const describe = (tool: Tool.Any): McpSchema.Tool =>
  new McpSchema.Tool({
    name: tool.name,
    description: tool.description,
    inputSchema: Tool.getJsonSchema(tool as any),
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
 * Register every terminal tool on the MCP server in context.
 *
 * @since 0.1.0
 */
export const register = (options: { readonly maxResultBytes: number; readonly ownerOf: OwnerOf }) =>
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const context = yield* Effect.context<Tool.HandlersFor<typeof TerminalToolkit.tools>>()
    for (const tool of Object.values(TerminalToolkit.tools)) {
      yield* server.addTool({
        tool: describe(tool),
        handle: (payload) =>
          Effect.gen(function*() {
            const client = yield* McpSchema.McpServerClient
            const owner = yield* options.ownerOf(client)
            const outcome = yield* ToolCall.call(tool.name, payload, options).pipe(
              Effect.provide(context),
              Effect.provideService(CurrentOwner, owner)
            )
            return new McpSchema.CallToolResult({
              isError: outcome.isError,
              structuredContent: outcome.structured,
              content: [{ type: "text", text: outcome.text }]
            })
          })
      })
    }
  })

/**
 * A layer registering the terminal tools on the MCP server.
 *
 * @since 0.1.0
 */
export const layer = (options: { readonly maxResultBytes: number; readonly ownerOf: OwnerOf }) =>
  Layer.effectDiscard(register(options))
