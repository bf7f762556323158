/**
 * A client of the daemon holds the MCP server and the RPC client only: `mcp --daemon` and `console --daemon`
 * never load node-pty, SQLite, the emulator or the sandbox. What each real process loaded is read twice: the
 * native libraries mapped into it (`/proc/<pid>/maps`), and the bundle's chunks it loaded (a preload logs the
 * files it reads) turned into the modules they hold (the build's module graph, apps/cli/build/bundle-meta.json). The
 * same reads of an in-process `mcp` and of the daemon find them: the check can fail.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { built, connectMcp, makeHome, startDaemon, waitUntil } from "./support.js"

const cli = path.resolve(__dirname, "../../apps/cli")
const metaFile = path.join(cli, "build/bundle-meta.json")
const hook = path.resolve(__dirname, "../fixtures/loadLog.cjs")

interface Meta {
  readonly outputs: Record<string, {
    readonly inputs: Record<string, unknown>
    readonly imports: ReadonlyArray<{ readonly path: string; readonly external?: boolean }>
  }>
}

/** What one process loaded: its native libraries, the modules of the chunks it imported, their externals. */
const loaded = (pid: number, log: string) => {
  const meta = JSON.parse(fs.readFileSync(metaFile, "utf8")) as Meta
  const chunks = fs.readFileSync(log, "utf8").split("\n")
    .filter((url) => url.startsWith(`file://${cli}/dist/`))
    .map((url) => path.relative(cli, new URL(url).pathname))
  const outputs = chunks.flatMap((chunk) => meta.outputs[chunk] === undefined ? [] : [meta.outputs[chunk]])
  const maps = fs.readFileSync(`/proc/${pid}/maps`, "latin1")
  return {
    chunks,
    modules: outputs.flatMap((output) => Object.keys(output.inputs)),
    externals: outputs.flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path)),
    natives: [...new Set([...maps.matchAll(/\S+\.node$/gm)].map((m) => path.basename(m[0])))]
  }
}

/** The pieces a client of the daemon must not hold, as they appear in a process's load. */
const heavy = (load: ReturnType<typeof loaded>) => ({
  nodePty: load.natives.includes("pty.node") || load.externals.includes("node-pty"),
  sqlite: load.natives.includes("better_sqlite3.node") || load.externals.includes("better-sqlite3") ||
    load.modules.some((m) => m.includes("@effect/sql")),
  emulator: load.modules.some((m) => m.includes("@xterm/") || m.endsWith("packages/terminal/dist/Emulator.js")),
  sandbox: load.modules.some((m) => m.endsWith("packages/node/dist/Bubblewrap.js"))
})

const none = { nodePty: false, sqlite: false, emulator: false, sandbox: false }

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe.runIf(built && fs.existsSync(metaFile))("a client of the daemon is thin", () => {
  it("mcp --daemon: no node-pty, SQLite, emulator or sandbox, while it drives a session; in-process mcp and the daemon hold them", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    const daemonLog = path.join(home.dir, "daemon.load")
    const daemon = await startDaemon({
      ...home.env,
      NODE_OPTIONS: `--require=${hook}`,
      AGENT_TERMINAL_LOAD_LOG: daemonLog
    })
    cleanups.push(() => daemon.stop())

    const clientLog = path.join(home.dir, "client.load")
    const client = await connectMcp({
      ...home.env,
      NODE_OPTIONS: `--require=${hook}`,
      AGENT_TERMINAL_LOAD_LOG: clientLog
    }, [
      "--daemon"
    ])
    cleanups.push(() => client.client.close())
    const opened = await client.call("terminal_open", {})
    const sent = await client.call("terminal_send", { sessionId: opened.sessionId, text: "echo thin-$((6*7))" })
    expect(sent).toMatchObject({ output: "thin-42", waitReason: "prompt" })
    const thin = loaded(client.pid, clientLog)
    expect(thin.chunks.length).toBeGreaterThan(0)
    expect(thin.modules.some((m) => m.includes("RemoteTerminal.js"))).toBe(true)
    expect(heavy(thin)).toEqual(none)

    expect(heavy(loaded(daemon.pid, daemonLog))).toEqual({ nodePty: true, sqlite: true, emulator: true, sandbox: true })
    const localLog = path.join(home.dir, "local.load")
    const local = await connectMcp(
      { ...home.env, NODE_OPTIONS: `--require=${hook}`, AGENT_TERMINAL_LOAD_LOG: localLog },
      []
    )
    cleanups.push(() => local.client.close())
    await local.call("terminal_open", {})
    expect(heavy(loaded(local.pid, localLog))).toMatchObject({ nodePty: true, emulator: true, sandbox: true })
  })

  it("console --daemon: the same, through a session it opens and drives", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    const daemon = await startDaemon(home.env)
    cleanups.push(() => daemon.stop())
    const log = path.join(home.dir, "console.load")
    const console = spawn(process.execPath, [path.join(cli, "dist/bin.js"), "console", "--daemon"], {
      env: { ...home.env, NODE_OPTIONS: `--require=${hook}`, AGENT_TERMINAL_LOAD_LOG: log },
      stdio: ["pipe", "pipe", "pipe"]
    })
    const exited = new Promise<void>((resolve) => console.once("exit", () => resolve()))
    cleanups.push(async () => {
      console.kill("SIGKILL")
      await exited
    })
    let out = ""
    console.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    console.stdin!.write(":open\n")
    console.stdin!.write("echo thin-$((6*7))\n")
    expect(await waitUntil(() => /thin-42/.test(out.replace(/echo thin-\$\(\(6\*7\)\)/g, "")))).toBe(true)
    expect(heavy(loaded(console.pid!, log))).toEqual(none)
    console.stdin!.end(":quit\n")
    await exited
  })
})
