/**
 * The live view across the fleet, with real parts: 3 nats-servers clustered, machines m1 and m2 as real
 * `agent-terminal serve --nats` processes, a real `agent-terminal mcp --nats --http` (NATS user p1, the server
 * of people), agents as real MCP clients over HTTP (the official SDK), a person in a real Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Page } from "playwright-core"
import { built } from "../daemon/support.js"
import { hasChromium, launch, terminalText, waitForText } from "../support/browser.js"
import { type HttpServer, startHttpServer, stopHttpServer } from "../support/http.js"
import { structured, textOf } from "../support/mcp.js"
import { alive, type Machine, startMachine, startNats } from "./support.js"

describe.skipIf(!hasChromium || !built)(
  "mcp --nats --http: the live view and MCP over the fleet (skipped without /usr/bin/chromium or a build)",
  () => {
    let nats: Awaited<ReturnType<typeof startNats>>
    const machines: Array<Machine> = []
    let server: HttpServer
    let browser: Awaited<ReturnType<typeof launch>>
    const agents: Array<Client> = []

    beforeAll(async () => {
      nats = await startNats()
      for (const name of ["m1", "m2"] as const) machines.push(await startMachine(nats.fleet, name))
      server = await startHttpServer([
        "--nats",
        nats.fleet.urls.join(","),
        "--nats-user",
        "p1",
        "--nats-nkey",
        nats.fleet.keys.p1.seedFile
      ])
      browser = await launch()
    }, 120_000)

    afterAll(async () => {
      for (const agent of agents) await agent.close()
      await browser?.close()
      if (server !== undefined) await stopHttpServer(server)
      for (const m of machines) {
        await m.daemon.stop()
        m.home.dispose()
      }
      await nats?.close()
    }, 60_000)

    const base = () => server.url.origin

    /** An agent: a real MCP client over HTTP, as owner `owner` (anonymous when none). */
    const agentOf = async (owner?: string) => {
      const client = new Client({ name: "fleet-live-agent", version: "0.0.0" })
      const transport = new StreamableHTTPClientTransport(server.url, {
        requestInit: {
          headers: {
            Authorization: `Bearer ${server.token}`,
            ...(owner === undefined ? {} : { "Agent-Terminal-Owner": owner })
          }
        }
      })
      await client.connect(transport)
      agents.push(client)
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })
        return { structured: structured(result), text: textOf(result), isError: result.isError === true }
      }
      return Object.assign(call, { end: () => transport.terminateSession() })
    }

    /** Wait until `check` holds (the page and the fleet answer at their own pace). */
    const eventually = async (check: () => Promise<boolean>, ms = 15_000) => {
      const deadline = Date.now() + ms
      while (Date.now() < deadline) {
        if (await check()) return true
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      return false
    }

    const signIn = async (): Promise<Page> => {
      const page = await browser.context.newPage()
      await page.goto(`${base()}/#token=${server.token}`)
      await page.waitForSelector("#connection.live", { timeout: 15_000 })
      return page
    }

    it("two HTTP owners do not see each other's terminals through MCP", async () => {
      const alice = await agentOf("alice")
      const anonymous = await agentOf()
      const mine = await alice("terminal_open", { name: "alice-term", machine: "m1" })
      expect(mine.isError).toBe(false)
      const theirs = await anonymous("terminal_open", { name: "anon-term", machine: "m2" })
      expect(theirs.isError).toBe(false)
      const listOf = async (call: typeof alice) =>
        ((await call("terminal_list")).structured.sessions as Array<{ sessionId: string }>).map((s) => s.sessionId)
      expect(await listOf(alice)).toEqual([mine.structured.sessionId])
      expect(await listOf(anonymous)).toEqual([theirs.structured.sessionId])
      // the other owner's id is not theirs to drive
      const foreign = await anonymous("terminal_send", { sessionId: mine.structured.sessionId, text: "echo no" })
      expect(foreign.isError).toBe(true)
      expect(foreign.structured._tag).toBe("ForeignSession")
      // a second MCP session of the same named owner sees alice's terminal
      const aliceAgain = await agentOf("alice")
      expect(await listOf(aliceAgain)).toEqual([mine.structured.sessionId])
      await alice("terminal_close", { sessionId: mine.structured.sessionId })

      // the anonymous owner's MCP session ends: its terminal on m2 closes with it (its machine sessions end)
      const pid = theirs.structured.pid as number
      expect(alive(pid)).toBe(true)
      await anonymous.end()
      expect(await eventually(async () => !alive(pid))).toBe(true)
    }, 60_000)

    it(
      "the page lists m1's and m2's terminals with their machines; a person watches one on m2, takes control, hands back; its recording replays",
      async () => {
        const agent = await agentOf("bob")
        const onM1 = (await agent("terminal_open", { name: "bob-m1", machine: "m1" })).structured.sessionId as string
        const onM2 = (await agent("terminal_open", { name: "bob-m2", machine: "m2", record: true })).structured
          .sessionId as string
        const page = await signIn()
        for (const [id, machine] of [[onM1, "m1"], [onM2, "m2"]] as const) {
          await page.waitForSelector(`#sessions tr[data-session="${id}"] .flag.machine[data-machine="${machine}"]`, {
            timeout: 15_000
          })
        }

        await page.click(`#sessions tr[data-session="${onM2}"]`)
        await page.waitForSelector("#terminal[data-ready=true]", { timeout: 15_000 })
        expect(await page.textContent("#title")).toContain("on m2")
        await agent("terminal_send", { sessionId: onM2, text: "echo agent-says-$((6*7))" })
        await waitForText(page, "agent-says-42")

        await page.click("#take")
        await page.waitForSelector("#release:not([disabled])")
        const refused = await agent("terminal_send", { sessionId: onM2, text: "echo agent-while-held" })
        expect(refused.isError).toBe(true)
        expect(refused.structured._tag).toBe("HumanInControl")
        await page.click("#terminal")
        await page.keyboard.type("echo human-on-m$((1+1))", { delay: 5 })
        await page.keyboard.press("Enter")
        await waitForText(page, "human-on-m2")
        await page.click("#release")
        await page.waitForSelector("#take:not([disabled])")
        const next = await agent("terminal_send", { sessionId: onM2, text: "echo agent-again" })
        expect(next.text).toMatch(/\[human: in control for \d+ s, 1 line typed\]/)
        expect(next.text).toContain("agent-again")

        // the recording made on m2, listed and replayed by the page
        let recording: { name: string } | undefined
        expect(
          await eventually(async () => {
            const list = await (await page.request.get(`${base()}/live/recordings`)).json() as Array<
              { sessionId: string; name: string }
            >
            recording = list.find((entry) => entry.sessionId === onM2)
            return recording !== undefined
          })
        ).toBe(true)
        await page.waitForSelector(
          `#recordings tr[data-recording="${recording!.name}"] .flag.machine[data-machine="m2"]`,
          { timeout: 15_000 }
        )
        await page.click(`#recordings tr[data-recording="${recording!.name}"] button.replay`, { timeout: 15_000 })
        await page.waitForSelector("#player:not([hidden])")
        await page.selectOption("#speed", "100")
        await page.waitForSelector("#player[data-state=ended]", { timeout: 30_000 })
        expect(await terminalText(page, "replayTerm")).toContain("agent-says-42")
        expect(await terminalText(page, "replayTerm")).toContain("human-on-m2")

        await page.close()
        await agent("terminal_close", { sessionId: onM1 })
        await agent("terminal_close", { sessionId: onM2 })
      },
      90_000
    )
  }
)
