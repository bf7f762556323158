/**
 * The server's disk, descriptors and state directory attacked for real (issue 26, findings 9-12), through
 * the built binary: a read-only session that turns recording on; many owners of one client filling the
 * server (a global cap) and its descriptor table (`prlimit --nofile`); symbolic links planted in the state
 * directory; a socket asked for in a shared (1777) directory; an empty `AGENT_TERMINAL_SOCKET`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { built, makeHome, startDaemon } from "../daemon/support.js"
import { attemptLog } from "../support/attempts.js"
import { connectHttp, type HttpServer, startHttpServer, stopHttpServer } from "../support/http.js"
import { bodyOf, cliBin, structured } from "../support/mcp.js"
import { makeWorkspace } from "./support.js"

const record = attemptLog("state")
const scratch: Array<string> = []
const tempDir = (label: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `at-state-${label}-`))
  scratch.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true })
})

const hasBwrap = fs.existsSync("/usr/bin/bwrap")

/** Run the CLI to its end (stdin closed): its exit code and stderr. */
const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ status: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [cliBin, ...args], { env, stdio: ["pipe", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.stdin.end()
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.once("exit", (status) => {
      clearTimeout(timer)
      resolve({ status, stderr })
    })
  })

const withServer = async <A>(
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  use: (server: HttpServer, connect: () => Promise<Client>) => Promise<A>
) => {
  const server = await startHttpServer(args, env)
  const clients: Array<Client> = []
  try {
    return await use(server, async () => {
      const { client } = await connectHttp(server)
      clients.push(client)
      return client
    })
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)))
    await stopHttpServer(server)
  }
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })
  // the facts from structuredContent, the output from the text (sent once, there)
  return { ...structured(result), output: bodyOf(result), isError: result.isError === true } as Record<string, any>
}

