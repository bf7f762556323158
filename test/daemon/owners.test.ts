import { afterEach, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import {
  built,
  cliBin,
  connectMcp,
  killIdentities,
  makeHome,
  sleep,
  startDaemon,
  startTimeOf,
  stillAlive,
  waitUntil
} from "./support.js"

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const setUp = async (daemonArgs: ReadonlyArray<string> = []) => {
  const home = makeHome()
  cleanups.push(home.dispose)
  const daemon = await startDaemon(home.env, daemonArgs)
  cleanups.push(() => daemon.stop())
  const client = async (args: ReadonlyArray<string>) => {
    const mcp = await connectMcp(home.env, ["--daemon", ...args])
    cleanups.push(() => mcp.client.close().catch(() => {}))
    return mcp
  }
  return { home, daemon, client }
}

const identityOf = (pid: number) => ({ pid, startTime: startTimeOf(pid)!, comm: "shell" })

describe.runIf(built)("owners of the daemon's terminals (43)", () => {
  it("kill -9 of an mcp --daemon client, then a new client as the same owner: its terminals, a REPL's variable, a task's output", async () => {
    const { client } = await setUp()
    const first = await client(["--owner", "alice"])
    const opened = await first.call("terminal_open", { name: "repl" })
    const python = await first.call("terminal_send", { sessionId: opened.sessionId, text: "python3 -q" })
    expect(python).toMatchObject({ waitReason: "stdin_read" })
    await first.call("terminal_send", { sessionId: opened.sessionId, text: "x = 6 * 7" })
    const shell = await first.call("terminal_open", { name: "builds" })
    const task = await first.call("terminal_send", {
      sessionId: shell.sessionId,
      text: "sleep 1; echo built-ok",
      run_in_background: true
    })
    expect(task.taskId).toMatch(/^t-/)

    process.kill(first.pid, "SIGKILL")
    await sleep(300)

    const second = await client(["--owner", "alice"])
    const listed = await second.call("terminal_list")
    expect(listed.sessions.map((s: { name: string }) => s.name).sort()).toEqual(["builds", "repl"])
    const printed = await second.call("terminal_send", { sessionId: opened.sessionId, text: "print(x)" })
    expect(printed).toMatchObject({ output: "42\n>>> ", waitReason: "stdin_read" })
    const output = await second.call("task_output", { taskId: task.taskId, wait: true, timeoutMs: 15_000 })
    expect(output).toMatchObject({ status: "completed" })
    expect(output.output).toContain("built-ok")
    const tasks = await second.call("process", { action: "list" })
    expect(tasks.tasks.map((t: { taskId: string }) => t.taskId)).toContain(task.taskId)
  })

  it("a named owner's send in flight when its client is killed goes on in the daemon", async () => {
    const { client } = await setUp()
    const first = await client(["--owner", "erin"])
    const opened = await first.call("terminal_open", {})
    // not awaited: the client dies while the daemon runs this send
    void first.call("terminal_send", { sessionId: opened.sessionId, text: "sleep 2; echo survived-the-client" })
      .catch(() => {})
    await sleep(700)
    process.kill(first.pid, "SIGKILL")
    const second = await client(["--owner", "erin"])
    const finished = await waitUntil(
      async () => {
        const read = await second.call("terminal_read", { sessionId: opened.sessionId })
        return String(read.text).split("\n").includes("survived-the-client")
      },
      15_000,
      200
    )
    expect(finished).toBe(true)
  })

  it("an anonymous client's disconnect closes its terminals", async () => {
    const { client } = await setUp()
    const anonymous = await client([])
    const opened = await anonymous.call("terminal_open", {})
    const shell = identityOf(opened.pid)
    expect(stillAlive(shell)).toBe(true)
    await anonymous.client.close()
    expect(await waitUntil(() => !stillAlive(shell), 10_000)).toBe(true)
    const later = await client([])
    expect((await later.call("terminal_list")).sessions).toEqual([])
  })

  it("a named owner's terminal is kept while it is away, then closed after --detached-ttl", async () => {
    const { client } = await setUp(["--detached-ttl", "2500"])
    const bob = await client(["--owner", "bob"])
    const opened = await bob.call("terminal_open", {})
    const shell = identityOf(opened.pid)
    await bob.client.close()
    await sleep(800)
    expect(stillAlive(shell)).toBe(true)
    cleanups.push(() => killIdentities([shell]))
    expect(await waitUntil(() => !stillAlive(shell), 15_000)).toBe(true)
    const back = await client(["--owner", "bob"])
    expect((await back.call("terminal_list")).sessions).toEqual([])
  })

  it("a named owner that comes back within the TTL keeps its terminal", async () => {
    const { client } = await setUp(["--detached-ttl", "6000"])
    const carol = await client(["--owner", "carol"])
    const opened = await carol.call("terminal_open", {})
    const shell = identityOf(opened.pid)
    await carol.client.close()
    const back = await client(["--owner", "carol"])
    await sleep(6_500)
    expect(stillAlive(shell)).toBe(true)
    expect((await back.call("terminal_list")).sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([
      opened.sessionId
    ])
  })

  it("two owners over one socket cannot see or drive each other's terminals", async () => {
    const { client } = await setUp()
    const alice = await client(["--owner", "alice"])
    const eve = await client(["--owner", "eve"])
    const opened = await alice.call("terminal_open", {})
    expect((await eve.call("terminal_list")).sessions).toEqual([])
    for (
      const [tool, args] of [
        ["terminal_send", { sessionId: opened.sessionId, text: "echo pwned" }],
        ["terminal_read", { sessionId: opened.sessionId }],
        ["terminal_signal", { sessionId: opened.sessionId, signal: "SIGINT" }],
        ["terminal_close", { sessionId: opened.sessionId }]
      ] as const
    ) {
      const refused = await eve.call(tool, args)
      expect(refused.isError, tool).toBe(true)
      expect(refused._tag, tool).toBe("ForeignSession")
    }
    const read = await alice.call("terminal_read", { sessionId: opened.sessionId })
    expect(read.text).not.toContain("pwned")
    expect((await alice.call("terminal_list")).sessions).toHaveLength(1)
  })

  it("an owner's secret is checked: a known name with another secret is refused", async () => {
    const { client, home } = await setUp()
    const first = await client(["--owner", "dave"])
    await first.call("terminal_list")
    const secretFile = `${home.dir}/wrong.secret`
    fs.writeFileSync(secretFile, "not-the-secret-the-daemon-issued\n")
    await expect(connectMcp(home.env, ["--daemon", "--owner", "dave", "--owner-secret-file", secretFile])).rejects
      .toThrow()
  })

  it("--owner-secret-file: a file not there yet keeps the secret the daemon issues; an empty or unreadable one is an error naming it", async () => {
    const { client, home } = await setUp()
    const secretFile = `${home.dir}/erin.secret`
    const first = await client(["--owner", "erin", "--owner-secret-file", secretFile])
    await first.call("terminal_open", { name: "kept" })
    expect(fs.readFileSync(secretFile, "utf8").trim()).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600)
    await first.client.close()
    const again = await client(["--owner", "erin", "--owner-secret-file", secretFile])
    expect((await again.call("terminal_list")).sessions.map((s: { name: string }) => s.name)).toEqual(["kept"])

    const run = (file: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [cliBin, "mcp", "--daemon", "--owner", "erin", "--owner-secret-file", file],
          { env: home.env, timeout: 20_000 },
          (error, _stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number | null), stderr })
        )
        child.stdin?.end()
      })
    const empty = `${home.dir}/empty.secret`
    fs.writeFileSync(empty, "\n")
    const refused = await run(empty)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`${empty} is empty`)
    const unreadable = await run(home.dir)
    expect(unreadable.code).toBe(1)
    expect(unreadable.stderr).toContain(`${home.dir} cannot be read (EISDIR)`)
    // the attack: a device that never ends its read, and a file far larger than any secret, are refused at once
    const endless = await run("/dev/zero")
    expect(endless.code).toBe(1)
    expect(endless.stderr).toContain("/dev/zero holds more than 4096 bytes")
    const huge = `${home.dir}/huge.secret`
    fs.writeFileSync(huge, "s".repeat(1024 * 1024))
    const tooLarge = await run(huge)
    expect(tooLarge.code).toBe(1)
    expect(tooLarge.stderr).toContain(`${huge} holds more than 4096 bytes`)
  })
})
