import { describe, expect, it } from "@effect/vitest"
import * as Deployment from "../src/Deployment.js"
import * as McpTools from "../src/McpTools.js"

const openSchema = (deployment?: Deployment.Deployment) =>
  (McpTools.list(deployment).tools.find((tool) => (tool as { name: string }).name === "terminal_open") as {
    inputSchema: { properties: Record<string, unknown> }
  }).inputSchema

describe("Deployment.machines (a fleet over NATS)", () => {
  it("adds machine and labels to terminal_open, and nothing else", () => {
    const fleet = McpTools.list({ ...Deployment.all, machines: true })
    const one = McpTools.list(Deployment.all)
    expect(Object.keys(openSchema({ ...Deployment.all, machines: true }).properties)).toEqual([
      ...Object.keys(openSchema(Deployment.all).properties),
      "machine",
      "labels"
    ])
    const others = (list: typeof one) =>
      JSON.stringify(list.tools.filter((tool) => (tool as { name: string }).name !== "terminal_open"))
    expect(others(fleet)).toBe(others(one))
  })

  it("leaves the tool list of one machine byte-identical", () => {
    expect(JSON.stringify(McpTools.list({ ...Deployment.all, machines: false }))).toBe(
      JSON.stringify(McpTools.list(Deployment.all))
    )
    expect(JSON.stringify(openSchema(Deployment.all))).not.toContain("machine")
  })
})
