/**
 * The sandbox and the environment policy through the real binary: `agent-terminal mcp --sandbox … --workspace …`
 * (and the `AGENT_TERMINAL_*` fallbacks) over a real MCP client; the server's own process environment is the
 * host environment the policy cleans (SCENARIOS 34, 35).
 */
import { describe, expect, it } from "@effect/vitest"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { bodyOf, cliBin, connectStdio, structured } from "../support/mcp.js"
import { makeWorkspace } from "./support.js"

const workspace = makeWorkspace("mcp")
const emptyBin = makeWorkspace("no-bwrap")

const hasNetworkTool = ["pasta", "slirp4netns"].some((name) =>
  (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && fs.existsSync(`${dir}/${name}`))
)

const runMcp = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = childProcess.execFile(process.execPath, [cliBin, "mcp", ...args], {
      env: { ...(process.env as Record<string, string>), ...env },
      timeout: 20_000
    }, (error, _stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stderr }))
    child.stdin?.end()
  })

const call = async (client: Awaited<ReturnType<typeof connectStdio>>["client"], name: string, args: object) =>
  client.callTool({ name, arguments: args as Record<string, unknown> })

describe("agent-terminal mcp with a sandbox", () => {
  it("--sandbox workspace-write --workspace: sessions start in the workspace and cannot write outside it", async () => {
    const { client } = await connectStdio(["--sandbox", "workspace-write", "--workspace", workspace])
    try {
      const opened = await call(client, "terminal_open", {})
      expect(opened.isError).toBeFalsy()
      const { sessionId } = structured(opened)
      const inside = await call(client, "terminal_send", { sessionId, text: "pwd; echo ok > mcp.txt; touch /etc/x" })
      expect(bodyOf(inside)).toContain(workspace)
      expect(bodyOf(inside)).toContain("Read-only file system")
      expect(fs.readFileSync(path.join(workspace, "mcp.txt"), "utf8")).toBe("ok\n")
      const outside = await call(client, "terminal_open", { cwd: "/etc" })
      expect(outside.isError).toBe(true)
      expect(structured(outside)).toMatchObject({ _tag: "InvalidInput", field: "cwd" })
    } finally {
      await client.close()
    }
  })

  it("AGENT_TERMINAL_SANDBOX / AGENT_TERMINAL_WORKSPACE configure it without flags", async () => {
    const { client } = await connectStdio([], {
      AGENT_TERMINAL_SANDBOX: "read-only",
      AGENT_TERMINAL_WORKSPACE: workspace
    })
    try {
      const { sessionId } = structured(await call(client, "terminal_open", {}))
      const write = await call(client, "terminal_send", { sessionId, text: "touch in-workspace" })
      expect(bodyOf(write)).toContain("Read-only file system")
      expect(fs.existsSync(path.join(workspace, "in-workspace"))).toBe(false)
    } finally {
      await client.close()
    }
  })

  it("without bwrap, terminal_open fails with SandboxUnavailable and the reason", async () => {
    const { client } = await connectStdio(["--sandbox", "read-only", "--workspace", workspace], { PATH: emptyBin })
    try {
      const opened = await call(client, "terminal_open", {})
      expect(opened.isError).toBe(true)
      expect(structured(opened)).toMatchObject({ _tag: "SandboxUnavailable", mode: "read-only" })
      expect(structured(opened).reason).toContain("not installed or not on PATH")
      const listed = await call(client, "terminal_list", {})
      expect(structured(listed).sessions).toEqual([])
    } finally {
      await client.close()
    }
  })

  it("the server's own credentials and injection variables never reach a session (34, 35)", async () => {
    const { client } = await connectStdio(["--sandbox", "workspace-write", "--workspace", workspace], {
      FOO_TOKEN: "leaked-token",
      AWS_SECRET_ACCESS_KEY: "leaked-aws",
      DB_PASSWORD: "leaked-db",
      BASH_ENV: "/dev/null",
      NODE_OPTIONS: "--max-old-space-size=1024",
      "BASH_FUNC_evil%%": "() {  echo leaked-function\n}"
    })
    try {
      const { sessionId } = structured(await call(client, "terminal_open", {}))
      const env = await call(client, "terminal_send", {
        sessionId,
        text: "env | grep -cE '^(FOO_TOKEN|AWS_SECRET_ACCESS_KEY|DB_PASSWORD|BASH_ENV|NODE_OPTIONS|BASH_FUNC_)'; evil"
      })
      expect(bodyOf(env).split("\n")[0]).toBe("0")
      expect(bodyOf(env)).not.toContain("leaked")
    } finally {
      await client.close()
    }
  })

  it.skipIf(!hasNetworkTool)(
    `--network isolated / AGENT_TERMINAL_NETWORK: the host's loopback is unreachable${
      hasNetworkTool ? "" : " (skipped: no pasta or slirp4netns)"
    }`,
    async () => {
      let connections = 0
      const server = net.createServer((socket) => {
        connections++
        socket.end("hello\n")
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const port = (server.address() as net.AddressInfo).port
      for (
        const [args, env] of [[["--network", "isolated"], {}], [[], { AGENT_TERMINAL_NETWORK: "isolated" }]] as const
      ) {
        const { client } = await connectStdio(["--sandbox", "workspace-write", "--workspace", workspace, ...args], env)
        try {
          const opened = await call(client, "terminal_open", {})
          expect(opened.isError).toBeFalsy()
          expect(structured(opened).limits).toBeTypeOf("object")
          const { sessionId } = structured(opened)
          const attempt = await call(client, "terminal_send", {
            sessionId,
            text: `(exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3) 2>&1 || echo REFUSED`
          })
          expect(bodyOf(attempt)).toContain("REFUSED")
        } finally {
          await client.close()
        }
      }
      expect(connections).toBe(0)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  )

  it("--deny-read and AGENT_TERMINAL_DENY_READ mask more paths", async () => {
    fs.mkdirSync(path.join(process.cwd(), "build"), { recursive: true })
    const dir = fs.mkdtempSync(path.join(process.cwd(), "build", "at-deny-"))
    const first = path.join(dir, "first.txt")
    const second = path.join(dir, "second.txt")
    fs.writeFileSync(first, "planted\n")
    fs.writeFileSync(second, "planted\n")
    try {
      for (
        const [args, env] of [[["--deny-read", first, "--deny-read", second], {}], [[], {
          AGENT_TERMINAL_DENY_READ: `${first}:${second}`
        }]] as const
      ) {
        const { client } = await connectStdio(["--sandbox", "read-only", "--workspace", workspace, ...args], env)
        try {
          const { sessionId } = structured(await call(client, "terminal_open", {}))
          const read = await call(client, "terminal_send", { sessionId, text: `cat ${first} ${second} | wc -c` })
          expect(bodyOf(read)).toBe("0")
        } finally {
          await client.close()
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("an invalid network mode or limit is refused at startup, naming the flag and the variable", async () => {
    const bogus = await runMcp([], { AGENT_TERMINAL_NETWORK: "bogus" })
    expect(bogus.code).not.toBe(0)
    expect(bogus.stderr).toContain("AGENT_TERMINAL_NETWORK")
    const pids = await runMcp(["--pids-max", "-1"])
    expect(pids.code).toBe(2)
    expect(pids.stderr).toContain("pidsMax")
    expect(pids.stderr).toContain("--pids-max / AGENT_TERMINAL_PIDS_MAX")
    const memory = await runMcp([], { AGENT_TERMINAL_MEMORY_MAX_BYTES: "-5" })
    expect(memory.code).toBe(2)
    expect(memory.stderr).toContain("--memory-max-bytes / AGENT_TERMINAL_MEMORY_MAX_BYTES")
  })

  it("an invalid sandbox configuration is refused at startup, naming the flag and the variable", async () => {
    const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = childProcess.execFile(process.execPath, [cliBin, "mcp", ...args], {
          env: { ...(process.env as Record<string, string>), ...env },
          timeout: 20_000
        }, (error, _stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stderr }))
        child.stdin?.end()
      })
    const missing = await run(["--sandbox", "workspace-write", "--workspace", "/nonexistent/ws"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(
      "invalid configuration workspace: /nonexistent/ws is not an existing directory (--workspace / AGENT_TERMINAL_WORKSPACE)"
    )
    const root = await run([], { AGENT_TERMINAL_SANDBOX: "workspace-write", AGENT_TERMINAL_WORKSPACE: "/" })
    expect(root.code).toBe(2)
    expect(root.stderr).toContain("workspace-write cannot make / writable")
    const bogus = await run([], { AGENT_TERMINAL_SANDBOX: "bogus" })
    expect(bogus.code).not.toBe(0)
    expect(bogus.stderr).toContain("AGENT_TERMINAL_SANDBOX")
  })
})
