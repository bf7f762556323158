/**
 * The floor of our contract, for the lean group's cold start: the official SDK's server (as the SDK ships,
 * unbundled, started as its no-op server is) answering `tools/list` with OUR tool list — the definitions our
 * server listed, every `outputSchema` in it, which the client parses and compiles — and each call with the result
 * our server gave to the same call, with no terminal behind it. Spawned with the path of a JSON file
 * `{ tools, results }` that `LeanStart` writes from a run of ours.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"

interface Contract {
  readonly tools: ReadonlyArray<Record<string, unknown>>
  readonly results: Record<string, Record<string, unknown>>
}

const contract = JSON.parse(fs.readFileSync(process.argv[2]!, "utf8")) as Contract
const server = new McpServer({ name: "sdk-contract", version: "0.0.0" })
// the SDK's low-level handlers (McpServer's own take zod schemas): our definitions go out as they are
server.server.registerCapabilities({ tools: {} })
server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...contract.tools] }))
server.server.setRequestHandler(CallToolRequestSchema, (request) =>
  contract.results[request.params.name] ??
    { content: [{ type: "text", text: `no result of ${request.params.name}` }], isError: true })
await server.connect(new StdioServerTransport())
