import { afterEach, describe, expect, it } from "@effect/vitest"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { built, connectMcp, makeHome, startDaemon } from "./support.js"

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const connectAttempt = (socket: string) =>
  `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("CONNECTED")' ` +
  `${socket} 2>&1 | tail -1`

describe.runIf(built)("a sandboxed session and the daemon's socket", () => {
  it("cannot connect to the daemon's socket at its default place ($XDG_RUNTIME_DIR); an unconfined one can", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    // a runtime directory under /run, as $XDG_RUNTIME_DIR (/run/user/<uid>) is: the default socket lives in it
    const runtime = path.join("/run", `at-test-${randomUUID()}`)
    fs.mkdirSync(runtime, { mode: 0o700 })
    cleanups.push(() => fs.rmSync(runtime, { recursive: true, force: true }))
    const { AGENT_TERMINAL_SOCKET: _explicit, ...rest } = home.env
    const env = { ...rest, XDG_RUNTIME_DIR: runtime }
    const socket = path.join(runtime, "agent-terminal", "agent-terminal.sock")
    const daemon = await startDaemon(env)
    cleanups.push(() => daemon.stop())
    expect(daemon.log()).toContain(`serving on ${socket}`)

    const confined = await connectMcp(env, ["--daemon", "--sandbox", "read-only", "--workspace", home.dir])
    cleanups.push(() => confined.client.close())
    const inside = await confined.call("terminal_open", {})
    expect(inside.isError, JSON.stringify(inside)).toBe(false)
    const attack = await confined.call("terminal_send", { sessionId: inside.sessionId, text: connectAttempt(socket) })
    expect(attack.output).not.toContain("CONNECTED")
    expect(attack.output).toMatch(/FileNotFoundError|No such file|Permission denied|refused/)

    const unconfined = await connectMcp(env, ["--daemon"])
    cleanups.push(() => unconfined.client.close())
    const outside = await unconfined.call("terminal_open", {})
    const control = await unconfined.call("terminal_send", {
      sessionId: outside.sessionId,
      text: connectAttempt(socket)
    })
    expect(control.output).toContain("CONNECTED")
  })
})
