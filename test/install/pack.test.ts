import { afterAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { bodyOf, structured, textOf } from "../support/mcp.js"
// @ts-expect-error: a plain .mjs script of the repository, without types
import { publishable } from "../../scripts/pack.mjs"

const root = path.resolve(__dirname, "../..")

/**
 * A command run to its end without blocking the test worker's event loop: the npm install builds
 * better-sqlite3 from source and can take minutes on a loaded machine, and a worker blocked that long
 * misses vitest's own RPC deadline (60 s: "Timeout calling onTaskUpdate", which fails the whole run).
 */
const run = async (command: string, args: ReadonlyArray<string>, cwd: string): Promise<string> =>
  (await promisify(execFile)(command, [...args], { cwd, encoding: "utf8", maxBuffer: 64 << 20 })).stdout

describe("the packed packages install with plain npm and serve MCP", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-terminal-pack-"))
  const packs = path.join(dir, "packs")
  const app = path.join(dir, "app")
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("pnpm pack of every package, npm install of the tarballs into an empty directory", async () => {
    fs.mkdirSync(app)
    const tarballs = (await run(process.execPath, [path.join(root, "scripts/pack.mjs"), packs], root))
      .split("\n").filter((line) => line !== "")
    expect(tarballs).toHaveLength(publishable.length)
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "fresh-app", private: true }))
    // The registry is for the third-party dependencies only: ours come from the tarballs.
    await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs], app)
    expect(fs.existsSync(path.join(app, "node_modules/.bin/agent-terminal"))).toBe(true)

    for (const pkg of publishable as Array<string>) {
      const source = JSON.parse(fs.readFileSync(path.join(root, pkg, "package.json"), "utf8"))
      const installed = JSON.parse(
        fs.readFileSync(path.join(app, "node_modules", source.name, "package.json"), "utf8")
      )
      expect(installed, source.name).toMatchObject({
        description: expect.stringMatching(/\w/),
        license: "MIT",
        repository: { type: "git", url: expect.stringMatching(/^git\+https:/) },
        engines: { node: ">=20" },
        files: expect.arrayContaining(["dist"]),
        keywords: expect.arrayContaining(["terminal"])
      })
      if (pkg !== "apps/cli") {
        expect(fs.existsSync(path.join(app, "node_modules", source.name, installed.types)), source.name).toBe(true)
      }
      const workspaceRefs = Object.entries(installed.dependencies ?? {}).filter(([, v]) => String(v).includes(":"))
      expect(workspaceRefs, source.name).toEqual([])
      expect(fs.existsSync(path.join(app, "node_modules", source.name, "LICENSE")), source.name).toBe(true)
    }
  }, 600_000)

  it("the installed CLI is the bundle (its chunks beside bin.js), and the reaper's native helper was built", () => {
    const dist = path.join(app, "node_modules/agent-terminal/dist")
    expect(fs.readdirSync(dist).filter((name) => /^chunk-\w+\.js$/.test(name)).length).toBeGreaterThan(0)
    expect(fs.readFileSync(path.join(dist, "bin.js"), "utf8")).toMatch(/^#!\/usr\/bin\/env node/)
    const helper = path.join(app, "node_modules/@agent-terminal/node/build/native/agent-terminal-reaper")
    expect(fs.statSync(helper).mode & 0o111).not.toBe(0)
  })

  it("npx agent-terminal mcp serves a real MCP client: open, echo, close", async () => {
    const transport = new StdioClientTransport({
      command: "npx",
      args: ["agent-terminal", "mcp"],
      cwd: app,
      env: { ...(process.env as Record<string, string>) },
      stderr: "pipe"
    })
    const client = new Client({ name: "pack-test", version: "0.0.0" })
    await client.connect(transport)
    try {
      const opened = await client.callTool({ name: "terminal_open", arguments: { cwd: app } })
      expect(opened.isError ?? false).toBe(false)
      const { sessionId } = structured(opened)
      const sent = await client.callTool({
        name: "terminal_send",
        arguments: { sessionId, text: "echo packed-$((6*7))" }
      })
      expect(structured(sent)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect(bodyOf(sent)).toBe("packed-42")
      expect(textOf(sent)).toContain("packed-42")
      const closed = await client.callTool({ name: "terminal_close", arguments: { sessionId } })
      expect(structured(closed)).toMatchObject({ outcome: "closed", survivors: [] })
    } finally {
      await client.close()
    }
  }, 120_000)

  it("npx agent-terminal demo runs", async () => {
    const out = await run("npx", ["agent-terminal", "demo"], app)
    expect(out).toContain("wait: stdin_read")
    expect(out).toContain("close: closed, survivors: 0")
  }, 120_000)
})
