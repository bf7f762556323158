import { afterEach, describe, expect, it } from "@effect/vitest"
import { built, connectMcp, makeHome, startDaemon } from "./support.js"

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe.runIf(built)("a restarted daemon and the ids it held (43)", () => {
  for (const ending of ["SIGKILL", "SIGTERM"] as const) {
    it(`after ${ending} of the daemon: an old id is SessionLost (${ending === "SIGKILL" ? "died" : "stopped"}), an unknown one SessionNotFound`, async () => {
      const home = makeHome()
      cleanups.push(home.dispose)
      const first = await startDaemon(home.env)
      cleanups.push(() => first.stop())
      const before = await connectMcp(home.env, ["--daemon", "--owner", "lost"])
      cleanups.push(() => before.client.close().catch(() => {}))
      const opened = await before.call("terminal_open", {})
      expect(opened.isError).toBe(false)
      first.child.kill(ending)
      await first.exited

      const second = await startDaemon(home.env)
      cleanups.push(() => second.stop())
      const after = await connectMcp(home.env, ["--daemon", "--owner", "lost"])
      cleanups.push(() => after.client.close())
      const lost = await after.call("terminal_send", { sessionId: opened.sessionId, text: "true" })
      expect(lost).toMatchObject({
        isError: true,
        _tag: "SessionLost",
        sessionId: opened.sessionId,
        reason: ending === "SIGKILL" ? "daemon-died" : "daemon-stopped"
      })
      expect(lost.message).toContain(ending === "SIGKILL" ? "the daemon that held it died" : "stopped")
      expect(Date.parse(lost.lostAt)).toBeGreaterThan(0)
      const unknown = await after.call("terminal_send", { sessionId: "s-000000000000", text: "true" })
      expect(unknown).toMatchObject({ isError: true, _tag: "SessionNotFound" })
      // another owner asking for it learns nothing
      const other = await connectMcp(home.env, ["--daemon", "--owner", "someone-else"])
      cleanups.push(() => other.client.close())
      expect(await other.call("terminal_read", { sessionId: opened.sessionId })).toMatchObject({
        _tag: "SessionNotFound"
      })
    })
  }

  it("a client that outlives its daemon: DaemonUnavailable meanwhile, then it reconnects as its owner", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    const first = await startDaemon(home.env)
    cleanups.push(() => first.stop())
    const mcp = await connectMcp(home.env, ["--daemon", "--owner", "steady"])
    cleanups.push(() => mcp.client.close())
    const opened = await mcp.call("terminal_open", {})
    await first.stop()
    const meanwhile = await mcp.call("terminal_list")
    expect(meanwhile).toMatchObject({ isError: true, _tag: "DaemonUnavailable" })
    expect(meanwhile.message).toContain("no agent-terminal daemon answers at")
    const second = await startDaemon(home.env)
    cleanups.push(() => second.stop())
    expect(await mcp.call("terminal_list")).toMatchObject({ isError: false, sessions: [] })
    expect(await mcp.call("terminal_read", { sessionId: opened.sessionId })).toMatchObject({
      _tag: "SessionLost",
      reason: "daemon-stopped"
    })
  })
})
