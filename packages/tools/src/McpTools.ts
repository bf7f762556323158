/**
 * The terminal tools as MCP describes them: each tool's JSON Schema and annotations (`describe`), and the
 * answer to `tools/list` (`list`). The transports that serve them live in `@agent-terminal/server`.
 *
 * @since 0.1.0
 */
import { McpSchema, Tool } from "@effect/ai"
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import * as Deployment from "./Deployment.js"
import * as Contract from "./internal/contract.js"

/**
 * The MCP description of a tool: its JSON Schema (as a model reads it: `internal/contract.ts`) and its
 * annotations.
 *
 * @since 0.1.0
 */
export const describe = (tool: Tool.Any): McpSchema.Tool => {
  let described = descriptions.get(tool)
  if (described === undefined) {
    described = describeNow(tool)
    descriptions.set(tool, described)
  }
  return described
}

/**
 * Each tool's description, made once: a server's start asks for it twice (`register`, then `list` for the
 * transport's `tools/list`), and its JSON Schema is most of a start's tool work.
 */
const descriptions = new WeakMap<Tool.Any, McpSchema.Tool>()

const describeNow = (tool: Tool.Any): McpSchema.Tool =>
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
