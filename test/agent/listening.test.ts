/**
 * `waitFor: {listening}` as a model uses it, over a real MCP client (issue 30): a dev server's readiness from the
 * kernel, not from its banner — in the foreground, in a background task, and inside the sandbox's own network
 * namespace (`--network isolated`), where `/proc/<pid>/net` is the namespace's.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bodyOf, connectStdio, structured, textOf } from "../support/mcp.js"

const hasNetworkTool = ["pasta", "slirp4netns"].some((name) =>
  (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && fs.existsSync(`${dir}/${name}`))
)

type Client = Awaited<ReturnType<typeof connectStdio>>["client"]

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })

/** A dev server that prints nothing for a second, then listens (its banner, if any, is not what is awaited). */
const server = (port: number | string) =>
  `sleep 1; exec python3 -c 'import http.server as h; h.HTTPServer(("127.0.0.1", ${port}), h.SimpleHTTPRequestHandler)` +
  `.serve_forever()'`

/**
 * A server in the foreground, then one in a background task. `shared`: the owner's terminals share a network
 * (no sandbox), so a second terminal fetches from the first's server; in the sandbox each terminal has a
 * network namespace of its own, and the match itself is the proof: its socket is found only in the tables of
 * that namespace (`/proc/<pid>/net/tcp`), not in the host's.
 */
const checkServer = async (client: Client, shared: boolean) => {
  const opened = structured(await call(client, "terminal_open", {}))
  const foreground = await call(client, "terminal_send", {
    sessionId: opened.sessionId,
    text: server(0),
    waitFor: { listening: true }
  })
  expect(structured(foreground)).toMatchObject({
    waitReason: "matched",
    match: { listening: { name: "python3", protocol: "tcp", address: "127.0.0.1" } }
  })
  const port = structured(foreground).match.listening.port as number
  expect(textOf(foreground)).toContain(`listening on 127.0.0.1:${port}]`)
  const other = structured(await call(client, "terminal_open", {}))
  if (shared) {
    const fetched = await call(client, "terminal_send", {
      sessionId: other.sessionId,
      text: `python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:${port}/").status)'`
    })
    expect(bodyOf(fetched)).toBe("200")
  }

  const background = await call(client, "terminal_send", {
    sessionId: other.sessionId,
    text: server(0),
    run_in_background: true,
    waitFor: { listening: true }
  })
  expect(structured(background)).toMatchObject({ waitReason: "matched", match: { listening: { name: "python3" } } })
  if (shared) expect(structured(background).match.listening.port).not.toBe(port)
  const taskId = structured(background).taskId
  expect(structured(await call(client, "task_output", { taskId }))).toMatchObject({ status: "running" })
  expect(structured(await call(client, "task_kill", { taskId }))).toMatchObject({ status: "killed" })
}

describe("waitFor listening over MCP", () => {
  it("a server in the foreground and in a background task: matched, naming the process and its port", async () => {
    const { client } = await connectStdio([])
    try {
      await checkServer(client, true)
    } finally {
      await client.close()
    }
  }, 60_000)

  it.skipIf(!hasNetworkTool)(
    `inside --sandbox workspace-write --network isolated (its own network namespace)${
      hasNetworkTool ? "" : " (skipped: no pasta or slirp4netns)"
    }`,
    async () => {
      const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "at-listen-")))
      const { client } = await connectStdio([
        "--sandbox",
        "workspace-write",
        "--workspace",
        workspace,
        "--network",
        "isolated"
      ])
      try {
        await checkServer(client, false)
      } finally {
        await client.close()
        fs.rmSync(workspace, { recursive: true, force: true })
      }
    },
    60_000
  )
})
