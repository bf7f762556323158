import { Instructions } from "@agent-terminal/tools"
import { describe, expect, it } from "@effect/vitest"
import { connectHttp, startHttpServer, stopHttpServer } from "../support/http.js"
import { structured } from "../support/mcp.js"

describe("the agent's side over Streamable HTTP with a real client", () => {
  it("instructions and the deployment switches apply as on stdio", async () => {
    const server = await startHttpServer(["--tools", "terminal,tasks", "--no-background"])
    try {
      const { client } = await connectHttp(server)
      try {
        const deployment = { tools: ["terminal", "tasks"] as const, background: false }
        expect(client.getInstructions()).toBe(Instructions.text(deployment))
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name)).not.toContain("exec")
        expect(tools.map((tool) => tool.name)).toContain("task_output")
        const send = tools.find((tool) => tool.name === "terminal_send")!
        expect(Object.keys(send.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["waitFor", "steps"]))
        expect(Object.keys(send.inputSchema.properties ?? {})).not.toContain("run_in_background")
        const exec = await client.callTool({ name: "exec", arguments: { command: "true" } })
        expect(structured(exec)).toMatchObject({ _tag: "InvalidInput", field: "name" })
        const opened = structured(await client.callTool({ name: "terminal_open", arguments: {} }))
        const sent = await client.callTool({
          name: "terminal_send",
          arguments: {
            sessionId: opened.sessionId,
            text: "sleep 1; echo up-and-running; sleep 30",
            waitFor: { text: "up-and-running" }
          }
        })
        expect(structured(sent)).toMatchObject({ waitReason: "matched", match: { text: "up-and-running" } })
      } finally {
        await client.close()
      }
    } finally {
      await stopHttpServer(server)
    }
  }, 60_000)
})
