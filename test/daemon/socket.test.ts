import { RemoteTerminal } from "@agent-terminal/daemon"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { built, cliBin, connectMcp, makeHome, startDaemon, waitUntil } from "./support.js"

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const home = () => {
  const made = makeHome()
  cleanups.push(made.dispose)
  return made
}

/** Run the CLI to its end without blocking this worker (stdin empty). */
const run = (env: Record<string, string>, args: ReadonlyArray<string>) =>
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

const daemon = async (env: Record<string, string>, args: ReadonlyArray<string> = []) => {
  const started = await startDaemon(env, args)
  cleanups.push(() => started.stop())
  return started
}

describe.runIf(built)("the daemon's socket", () => {
  it("is 0600 in a 0700 directory; a second daemon on it refuses to start; SIGTERM removes it", async () => {
    const { env, socket } = home()
    const first = await daemon(env)
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600)
    expect(fs.statSync(path.dirname(socket)).mode & 0o777).toBe(0o700)
    expect(fs.statSync(path.join(env.AGENT_TERMINAL_STATE_DIR!, "daemon.db")).mode & 0o777).toBe(0o600)
    const second = await run(env, ["serve"])
    expect(second.status).toBe(1)
    expect(second.stderr).toContain("another agent-terminal daemon serves (or is starting on) this socket")
    // the first one still serves
    const mcp = await connectMcp(env, ["--daemon"])
    cleanups.push(() => mcp.client.close())
    expect((await mcp.call("terminal_list")).sessions).toEqual([])
    await mcp.client.close()
    await first.stop()
    expect(await first.exited).toMatchObject({ code: 0 })
    expect(fs.existsSync(socket)).toBe(false)
  })

  it("the stale socket of a dead daemon is detected and replaced", async () => {
    const { env, socket } = home()
    const first = await daemon(env)
    process.kill(first.pid, "SIGKILL")
    await first.exited
    expect(fs.statSync(socket).isSocket()).toBe(true)
    const next = await daemon(env)
    expect(next.log()).toContain("the stale socket of a dead daemon")
    const mcp = await connectMcp(env, ["--daemon"])
    cleanups.push(() => mcp.client.close())
    expect((await mcp.call("terminal_list")).isError).toBe(false)
  })

  it("two daemons started at once on one socket: exactly one serves", async () => {
    const { env } = home()
    const start = () =>
      new Promise<{ code: number | null; stderr: string; pid: number }>((resolve) => {
        const child = spawn(process.execPath, [cliBin, "serve"], { env, stdio: ["ignore", "ignore", "pipe"] })
        let stderr = ""
        child.stderr.on("data", (chunk) => (stderr += chunk))
        cleanups.push(() => {
          child.kill("SIGTERM")
        })
        const serving = setInterval(() => {
          if (stderr.includes("daemon: serving on")) {
            clearInterval(serving)
            resolve({ code: null, stderr, pid: child.pid! })
          }
        }, 20)
        child.once("exit", (code) => {
          clearInterval(serving)
          resolve({ code, stderr, pid: child.pid! })
        })
      })
    const outcomes = await Promise.all([start(), start()])
    expect(outcomes.filter((outcome) => outcome.code === null)).toHaveLength(1)
    expect(outcomes.filter((outcome) => outcome.code === 1)).toHaveLength(1)
  })

  it("a protocol version mismatch is a clear error naming both versions", async () => {
    const { env, socket } = home()
    await daemon(env)
    const error = await Effect.runPromise(
      RemoteTerminal.connect({ socket, protocolVersion: 999 }).pipe(Effect.scoped, Effect.flip)
    )
    expect(error._tag).toBe("ProtocolMismatch")
    expect(error.message).toContain("this client speaks agent-terminal protocol 999, the daemon speaks 3")
  })

  it("no daemon: mcp --daemon says so and exits 1; --daemon auto starts one detached and uses it", async () => {
    const { env, socket } = home()
    const refused = await run(env, ["mcp", "--daemon"])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain(`no agent-terminal daemon answers at ${socket}`)
    const mcp = await connectMcp(env, ["--daemon", "auto"])
    const opened = await mcp.call("terminal_open", {})
    expect(opened.isError).toBe(false)
    const pid = Number(
      fs.readFileSync(path.join(env.AGENT_TERMINAL_STATE_DIR!, "daemon.log"), "utf8").match(
        /serving on \S+ \(pid (\d+)/
      )?.[1]
    )
    cleanups.push(async () => {
      process.kill(pid, "SIGTERM")
      await waitUntil(() => !fs.existsSync(`/proc/${pid}`), 10_000)
    })
    expect(pid).toBeGreaterThan(1)
    await mcp.client.close()
  })

  it("--daemon auto whose daemon fails to start: the first line of the daemon's error, at once, not a timeout", async () => {
    const { env } = home()
    // a setting only the daemon reads, refused by it: it exits at its start, as one that cannot load a native
    // module built for another Node version does
    const refused = await run({ ...env, AGENT_TERMINAL_DETACHED_TTL_MS: "-1" }, ["mcp", "--daemon", "auto"])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain("the daemon started for it exited with 2 before answering")
    // (a daemon that does not answer within 20 s is said differently: this one's exit ended the wait)
    expect(refused.stderr).toContain("invalid configuration detachedTtl: must be positive, got -1")
  })
})
