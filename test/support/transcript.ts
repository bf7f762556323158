/** The 25-call tool transcript every way of reaching terminals must answer the same (issue 16, issue 29). */
import { textOf } from "./mcp.js"

/** A client of the MCP server that runs the transcript. */
interface Mcp {
  readonly client: { callTool: (request: { name: string; arguments: Record<string, unknown> }) => Promise<any> }
}

/** What differs between two runs of the same transcript by nature: ids, pids, times. */
export const normalize = (text: string) =>
  // a machine's id names it and its run (`m2~k2x9q1~…`): the same id as any other
  text.replace(/\b[A-Za-z0-9_-]+~[a-z0-9]+~[0-9a-f]+/g, "s-ID").replace(/s-[0-9a-f]+/g, "s-ID").replace(
    /t-[0-9a-f]+/g,
    "t-ID"
  ).replace(
    /\b(pid:? |process group )\d+/g,
    "$1N"
  )
    // a task's age in the process list (whole seconds: 0s or 1s by the machine's load)
    .replace(/\b\d+s\b/g, "Ns")
    .replace(/\d+ ms\b/g, "N ms").replace(/"elapsedMs":\d+/g, "\"elapsedMs\":N")

/** One scripted agent session; every model-facing text, in order. */
export const transcript = async (mcp: Mcp): Promise<Array<string>> => {
  const texts: Array<string> = []
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await mcp.client.callTool({ name, arguments: args })
    texts.push(`${name} ${result.isError === true ? "error" : "ok"}\n${normalize(textOf(result))}`)
    return (result.structuredContent ?? {}) as Record<string, any>
  }
  const { sessionId } = await call("terminal_open", { name: "transcript", cwd: "/" })
  const send = (text: string, extra: Record<string, unknown> = {}) =>
    call("terminal_send", { sessionId, text, ...extra })
  await send("echo hello; (exit 3)")
  await send("export KEEP=kept; cd /usr")
  await send("echo \"$KEEP $PWD\"")
  await send("python3 -q")
  await send("print(6*7)")
  await send("exit()")
  await call("terminal_read", { sessionId, count: 4 })
  await send("sleep 5", { timeoutMs: 400 })
  await call("terminal_signal", { sessionId, signal: "SIGINT" })
  await send("true")
  const background = await send("sleep 0.3; echo from-background", { run_in_background: true })
  await call("task_output", { taskId: background.taskId, wait: true, timeoutMs: 15_000 })
  // waitFor and steps (issue 21) through the protocol too
  await send("sleep 0.2; echo port 8123; sleep 0.2", { waitFor: { regex: "port (\\d+)" } })
  await call("terminal_send", { sessionId, steps: [{ text: "echo one" }, { text: "echo two" }] })
  const watched = await send("sleep 0.3; echo ready-now; sleep 5", { run_in_background: true })
  await call("task_output", { taskId: watched.taskId, waitFor: { text: "ready-now" }, timeoutMs: 15_000 })
  await call("task_kill", { taskId: watched.taskId })
  await call("exec", { command: "printf 'a\\nb\\n'; exit 4" })
  await call("exec", { argv: ["printf", "%s|", "x y", "$HOME"] })
  await call("process", { action: "list" })
  await call("terminal_send", { sessionId: "s-000000000000", text: "true" })
  await call("terminal_send", { sessionId, text: "printf 'one\\ntwo'", submit: true })
  await call("terminal_close", { sessionId })
  await call("terminal_list")
  return texts
}