describe.runIf(built)("the server's disk, descriptors and state directory", () => {
  it.runIf(hasBwrap)(
    "record: true from a read-only sandbox is refused; the server's own --record still records",
    async () => {
      const workspace = makeWorkspace("state-ro")
      const stateDir = tempDir("ro")
      await withServer(
        ["--sandbox", "read-only", "--workspace", workspace],
        { AGENT_TERMINAL_STATE_DIR: stateDir },
        async (_server, connect) => {
          const client = await connect()
          const refused = await call(client, "terminal_open", { record: true })
          record(
            "mcp --http --sandbox read-only",
            "terminal_open { record: true } (a recording is written to the server's disk)",
            `${refused._tag} (${refused.field}): ${String(refused.message).slice(0, 90)}`,
            refused._tag === "InvalidInput"
          )
          expect(refused).toMatchObject({ isError: true, _tag: "InvalidInput", field: "record" })
          const plain = await call(client, "terminal_open", {})
          expect(plain).toMatchObject({ isError: false, recording: false })
          expect(fs.existsSync(path.join(stateDir, "recordings"))).toBe(false)
        }
      )
      await withServer(
        ["--sandbox", "read-only", "--workspace", workspace, "--record"],
        { AGENT_TERMINAL_STATE_DIR: stateDir },
        async (_server, connect) => {
          const opened = await call(await connect(), "terminal_open", {})
          expect(opened).toMatchObject({ isError: false, recording: true })
        }
      )
    },
    120_000
  )

  it(
    "many owners of one client reach the global cap: LimitReached naming it, and another owner still opens",
    async () => {
      await withServer(["--max-terminals", "8"], {}, async (_server, connect) => {
        const attackers = await Promise.all([connect(), connect(), connect(), connect()])
        const refusals: Array<Record<string, any>> = []
        let opened = 0
        for (let round = 0; round < 4; round++) {
          for (const attacker of attackers) {
            const result = await call(attacker, "terminal_open", {})
            if (result.isError) refusals.push(result)
            else opened++
          }
        }
        const victim = await call(await connect(), "terminal_open", {})
        record(
          "mcp --http --max-terminals 8",
          "4 MCP sessions of one client open terminals in turn, 16 tries",
          `${opened} opened, ${refusals.length} refused: ${refusals[0]?._tag} (${refusals[0]?.message}); ` +
            `another owner's terminal_open: ${victim.isError ? victim._tag : "opened"}`,
          refusals.every((refusal) => refusal._tag === "LimitReached") && !victim.isError
        )
        expect(opened).toBe(7)
        expect(refusals).toHaveLength(9)
        for (const refusal of refusals) {
          expect(refusal).toMatchObject({ _tag: "LimitReached", limit: "terminals", max: 8, scope: "server" })
        }
        expect(refusals[0]!.message).toContain("this server holds at most 8 open terminals")
        expect(victim).toMatchObject({ isError: false, status: { _tag: "running" } })
      })
    },
    120_000
  )

  it(
    "under a small descriptor limit the next open is LimitReached, never forkpty failed; the server answers",
    async () => {
      const token = "t".repeat(40)
      const child = spawn("prlimit", ["--nofile=256", process.execPath, cliBin, "mcp", "--http", "0"], {
        env: { ...process.env, AGENT_TERMINAL_TOKEN: token, AGENT_TERMINAL_STATE_DIR: tempDir("fd") },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      const url = await new Promise<URL>((resolve, reject) => {
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString("utf8")
          const found = /at (http:\/\/\S+\/mcp)/.exec(stderr)
          if (found !== null) resolve(new URL(found[1]!))
        })
        child.once("exit", () => reject(new Error(stderr)))
      })
      const server = { url, token, process: child, stderr: [], exited: new Promise<number | null>(() => {}) }
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      const clients: Array<Client> = []
      try {
        const victim = (await connectHttp(server as unknown as HttpServer)).client
        clients.push(victim)
        const mine = await call(victim, "terminal_open", {})
        expect(mine.isError).toBe(false)
        const errors: Array<Record<string, any>> = []
        let opened = 0
        for (let owner = 0; owner < 6 && errors.length < 3; owner++) {
          const attacker = (await connectHttp(server as unknown as HttpServer)).client
          clients.push(attacker)
          for (let i = 0; i < 30 && errors.length < 3; i++) {
            const result = await call(attacker, "terminal_open", {})
            if (result.isError) errors.push(result)
            else opened++
          }
        }
        record(
          "mcp --http under prlimit --nofile=256",
          "6 MCP sessions open terminals until refused",
          `${opened} opened; then ${errors.map((error) => `${error._tag} (${error.limit})`).join(", ")}`,
          errors.length > 0 && errors.every((error) => error._tag === "LimitReached")
        )
        expect(errors.length).toBeGreaterThan(0)
        for (const error of errors) {
          expect(error).toMatchObject({ _tag: "LimitReached", limit: "file descriptors", scope: "server" })
          expect(String(error.message)).not.toContain("forkpty")
        }
        const echoed = await call(victim, "terminal_send", { sessionId: mine.sessionId, text: "echo still-here" })
        expect(echoed.output).toBe("still-here")
      } finally {
        await Promise.all(clients.map((client) => client.close().catch(() => undefined)))
        child.kill("SIGTERM")
        await exited
      }
    },
    180_000
  )

  it("a symbolic link among the state directory's files is a startup error; its target is unchanged", async () => {
    const target = path.join(tempDir("target"), "precious")
    fs.writeFileSync(target, "do not touch\n", { mode: 0o644 })
    const shared = tempDir("shared")
    fs.chmodSync(shared, 0o755)
    const cases: ReadonlyArray<{ name: string; to: string; args: ReadonlyArray<string> }> = [
      { name: "audit.db", to: target, args: ["mcp", "--http", "0"] },
      { name: "audit.db-wal", to: target, args: ["mcp", "--http", "0"] },
      { name: "recordings", to: shared, args: ["mcp", "--http", "0", "--record"] },
      { name: "daemon.db", to: target, args: ["serve"] },
      { name: "owners", to: shared, args: ["serve"] }
    ]
    for (const { args, name, to } of cases) {
      const home = makeHome()
      scratch.push(home.dir)
      fs.mkdirSync(home.env.AGENT_TERMINAL_STATE_DIR!, { recursive: true, mode: 0o700 })
      fs.symlinkSync(to, path.join(home.env.AGENT_TERMINAL_STATE_DIR!, name))
      const result = await run(args, { ...home.env, AGENT_TERMINAL_TOKEN: "t".repeat(40) })
      record(
        `${args.slice(0, 2).join(" ")}`,
        `<state dir>/${name} is a symbolic link to ${
          fs.statSync(to).isDirectory() ? "a 0755 directory" : "a 0644 file"
        }`,
        `exit ${result.status}: ${result.stderr.trim().split("\n").pop()?.slice(0, 120)}`,
        result.status !== 0
      )
      expect(result.status).toBe(2)
      expect(result.stderr).toContain(`${name} is a symbolic link`)
      expect(fs.statSync(target).mode & 0o777).toBe(0o644)
      expect(fs.readFileSync(target, "utf8")).toBe("do not touch\n")
      expect(fs.statSync(shared).mode & 0o777).toBe(0o755)
      expect(fs.readdirSync(shared)).toEqual([])
    }
  }, 120_000)

  it(
    "a socket asked for in a shared 1777 directory is refused with the reason, the directory's mode unchanged",
    async () => {
      const shared = tempDir("sticky")
      fs.chmodSync(shared, 0o1777)
      const home = makeHome()
      scratch.push(home.dir)
      const socket = path.join(shared, "x.sock")
      const result = await run(["serve", "--socket", socket], home.env)
      record(
        "serve --socket",
        "a socket in a root-owned 1777 directory",
        `exit ${result.status}: ${result.stderr.trim().split("\n").pop()?.slice(0, 140)}; directory mode ${
          (fs.statSync(shared).mode & 0o7777).toString(8)
        }`,
        (fs.statSync(shared).mode & 0o7777) === 0o1777
      )
      expect(result.status).not.toBe(0)
      expect(result.stderr).toContain("is open to others (mode 1777)")
      expect(fs.statSync(shared).mode & 0o7777).toBe(0o1777)
      expect(fs.existsSync(socket)).toBe(false)
    },
    60_000
  )

  it("an empty AGENT_TERMINAL_SOCKET means the default socket", async () => {
    const home = makeHome()
    scratch.push(home.dir)
    const env = { ...home.env, AGENT_TERMINAL_SOCKET: "", XDG_RUNTIME_DIR: "" }
    const daemon = await startDaemon(env)
    try {
      expect(daemon.log()).toContain(`serving on ${path.join(env.AGENT_TERMINAL_STATE_DIR!, "agent-terminal.sock")}`)
    } finally {
      await daemon.stop()
    }
  }, 60_000)
})
