/**
 * The terminal tools on an `@effect/ai` MCP server: each call runs as the owner of its connection and
 * answers `isError: true` with the error's `_tag` and message on failure.
 *
 * @since 0.4.0
 */
import type { Ids } from "@agent-terminal/core"
import { Deployment, McpTools, ToolCall } from "@agent-terminal/tools"
import { McpSchema, McpServer } from "@effect/ai"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ToolRequests from "./internal/toolRequests.js"

/**
 * How a call's owner is found from its MCP client.
 *
 * @since 0.4.0
 */
export type OwnerOf = (client: McpSchema.McpServerClient["Type"]) => Effect.Effect<Ids.OwnerId>

/**
 * How the calls of a server find their owner: one owner for every call (a stdio connection, an HTTP MCP
 * session), or `ownerOf` asked per call.
 *
 * @since 0.4.0
 */
export type Options =
  & { readonly maxResultBytes: number; readonly deployment?: Deployment.Deployment | undefined }
  & ({ readonly owner: Ids.OwnerId } | { readonly ownerOf: OwnerOf })

/**
 * Register every terminal tool on the MCP server in context. The call path is compiled once, here; a
 * result is built without re-validating what the call path already checked.
 *
 * @since 0.4.0
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
        tool: McpTools.describe(tool),
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
 * @since 0.4.0
 */
export const layer = (options: Options) => Layer.effectDiscard(register(options))
