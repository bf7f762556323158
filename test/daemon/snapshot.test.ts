/**
 * `snapshot` through the real daemon: the operation's RPC and its remote client are derived from its one
 * declaration (nothing written for them by hand). An Effect client (`RemoteTerminal`) sees `less`'s screen
 * and a snapshot that answers while a send runs; a real MCP client (`mcp --daemon`) sees `top`'s screen and
 * takes a snapshot during a `sleep` send, which still completes.
 */
import { PtyService } from "@agent-terminal/core"
import { RemoteTerminal } from "@agent-terminal/daemon"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as path from "node:path"
import { structured, textOf } from "../support/mcp.js"
import { built, connectMcp, makeHome, startDaemon, waitUntil } from "./support.js"

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const daemonAt = async () => {
  const home = makeHome()
  cleanups.push(home.dispose)
  const daemon = await startDaemon(home.env)
  cleanups.push(() => daemon.stop())
  return home
}

describe.runIf(built)("terminal_snapshot through the daemon", () => {
  it("an Effect client: less's screen; during a running send the snapshot answers and the send completes", async () => {
    const home = await daemonAt()
    const file = path.join(home.dir, "pages.txt")
    fs.writeFileSync(file, Array.from({ length: 200 }, (_, i) => `page line ${i + 1}`).join("\n"))
    await Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const { owner } = yield* RemoteTerminal.Connected
      const opened = yield* service.open(owner, { rows: 24, cols: 80 })
      const id = opened.sessionId as Parameters<typeof service.snapshot>[1]
      yield* service.send(owner, id, { text: `less ${file}`, waitFor: { screenStableMs: 300 } })
      const paged = yield* service.snapshot(owner, id)
      expect(paged).toMatchObject({ cols: 80, rows: 24, alternate: true, busy: false })
      expect(paged.screen.rows[0]).toBe("page line 1")
      expect(paged.screen.rows).toContain("page line 23")
      expect(paged.screen.rows).not.toContain("page line 30")
      yield* service.send(owner, id, { keys: ["q"] })

      const running = yield* Effect.fork(service.send(owner, id, { text: "sleep 2; echo remote-done" }))
      let during = yield* service.snapshot(owner, id)
      for (let attempt = 0; !during.busy && attempt < 400; attempt++) {
        yield* Effect.sleep("25 millis")
        during = yield* service.snapshot(owner, id)
      }
      expect(during.busy).toBe(true)
      expect(during.screen.rows.join("\n")).toContain("sleep 2; echo remote-done")
      const result = yield* Fiber.join(running)
      expect(result).toMatchObject({ waitReason: "prompt", output: "remote-done" })
      yield* service.close(owner, id)
    }).pipe(Effect.provide(RemoteTerminal.layer({ socket: home.socket })), Effect.runPromise)
  }, 60_000)

  it("a real MCP client: top's screen; a snapshot while a sleep send runs, and the send still completes", async () => {
    const home = await daemonAt()
    const mcp = await connectMcp(home.env, ["--daemon"])
    cleanups.push(() => mcp.client.close())
    const call = (name: string, args: Record<string, unknown>) => mcp.client.callTool({ name, arguments: args })
    const opened = await call("terminal_open", { cols: 100, rows: 30 })
    const { sessionId } = structured(opened)

    await call("terminal_send", { sessionId, text: "top -d 5", waitFor: { screenStableMs: 500 } })
    const topScreen = await call("terminal_snapshot", { sessionId })
    expect(topScreen.isError).not.toBe(true)
    // top paints the normal screen here (its terminfo has no alternate screen): its header, as drawn
    expect(textOf(topScreen)).toMatch(/^\[size: 100x30\] \[cursor: \d+:\d+\]\ntop - .*load average/)
    expect(textOf(topScreen)).toMatch(/^\s*PID USER/m)
    // the rows are in the text only; the facts are structured
    expect(structured(topScreen)).toMatchObject({ cols: 100, rows: 30, busy: false })
    expect(structured(topScreen).screen).toBeUndefined()
    await call("terminal_send", { sessionId, keys: ["q"] })

    const sending = call("terminal_send", { sessionId, text: "sleep 3; echo mcp-done" })
    let settled = false
    void sending.then(() => (settled = true), () => (settled = true))
    let during: Awaited<ReturnType<typeof call>> | undefined
    expect(
      await waitUntil(
        async () => {
          during = await call("terminal_snapshot", { sessionId })
          return structured(during).busy === true && textOf(during).includes("sleep 3; echo mcp-done")
        },
        15_000,
        50
      )
    ).toBe(true)
    expect(settled).toBe(false)
    expect(textOf(during!)).toContain("[busy]")
    const sent = await sending
    expect(textOf(sent)).toBe("[wait: prompt] [exit: 0]\nmcp-done")
    await call("terminal_close", { sessionId })
  }, 60_000)
})
