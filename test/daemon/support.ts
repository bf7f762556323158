import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bodyOf, cliBin, structured } from "../support/mcp.js"

export { cliBin, structured }

/** The CLI and the packages it runs are built (`pnpm build`): the daemon tests run the real binary. */
export const built = fs.existsSync(cliBin) &&
  fs.existsSync(path.resolve(__dirname, "../../packages/daemon/dist/index.js")) &&
  fs.existsSync(path.resolve(__dirname, "../../packages/node/dist/reaperMain.js"))

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const waitUntil = async (condition: () => boolean | Promise<boolean>, ms = 15_000, every = 20) => {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) return false
    await sleep(every)
  }
  return true
}

/** A process's start time (field 22 of `/proc/<pid>/stat`): with the pid, its identity. */
export const startTimeOf = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19])
  } catch {
    return undefined
  }
}

/** A process as an identity: its pid and start time. */
export interface Identity {
  readonly pid: number
  readonly startTime: number
  readonly comm: string
}

const stateOf = (pid: number): string => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  } catch {
    return "X"
  }
}

/** The very process is still alive: same pid, same start time, not a zombie. */
export const stillAlive = (identity: Identity): boolean =>
  startTimeOf(identity.pid) === identity.startTime && stateOf(identity.pid) !== "Z" && stateOf(identity.pid) !== "X"

const environOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "latin1")
  } catch {
    return ""
  }
}

const commOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "latin1").trim()
  } catch {
    return ""
  }
}

/** Live processes whose environment carries `TAG=<tag>`, by identity. */
export const taggedProcesses = (tag: string): Array<Identity> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number)
    .filter((pid) => pid !== process.pid && environOf(pid).split("\0").includes(`TAG=${tag}`))
    .flatMap((pid) => {
      const startTime = startTimeOf(pid)
      return startTime === undefined || stateOf(pid) === "Z" ? [] : [{ pid, startTime, comm: commOf(pid) }]
    })

/** SIGKILL processes by identity (a test's cleanup). */
export const killIdentities = (identities: ReadonlyArray<Identity>) => {
  for (const identity of identities) {
    if (!stillAlive(identity)) continue
    try {
      process.kill(identity.pid, "SIGKILL")
    } catch {
      // gone
    }
  }
}

/** A private state directory (and socket directory) for one test; removed by `dispose`. */
export const makeHome = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "at-daemon-"))
  const socket = path.join(dir, "run", "agent-terminal.sock")
  const env = {
    ...(process.env as Record<string, string>),
    AGENT_TERMINAL_STATE_DIR: path.join(dir, "state"),
    AGENT_TERMINAL_SOCKET: socket,
    AGENT_TERMINAL_IDLE_SILENCE_MS: "1500",
    AGENT_TERMINAL_OPEN_TIMEOUT_MS: "15000",
    AGENT_TERMINAL_DISPOSE_GRACE_MS: "500"
  }
  return { dir, socket, env, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

/** A real `agent-terminal serve` process. */
export interface Daemon {
  readonly pid: number
  readonly child: ChildProcess
  readonly log: () => string
  readonly exited: Promise<{ code: number | null; signal: string | null }>
  /** SIGTERM (graceful), then SIGKILL if it has not exited within 10 s. */
  readonly stop: () => Promise<void>
}

/** Start `serve` and wait until it says it serves (or exits). */
export const startDaemon = async (
  env: Record<string, string>,
  args: ReadonlyArray<string> = []
): Promise<Daemon> => {
  const child = spawn(process.execPath, [cliBin, "serve", ...args], { env, stdio: ["ignore", "ignore", "pipe"] })
  let log = ""
  child.stderr!.on("data", (chunk) => (log += chunk))
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  let done = false
  void exited.then(() => (done = true))
  await waitUntil(() => done || log.includes("daemon: serving on"), 30_000)
  if (!log.includes("daemon: serving on")) throw new Error(`serve did not start:\n${log}`)
  return {
    pid: child.pid!,
    child,
    log: () => log,
    exited,
    stop: async () => {
      if (done) return
      child.kill("SIGTERM")
      const stopped = await waitUntil(() => done, 10_000)
      if (!stopped) child.kill("SIGKILL")
      await exited
    }
  }
}

/** A real MCP client over stdio to `agent-terminal mcp <args>` (e.g. `--daemon --owner alice`). */
export const connectMcp = async (env: Record<string, string>, args: ReadonlyArray<string>) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliBin, "mcp", ...args],
    env,
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const client = new Client({ name: "agent-terminal-daemon-tests", version: "0.0.0" })
  await client.connect(transport)
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args })
    // the output is sent once, in the text: put it back beside the facts (a first screen, a page)
    const field = name === "terminal_open" ? "motd" : name === "terminal_read" ? "text" : "output"
    const body = { [field]: bodyOf(result) }
    return { ...structured(result), ...body, isError: result.isError === true } as Record<string, any>
  }
  return { client, transport, call, pid: transport.pid!, stderr: () => stderr }
}

/** Child cgroups left under the session cgroup parent of a host pid (`agent-terminal-<pid>`), if any. */
export const cgroupsOf = (hostPid: number): Array<string> => {
  const unified = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].find((dir) =>
    fs.existsSync(path.join(dir, "cgroup.procs")) && fs.existsSync(path.join(dir, "cgroup.subtree_control"))
  )
  if (unified === undefined) return []
  const found: Array<string> = []
  const walk = (dir: string, depth: number) => {
    if (depth > 4) return
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue
      const full = path.join(dir, entry.name)
      if (entry.name === `agent-terminal-${hostPid}`) found.push(full)
      else walk(full, depth + 1)
    }
  }
  walk(unified, 0)
  return found
}
