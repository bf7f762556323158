import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { bodyOf, cliBin, connectStdio, structured, textOf } from "../support/mcp.js"
import { alive } from "../support/terminal.js"

type Client = Awaited<ReturnType<typeof connectStdio>>["client"]

const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await client.callTool({ name, arguments: args })
  // the output (a first screen, for an open) is sent once, in the text: put it back beside the facts
  const body: Record<string, string> = name === "terminal_open" ? { motd: bodyOf(result) } : { output: bodyOf(result) }
  return { result, data: { ...structured(result), ...body } as Record<string, any>, text: textOf(result) }
}

const syntax = {
  zsh: { setState: "cd /tmp; export K=v", exit7: "(exit 7)", breakPrompt: "PS1='broken> '", promptText: "% " },
  fish: {
    setState: "cd /tmp; set -x K v",
    exit7: "fish -c 'exit 7'",
    breakPrompt: "function fish_prompt; echo 'broken> '; end",
    promptText: "> "
  }
} as const

describe.each(["zsh", "fish"] as const)("%s as the session's shell, over a real MCP client (--shell)", (shell) => {
  const spec = syntax[shell]

  it("opens by prompt; state persists; exit codes; an overwritten prompt, a continuation, a REPL, SIGINT; close leaves nothing", async () => {
    const { client } = await connectStdio(["--shell", shell, "--idle-silence-ms", "1500"])
    try {
      const opened = await call(client, "terminal_open", {})
      expect(opened.result.isError).toBeFalsy()
      expect(opened.data).toMatchObject({ type: "shell", shell, status: { _tag: "running" }, motd: spec.promptText })
      expect(opened.text).toContain(`[shell: ${shell}]`)
      const { pid, sessionId } = opened.data
      const send = async (text: string, extra: Record<string, unknown> = {}) =>
        (await call(client, "terminal_send", { sessionId, text, ...extra })).data

      expect(await send(spec.setState)).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect(await send("echo \"$PWD $K\"")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "/tmp v" })

      expect(await send("true")).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect(await send("false")).toMatchObject({ waitReason: "prompt", exitCode: 1 })
      expect(await send(spec.exit7)).toMatchObject({ waitReason: "prompt", exitCode: 7 })

      expect((await send(spec.breakPrompt)).waitReason).toBe("prompt")
      expect(await send("echo still")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "still" })

      const quote = await call(client, "terminal_send", { sessionId, text: "echo \"abc" })
      expect(quote.data).toMatchObject({ waitReason: "prompt", continuation: true })
      expect(quote.text).toContain("[continuation prompt")
      expect(await send("def\"")).toMatchObject({ waitReason: "prompt", output: "abc\ndef" })

      expect(await send("python3 -q")).toMatchObject({ waitReason: "stdin_read", output: ">>> " })
      expect(await send("print(6*7)")).toMatchObject({ waitReason: "stdin_read", output: "42\n>>> " })
      expect(await send("exit()")).toMatchObject({ waitReason: "prompt", exitCode: 0 })

      expect((await send("sleep 60", { timeoutMs: 300 })).waitReason).toBe("timeout")
      const signalled = await call(client, "terminal_signal", { sessionId, signal: "SIGINT" })
      expect(signalled.data.delivered).toBe(true)
      const back = await send("echo back")
      expect(back).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect(back.output.split("\n")).toContain("back")

      const listed = await call(client, "terminal_list", {})
      expect(listed.data.sessions).toMatchObject([{ sessionId, shell }])
      expect(listed.text).toContain(`shell ${shell}`)

      const closed = await call(client, "terminal_close", { sessionId })
      expect(closed.data).toMatchObject({ sessionId, outcome: "closed", survivors: [] })
      expect(alive(pid)).toBe(false)
      expect((await call(client, "terminal_list", {})).data.sessions).toEqual([])
    } finally {
      await client.close()
    }
  })
})

describe("choosing the shell over MCP", () => {
  it("terminal_open's shell parameter picks a dialect per session; an unknown one is InvalidInput naming the supported", async () => {
    const { client } = await connectStdio()
    try {
      const { tools } = await client.listTools()
      const open = tools.find((tool) => tool.name === "terminal_open")!
      expect(Object.keys(open.inputSchema.properties ?? {})).toContain("shell")

      const zsh = await call(client, "terminal_open", { shell: "zsh", name: "z" })
      expect(zsh.data).toMatchObject({ shell: "zsh", motd: "% " })
      const bash = await call(client, "terminal_open", { name: "b" })
      expect(bash.data).toMatchObject({ shell: "bash", motd: "$ " })
      const zshSent = await call(client, "terminal_send", { sessionId: zsh.data.sessionId, text: "echo $ZSH_NAME" })
      expect(zshSent.data).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "zsh" })

      const refused = await call(client, "terminal_open", { shell: "tcsh" })
      expect(refused.result.isError).toBe(true)
      expect(refused.data).toMatchObject({ _tag: "InvalidInput", field: "shell" })
      expect(refused.data.message).toContain("bash, zsh, fish, pwsh")
      expect(refused.text).toMatch(/^\[error: InvalidInput\]/)
      const listed = await call(client, "terminal_list", {})
      expect(listed.data.sessions.map((session: { name: string }) => session.name).sort()).toEqual(["b", "z"])
    } finally {
      await client.close()
    }
  })

  it("AGENT_TERMINAL_SHELL names the default shell too", async () => {
    const { client } = await connectStdio([], { AGENT_TERMINAL_SHELL: "/usr/bin/fish" })
    try {
      const opened = await call(client, "terminal_open", {})
      expect(opened.data).toMatchObject({ shell: "fish", motd: "> " })
      await call(client, "terminal_close", { sessionId: opened.data.sessionId })
    } finally {
      await client.close()
    }
  })

  it("--shell with no dialect is refused at startup, naming the supported ones, with exit code 2", async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [cliBin, "mcp", "--shell", "tcsh"], {
        env: process.env,
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
      child.once("exit", (code) => resolve({ code, stderr }))
    })
    expect(code).toBe(2)
    expect(stderr).toContain("bash, zsh, fish, pwsh")
    expect(stderr).toContain("--shell / AGENT_TERMINAL_SHELL")
  })
})
