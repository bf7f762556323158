import { Instructions } from "@agent-terminal/tools"
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { bodyOf, connectStdio, structured, textOf } from "../support/mcp.js"
import { alive, parentOf } from "../support/terminal.js"

type Client = Awaited<ReturnType<typeof connectStdio>>["client"]

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })

const open = async (client: Client) => structured(await call(client, "terminal_open", {})).sessionId as string

describe("the agent's side over a real MCP client (stdio)", () => {
  it("initialize carries the instructions, the same text Portable and Instructions give", async () => {
    const { client, stderr } = await connectStdio()
    try {
      const instructions = client.getInstructions()
      expect(instructions).toBe(Instructions.text())
      expect(instructions).toContain("inferred_idle")
      expect(instructions).toContain("waitFor")
      expect(instructions).toContain("terminal_close")
      // the server logs what the host gives (agent-terminal doctor's findings) at start, on stderr
      const deadline = Date.now() + 20_000
      while (!stderr.join("").includes("ok      pty:") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(stderr.join("")).toContain("host check (agent-terminal doctor)")
      expect(stderr.join("")).toContain("ok      pty:")
    } finally {
      await client.close()
    }
  })

  it("the host check runs as a child `agent-terminal doctor`; the server ending while it runs leaves none of its processes", async () => {
    const { client, serverPid } = await connectStdio()
    const pids = () => fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number)
    const descendants = (root: number): Array<number> => {
      const all = pids()
      const found: Array<number> = []
      for (let frontier = [root]; frontier.length > 0;) {
        frontier = all.filter((pid) => frontier.includes(parentOf(pid)))
        found.push(...frontier)
      }
      return found
    }
    const commandLine = (pid: number) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      } catch {
        return []
      }
    }
    try {
      let doctor: number | undefined
      let tree: Array<number> = []
      for (const deadline = Date.now() + 20_000; doctor === undefined && Date.now() < deadline;) {
        doctor = pids().find((pid) => parentOf(pid) === serverPid! && commandLine(pid).includes("doctor"))
        if (doctor === undefined) await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(doctor).toBeDefined()
      // the checks' own processes (its shell on a pty, sandboxes) as they start
      for (const deadline = Date.now() + 5_000; tree.length < 2 && Date.now() < deadline;) {
        tree = descendants(doctor!)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await client.close()
      const left = () => [doctor!, ...tree].filter(alive)
      for (const deadline = Date.now() + 10_000; left().length > 0 && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(left()).toEqual([])
    } finally {
      await client.close()
    }
  })

  it("python's http.server in the background with waitFor on its banner: matched with the port; a client gets its answer; task_kill ends it", async () => {
    const { client } = await connectStdio()
    try {
      const server = await open(client)
      const started = await call(client, "terminal_send", {
        sessionId: server,
        text: "python3 -m http.server 0 --bind 127.0.0.1",
        run_in_background: true,
        waitFor: { regex: "port (\\d+)" },
        timeoutMs: 20_000
      })
      const result = structured(started)
      expect(result.waitReason).toBe("matched")
      expect(result.taskId).toMatch(/^t-/)
      const port = Number(result.match.groups[0])
      expect(port).toBeGreaterThan(0)
      expect(textOf(started)).toContain("[wait: matched]")
      const other = await open(client)
      // python3 as the HTTP client: a fresh machine of the kind CI runs on has no curl
      const fetch = (what: string) => `python3 -c "import sys, urllib.request as u; ${what}" http://127.0.0.1:${port}/`
      const answered = await call(client, "terminal_send", {
        sessionId: other,
        text: fetch("print('status=%d' % u.urlopen(sys.argv[1]).status)")
      })
      expect(structured(answered)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect(bodyOf(answered)).toBe("status=200")
      const killed = await call(client, "task_kill", { taskId: result.taskId })
      expect(structured(killed).status).toBe("killed")
      const refused = await call(client, "terminal_send", {
        sessionId: other,
        text: fetch("u.urlopen(sys.argv[1], timeout=5)") + " 2>/dev/null; echo $?"
      })
      expect(bodyOf(refused)).toBe("1")
    } finally {
      await client.close()
    }
  })

  it("a server whose port is already in use settles by prompt with its exit code, not a timeout", async () => {
    const { client } = await connectStdio()
    try {
      const first = await open(client)
      const started = structured(
        await call(client, "terminal_send", {
          sessionId: first,
          text: "python3 -m http.server 0 --bind 127.0.0.1",
          run_in_background: true,
          waitFor: { regex: "port (\\d+)" }
        })
      )
      const port = started.match.groups[0]
      const second = await open(client)
      const result = await call(client, "terminal_send", {
        sessionId: second,
        text: `python3 -m http.server ${port} --bind 127.0.0.1`,
        run_in_background: true,
        waitFor: { regex: "port (\\d+)" },
        timeoutMs: 20_000
      })
      const failed = structured(result)
      expect(failed.waitReason).toBe("prompt")
      expect(failed.exitCode).toBe(1)
      expect(bodyOf(result)).toContain("Address already in use")
      await call(client, "task_kill", { taskId: started.taskId })
    } finally {
      await client.close()
    }
  })

  it("a foreground waitFor on a text printed after 2 s of silence returns matched, not inferred_idle", async () => {
    const { client } = await connectStdio(["--idle-silence-ms", "1000"])
    try {
      const sessionId = await open(client)
      const sent = structured(
        await call(client, "terminal_send", {
          sessionId,
          text: "sleep 2; echo 'Compiled successfully'; sleep 30",
          waitFor: { text: "Compiled successfully" }
        })
      )
      expect(sent).toMatchObject({ waitReason: "matched", match: { text: "Compiled successfully" } })
    } finally {
      await client.close()
    }
  })

  it("steps: three lines to a Python REPL, each by stdin_read; a bad regex is InvalidInput", async () => {
    const { client } = await connectStdio()
    try {
      const sessionId = await open(client)
      const sent = await call(client, "terminal_send", {
        sessionId,
        steps: [{ text: "python3 -q" }, { text: "a = 20" }, { text: "b = 22" }, { text: "print(a + b)" }]
      })
      const result = structured(sent)
      expect(result.steps.map((step: { waitReason: string }) => step.waitReason)).toEqual([
        "stdin_read",
        "stdin_read",
        "stdin_read",
        "stdin_read"
      ])
      // each step's output is in the text (once), after its facts line
      expect(result.steps[3].output).toBeUndefined()
      expect(textOf(sent)).toContain("[step 4: stdin_read]\n42\n>>> ")
      const bad = await call(client, "terminal_send", { sessionId, text: "1", waitFor: { regex: "(?<=\\s)x" } })
      expect(bad.isError).toBe(true)
      expect(structured(bad)).toMatchObject({ _tag: "InvalidInput", field: "waitFor.regex" })
      expect(structured(bad).reason).toContain("lookbehind")
    } finally {
      await client.close()
    }
  })

  it("--tools terminal --no-background: the other tools and run_in_background are hidden and refused", async () => {
    const { client } = await connectStdio(["--tools", "terminal", "--no-background"])
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        "terminal_close",
        "terminal_list",
        "terminal_open",
        "terminal_read",
        "terminal_request_human",
        "terminal_resize",
        "terminal_send",
        "terminal_signal",
        "terminal_snapshot"
      ])
      const send = tools.find((tool) => tool.name === "terminal_send")!
      expect(Object.keys(send.inputSchema.properties ?? {})).not.toContain("run_in_background")
      expect(client.getInstructions() ?? "").not.toContain("run_in_background")
      expect(client.getInstructions() ?? "").not.toContain("exec")
      const sessionId = await open(client)
      const background = await call(client, "terminal_send", { sessionId, text: "true", run_in_background: true })
      expect(background.isError).toBe(true)
      expect(structured(background)).toMatchObject({ _tag: "InvalidInput", field: "run_in_background" })
      const exec = await call(client, "exec", { command: "true" })
      expect(exec.isError).toBe(true)
      expect(structured(exec)).toMatchObject({ _tag: "InvalidInput", field: "name" })
    } finally {
      await client.close()
    }
  })

  it("the environment fallbacks: AGENT_TERMINAL_TOOLS and AGENT_TERMINAL_NO_BACKGROUND", async () => {
    const { client } = await connectStdio([], {
      AGENT_TERMINAL_TOOLS: "terminal,exec",
      AGENT_TERMINAL_NO_BACKGROUND: "1"
    })
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).not.toContain("task_output")
      const exec = tools.find((tool) => tool.name === "exec")!
      expect(Object.keys(exec.inputSchema.properties ?? {})).not.toContain("background")
      const refused = await call(client, "exec", { command: "true", background: true })
      expect(structured(refused)).toMatchObject({ _tag: "InvalidInput", field: "background" })
      const ran = await call(client, "exec", { command: "echo ran" })
      expect(structured(ran)).toMatchObject({ exitCode: 0 })
      expect(bodyOf(ran)).toBe("ran")
    } finally {
      await client.close()
    }
  })

  it("seq 1 10000 with the defaults: the text a model reads keeps head and tail within 32 KiB and names the terminal_read call", async () => {
    const { client } = await connectStdio()
    try {
      const sessionId = await open(client)
      const sent = await call(client, "terminal_send", { sessionId, text: "seq 1 10000" })
      const text = textOf(sent)
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(32 * 1024)
      expect(text.startsWith("[wait: prompt] [exit: 0] [truncated]\n1\n2\n")).toBe(true)
      expect(text.endsWith("\n9999\n10000")).toBe(true)
      const hint = /terminal_read (\{[^}]+\}) shows them/.exec(text)
      expect(hint).not.toBeNull()
      const request = JSON.parse(hint![1]!)
      const read = await call(client, "terminal_read", request)
      const shown = bodyOf(read).split("\n")
      expect(shown.length).toBe(request.count)
      expect(text).toContain(`\n${Number(shown[0]) - 1}\n`)
      expect(text).toContain(`\n${Number(shown[shown.length - 1]) + 1}\n`)
    } finally {
      await client.close()
    }
  })
})
