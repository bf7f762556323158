import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { built, connectMcp, makeHome, startDaemon } from "../daemon/support.js"
import { cliBin } from "../support/mcp.js"
import { alive } from "../support/terminal.js"

const root = path.resolve(__dirname, "../..")

/** A tmux server of our own (its own socket), killed at the end whatever happens. */
const tmux = (socket: string) => {
  const run = (...args: ReadonlyArray<string>) =>
    execFileSync("tmux", ["-L", socket, ...args], { cwd: root, encoding: "utf8", env: process.env })
  const screen = () => run("capture-pane", "-p", "-J", "-S", "-", "-t", "console")
  const waitFor = async (predicate: (screen: string) => boolean, what: string, ms = 20_000) => {
    const deadline = Date.now() + ms
    let last = ""
    while (Date.now() < deadline) {
      last = screen()
      if (predicate(last)) return last
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`timed out waiting for ${what}; the pane shows:\n${last}`)
  }
  /** Type a line as a person would, and wait until the console has answered it and shows its prompt again. */
  const line = async (text: string) => {
    const prompts = (screen().match(/› /g) ?? []).length
    run("send-keys", "-t", "console", "-l", text)
    run("send-keys", "-t", "console", "Enter")
    const shown = await waitFor(
      (s) => (s.match(/› /g) ?? []).length > prompts && /› $/.test(s.trimEnd() + " "),
      `the answer to ${JSON.stringify(text)}`
    )
    return shown.slice(shown.lastIndexOf(`› ${text}`))
  }
  /**
   * Start the console in a detached session whose pane stays after the console exits, so its last words can
   * still be read (a console that closes its sessions and exits fast would otherwise take the server along).
   */
  const start = (...options: ReadonlyArray<string>) => {
    const command = [process.execPath, cliBin, "console", ...options].join(" ")
    run("new-session", "-d", "-s", "console", "-x", "200", "-y", "50", command)
    run("set-option", "-w", "-t", "console", "remain-on-exit", "on")
  }
  /** The console's process (the pane's), found once it runs. */
  const pane = () => Number(run("list-panes", "-t", "console", "-F", "#{pane_pid}").trim())
  /**
   * End the server — after the console has ended by itself (it closes its sessions first); one that does
   * not within the deadline gets SIGTERM, which its host-exit guard answers by killing its trees.
   */
  const stop = async (consolePid: number | undefined) => {
    const gone = async (ms: number) => {
      const deadline = Date.now() + ms
      while (consolePid !== undefined && alive(consolePid) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      return consolePid === undefined || !alive(consolePid)
    }
    if (!(await gone(15_000)) && consolePid !== undefined) {
      try {
        process.kill(-consolePid, "SIGTERM")
      } catch {
        // already gone
      }
      await gone(5_000)
    }
    try {
      execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" })
    } catch {
      // already gone
    }
    // tmux 3.3 leaves its socket file behind after kill-server
    fs.rmSync(path.join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${process.getuid?.() ?? 0}`, socket), { force: true })
  }
  return { run, screen, waitFor, line, pane, start, stop }
}

describe("agent-terminal console driven by hand through tmux", () => {
  it("shows a cd, an exit code, a Python REPL line and a Ctrl-C of sleep as a person expects", async () => {
    const socket = `at-console-${randomUUID().slice(0, 8)}`
    const t = tmux(socket)
    let consolePid: number | undefined
    try {
      t.start("--idle-silence-ms", "1500")
      consolePid = t.pane()
      const started = await t.waitFor((s) => s.includes("shell-1 › "), "the console's first prompt")
      expect(started).toContain("→ terminal_open {}")
      const pid = Number(/\[pid: (\d+)\]/.exec(started)?.[1])
      expect(alive(pid)).toBe(true)

      expect(await t.line("cd /tmp")).toContain("[wait: prompt] [exit: 0]")
      const pwd = await t.line("pwd")
      expect(pwd).toContain("→ terminal_send {\"sessionId\":")
      expect(pwd).toContain("\"text\":\"pwd\"}")
      expect(pwd).toMatch(/\[wait: prompt\] \[exit: 0\]\n\/tmp\n/)
      // the structured facts, without the output the text already holds
      expect(pwd).toContain("{\"waitReason\":\"prompt\",\"exitCode\":0,")
      expect(pwd).not.toContain("\"output\"")

      expect(await t.line("false")).toContain("[wait: prompt] [exit: 1]")
      expect(await t.line("(exit 7)")).toContain("[wait: prompt] [exit: 7]")

      const repl = await t.line("python3 -q")
      expect(repl).toContain("[wait: stdin_read]")
      expect(repl).toContain(">>>")
      const printed = await t.line("print(6 * 7)")
      expect(printed).toMatch(/\[wait: stdin_read\]\n42\n>>>/)
      expect(await t.line("exit()")).toContain("[wait: prompt] [exit: 0]")

      t.run("send-keys", "-t", "console", "-l", "sleep 30")
      t.run("send-keys", "-t", "console", "Enter")
      await t.waitFor((s) => s.includes("\"text\":\"sleep 30\"}"), "the sleep to be sent")
      t.run("send-keys", "-t", "console", "C-c")
      const interrupted = await t.waitFor((s) => /\[wait: prompt\] \[exit: 130\]/.test(s), "the interrupted sleep")
      const tail = interrupted.slice(interrupted.lastIndexOf("\"text\":\"sleep 30\"}"))
      expect(tail).toContain("→ terminal_signal {\"sessionId\":")
      expect(tail).toMatch(/\[SIGINT → process group \d+: delivered\]/)

      expect(await t.line("echo still here")).toMatch(/\[wait: prompt\] \[exit: 0\]\nstill here\n/)
      expect(alive(pid)).toBe(true)

      t.run("send-keys", "-t", "console", "-l", ":quit")
      t.run("send-keys", "-t", "console", "Enter")
      const deadline = Date.now() + 15_000
      while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(alive(pid)).toBe(false)
    } finally {
      await t.stop(consolePid)
    }
  })

  it("answers console commands with the same tool calls: keys, read, signal, list, close", async () => {
    const socket = `at-console-${randomUUID().slice(0, 8)}`
    const t = tmux(socket)
    let consolePid: number | undefined
    try {
      t.start()
      consolePid = t.pane()
      await t.waitFor((s) => s.includes("shell-1 › "), "the console's first prompt")
      await t.line("echo one; echo two")
      const read = await t.line(":read 0 3")
      expect(read).toContain("→ terminal_read {\"sessionId\":")
      expect(read).toMatch(/\[lines \d+-\d+ of \d+\]/)
      expect(read).toContain("two")
      const keys = await t.line(":keys e c h o Space k e y s Enter")
      expect(keys).toContain("\"keys\":[\"e\",\"c\",\"h\",\"o\",\"Space\",\"k\",\"e\",\"y\",\"s\",\"Enter\"]")
      const signal = await t.line(":signal KILL")
      expect(signal).toContain("[error: SignalRefused]")
      const opened = await t.line(":open second zsh")
      expect(opened).toContain("[name: second] [shell: zsh]")
      const listed = await t.line(":list")
      expect(listed).toContain("[sessions: 2]")
      const closed = await t.line(":close")
      expect(closed).toMatch(/\[closed: s-[0-9a-f]+\]/)
      expect(await t.line(":call terminal_list {}")).toContain("[sessions: 1]")
      expect(await t.line(":use shell-1")).toContain("shell-1 › ")
      t.run("send-keys", "-t", "console", "C-d")
      await t.waitFor((s) => s.includes("closing the console's sessions"), "the console to leave")
    } finally {
      await t.stop(consolePid)
    }
  })

  it.runIf(built)(
    "console --daemon: the session lives in the daemon and outlives the console for a named owner",
    async () => {
      const home = makeHome()
      const daemon = await startDaemon(home.env)
      const secret = path.join(home.dir, "owner.secret")
      fs.writeFileSync(secret, `${randomUUID()}\n`, { mode: 0o600 })
      const socket = `at-console-${randomUUID().slice(0, 8)}`
      const t = tmux(socket)
      let consolePid: number | undefined
      try {
        t.start("--daemon", "--socket", home.socket, "--owner", "carl", "--owner-secret-file", secret)
        consolePid = t.pane()
        const started = await t.waitFor((s) => s.includes("shell-1 › "), "the console's first prompt")
        const pid = Number(/\[pid: (\d+)\]/.exec(started)?.[1])
        expect(await t.line("echo from-the-console-$((6*7))")).toContain("from-the-console-42")
        t.run("send-keys", "-t", "console", "-l", ":quit")
        t.run("send-keys", "-t", "console", "Enter")
        await t.waitFor((s) => s.includes("leaving: the daemon keeps owner carl's sessions"), "the console to leave")
        await t.stop(consolePid)
        consolePid = undefined
        // the daemon kept carl's shell: the console's own process is gone, not the terminal
        expect(alive(pid)).toBe(true)
        const mcp = await connectMcp(home.env, ["--daemon", "--owner", "carl", "--owner-secret-file", secret])
        const listed = await mcp.call("terminal_list")
        expect(listed.sessions.map((session: { pid: number }) => session.pid)).toEqual([pid])
        const read = await mcp.call("terminal_read", { sessionId: listed.sessions[0].sessionId })
        expect(read.text).toContain("from-the-console-42")
        await mcp.client.close()
      } finally {
        await t.stop(consolePid)
        await daemon.stop()
        home.dispose()
      }
    }
  )
})
