import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { built, waitUntil } from "../daemon/support.js"
import { hasChromium, launch, terminalText, waitForText } from "../support/browser.js"
import { agentOf, type LiveServer, screenshotDir, startMcpHttp, startServeHttp, upgradeStatus } from "./support.js"

const hasSshKeygen = fs.existsSync("/usr/bin/ssh-keygen")

let browser: Awaited<ReturnType<typeof launch>> | undefined
beforeAll(async () => {
  if (hasChromium && built) browser = await launch()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

/** A signed-in page of the server: the token goes once, in the fragment. */
const signIn = async (context: BrowserContext, server: LiveServer): Promise<Page> => {
  const page = await context.newPage()
  await page.goto(`${server.base}/#token=${server.token}`)
  await page.waitForSelector("#connection.live", { timeout: 15_000 })
  return page
}

const openInPage = async (page: Page, sessionId: string) => {
  await page.click(`#sessions tr[data-session="${sessionId}"]`, { timeout: 15_000 })
  await page.waitForSelector("#terminal[data-ready=true]")
}

const takeControl = async (page: Page) => {
  await page.click("#take")
  await page.waitForSelector("#release:not([disabled])")
  await page.click("#terminal")
}

const handBack = async (page: Page) => {
  await page.click("#release")
  await page.waitForSelector("#take:not([disabled])")
}

/** Type as a person: into the page's terminal, key by key. */
const type = async (page: Page, text: string) => {
  await page.keyboard.type(text, { delay: 5 })
  await page.keyboard.press("Enter")
}

const scenarios = (start: () => Promise<LiveServer>, kind: string) =>
  describe.skipIf(!hasChromium || !built)(
    `the live view of ${kind} (skipped without /usr/bin/chromium or a build)`,
    () => {
      let server: LiveServer
      beforeAll(async () => {
        server = await start()
      }, 60_000)
      afterAll(async () => {
        await server?.stop()
      })

      it("without the token the page and its streams are refused; another origin is refused", async () => {
        const page = await browser!.context.newPage()
        // the bare page is the sign-in only, with 401; nothing about the terminals
        const bare = await page.goto(`${server.base}/`)
        expect(bare?.status()).toBe(401)
        expect(await page.content()).not.toContain("sessions")
        for (const route of ["/live/sessions", "/live/recordings", "/live/assets/app.js"]) {
          expect((await fetch(`${server.base}${route}`)).status).toBe(401)
        }
        const ws = server.base
        expect(await upgradeStatus(`${ws}/live/events`, { origin: server.base })).toBe(401)
        expect(await upgradeStatus(`${ws}/live/terminal/s-000000000000000000000000`, { origin: server.base })).toBe(401)
        // a cookie does not sign in to MCP or to the sign-in route, and no made-up cookie works
        const forged = { cookie: "agent_terminal_session=forged" }
        expect((await fetch(`${server.base}/live/sessions`, { headers: forged })).status).toBe(401)
        // signed in: the fragment is gone from the address
        const signed = await signIn(browser!.context, server)
        expect(signed.url()).toBe(`${server.base}/`)
        const cookie = (await browser!.context.cookies(server.base)).find((c) => c.name === "agent_terminal_session")!
        expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" })
        expect(cookie.value).not.toContain(server.token)
        const withCookie = { cookie: `agent_terminal_session=${cookie.value}` }
        expect((await fetch(`${server.base}/live/sessions`, { headers: withCookie })).status).toBe(200)
        expect(await upgradeStatus(`${ws}/live/events`, { ...withCookie, origin: server.base })).toBe(101)
        // cross-site WebSocket hijacking: the browser sends the (same-site) cookie, the Origin gives it away
        expect(await upgradeStatus(`${ws}/live/events`, { ...withCookie, origin: "http://127.0.0.1:1" })).toBe(403)
        expect(await upgradeStatus(`${ws}/live/events`, { ...withCookie, origin: "null" })).toBe(403)
        expect(
          (await fetch(`${server.base}/mcp`, {
            method: "POST",
            headers: { ...withCookie, "content-type": "application/json", origin: server.base },
            body: "{}"
          })).status
        ).toBe(401)
        expect(
          (await fetch(`${server.base}/live/login`, {
            method: "POST",
            headers: { ...withCookie, origin: server.base }
          }))
            .status
        ).toBe(401)
        // and from a real page on another origin (same site: 127.0.0.1, another port), in the signed-in browser
        const evil = http.createServer((_, response) => {
          response.setHeader("content-type", "text/html")
          response.end(`<script>
          const ws = new WebSocket(${JSON.stringify(`${server.base.replace("http:", "ws:")}/live/events`)});
          ws.onopen = () => { document.title = "opened" };
          ws.onclose = () => { if (document.title !== "opened") document.title = "refused" };
        </script>`)
        })
        await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve))
        const port = (evil.address() as { port: number }).port
        const attacker = await browser!.context.newPage()
        await attacker.goto(`http://127.0.0.1:${port}/`)
        await attacker.waitForFunction(() =>
          (globalThis as any).document.title === "refused" || (globalThis as any).document.title === "opened"
        )
        expect(await attacker.title()).toBe("refused")
        await attacker.close()
        evil.close()
        await page.close()
        await signed.close()
      })

      it("shows the agent's output live; a person takes control, the agent gets HumanInControl, the hand-back ends its wait and its next send carries the note", async () => {
        const agent = await agentOf(server)
        const page = await signIn(browser!.context, server)
        const opened = await agent.call("terminal_open", { name: "live-demo", record: true })
        const sessionId = opened.structured.sessionId as string
        await openInPage(page, sessionId)
        await agent.call("terminal_send", { sessionId, text: "echo agent-says-$((6*7))" })
        await waitForText(page, "agent-says-42")

        // the agent asks for a person: the page shows it
        const asked = await agent.call("terminal_request_human", { sessionId, reason: "please run the deploy check" })
        expect(asked.structured.status).toBe("pending")
        await page.waitForSelector(`#requests .request[data-task="${asked.structured.taskId}"]`)
        expect(await page.textContent("#requests")).toContain("please run the deploy check")
        const waited = agent.call("task_output", { taskId: asked.structured.taskId, wait: true, timeoutMs: 55_000 })

        await takeControl(page)
        const refused = await agent.call("terminal_send", { sessionId, text: "echo agent-while-held" })
        expect(refused.isError).toBe(true)
        expect(refused.structured._tag).toBe("HumanInControl")
        // the holder is the sign-in (a stable id per cookie session), shown with the name the page gave
        expect(refused.structured.holder).toMatch(/^person:person \(web-[0-9a-f]{12}\)$/)
        expect((await agent.call("terminal_signal", { sessionId, signal: "SIGINT" })).structured._tag).toBe(
          "HumanInControl"
        )
        expect((await agent.call("terminal_resize", { sessionId, cols: 100, rows: 30 })).structured._tag).toBe(
          "HumanInControl"
        )
        expect((await agent.call("terminal_read", { sessionId })).isError).toBe(false)
        expect((await agent.call("terminal_list")).isError).toBe(false)
        await type(page, "echo human-was-here")
        await waitForText(page, "\nhuman-was-here")
        if (server.kind === "mcp --http") {
          await page.screenshot({ path: path.join(screenshotDir(), "live-view.png") })
        }
        await handBack(page)

        const answered = await waited
        expect(answered.structured).toMatchObject({ status: "completed" })
        expect(answered.text).toContain("[human: in control for")
        const next = await agent.call("terminal_send", { sessionId, text: "echo agent-again" })
        expect(next.structured.human).toMatchObject({
          holder: refused.structured.holder,
          linesTyped: 1,
          endedBy: "hand-back"
        })
        expect(next.text).toMatch(/\[human: in control for \d+ s, 1 line typed\]/)
        expect(next.text).toContain("human-was-here")
        expect(next.text).toContain("agent-again")
        await waitForText(page, "agent-again")
        // the list comes over /live/events, pushed 20 ms after a change: not ordered with the terminal's bytes
        await page.waitForSelector(`#requests .request[data-task="${asked.structured.taskId}"]`, { state: "detached" })
        expect((await page.textContent("#requests")) ?? "").not.toContain("deploy check")

        // the audit, in the page
        await page.click("#audit-panel summary")
        await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("#audit tbody tr").length >= 4)
        const audit = await page.textContent("#audit")
        expect(audit).toContain("hand-back")
        expect(audit).toContain("echo human-was-here")
        expect(audit).toContain("echo agent-says")
        await agent.call("terminal_close", { sessionId })
        await page.close()
        await agent.client.close()
      })

      it("what a person types at read -s, a PIN at read -s -n 8, and at ssh-keygen's passphrase questions is in no recording, audit, model text or terminal_read; a replay reaches the last frame", async () => {
        const agent = await agentOf(server)
        const page = await signIn(browser!.context, server)
        const password = "hunter2-pw-Zq9"
        const passphrase = "s3cret-phrase-Kx7"
        const opened = await agent.call("terminal_open", { name: "secrets", record: true })
        const sessionId = opened.structured.sessionId as string
        await openInPage(page, sessionId)
        const texts: Array<string> = []

        const asked = await agent.call("terminal_send", {
          sessionId,
          text: "read -s -p 'Password: ' PW; echo; echo \"got ${#PW} chars\""
        })
        texts.push(asked.text)
        expect(asked.structured.waitReason).toBe("stdin_read")
        await waitForText(page, "Password:")
        await takeControl(page)
        await type(page, password)
        await waitForText(page, `got ${password.length} chars`)
        await handBack(page)
        const afterRead = await agent.call("terminal_send", { sessionId, text: "echo read-done" })
        texts.push(afterRead.text)
        expect(afterRead.structured.human.echoOffBytes).toBe(password.length + 1)
        expect(afterRead.text).toContain(`got ${password.length} chars`)

        // a PIN read a key at a time: echo off without canonical mode (issue 26, finding 6)
        const pin = "40917253"
        const askedPin = await agent.call("terminal_send", {
          sessionId,
          text: "read -s -n 8 -p 'PIN: ' PIN; echo; echo \"pin of ${#PIN}\""
        })
        texts.push(askedPin.text)
        expect(askedPin.structured.waitReason).toBe("stdin_read")
        await waitForText(page, "PIN:")
        await takeControl(page)
        await page.keyboard.type(pin, { delay: 5 })
        await waitForText(page, "pin of 8")
        await handBack(page)
        const afterPin = await agent.call("terminal_send", { sessionId, text: "echo pin-done" })
        texts.push(afterPin.text)
        expect(afterPin.structured.human.echoOffBytes).toBe(pin.length)

        const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), "at-key-"))
        const key = path.join(keyDir, "id_test")
        if (hasSshKeygen) {
          const keygen = await agent.call("terminal_send", {
            sessionId,
            text: `ssh-keygen -q -t ed25519 -C t -f ${key}`
          })
          texts.push(keygen.text)
          expect(keygen.structured.waitReason).toBe("stdin_read")
          await waitForText(page, "Enter passphrase")
          await takeControl(page)
          await type(page, passphrase)
          await waitForText(page, "Enter same passphrase again")
          await type(page, passphrase)
          await waitUntil(() => fs.existsSync(`${key}.pub`))
          await handBack(page)
          const afterKey = await agent.call("terminal_send", { sessionId, text: "echo keygen-done" })
          texts.push(afterKey.text)
          expect(afterKey.structured.human.echoOffBytes).toBe(2 * (passphrase.length + 1))
          // the passphrase was typed: the key opens with it (checked here, never through the terminal)
          execFileSync("ssh-keygen", ["-y", "-P", passphrase, "-f", key], { stdio: "ignore" })
          // not echoed, so not in the scrollback either
          expect(await terminalText(page)).not.toContain(passphrase)
        }
        const read = await agent.call("terminal_read", { sessionId, count: 1000 })
        texts.push(read.text)
        await agent.call("terminal_close", { sessionId })

        const model = texts.join("\n")
        expect(model).toContain("read-done")
        expect(model).not.toContain(password)
        expect(model).not.toContain(passphrase)
        expect(model).not.toContain(pin)
        expect(await terminalText(page)).not.toContain(password)
        const audit = await (await page.request.get(`${server.base}/live/audit/${sessionId}`)).text()
        expect(audit).toContain(`[human typed ${password.length + 1} bytes with echo off]`)
        expect(audit).not.toContain(password)
        expect(audit).not.toContain(passphrase)
        expect(audit).not.toContain(pin)
        // typed a key at a time, each key its own redacted entry (or one): never the digits
        expect(audit).toContain("bytes with echo off]")
        const recordings = await (await page.request.get(`${server.base}/live/recordings`)).json()
        const recording = recordings.find((entry: { sessionId: string }) => entry.sessionId === sessionId)
        expect(recording).toBeDefined()
        const cast = await (await page.request.get(`${server.base}/live/recordings/${recording.name}`)).text()
        expect(cast).toContain(`got ${password.length} chars`)
        expect(cast).toContain("[human typed")
        expect(cast).not.toContain(password)
        expect(cast).not.toContain(passphrase)
        expect(cast).not.toContain(pin)
        expect(fs.readdirSync(path.join(server.stateDir, "recordings"))).toContain(recording.name)

        // replay in the page, fast, to the last frame
        await page.click(`#recordings tr[data-recording="${recording.name}"] button.replay`, { timeout: 15_000 })
        await page.waitForSelector("#player:not([hidden])")
        await page.selectOption("#speed", "100")
        await page.waitForSelector("#player[data-state=ended]", { timeout: 30_000 })
        const frames = await page.$eval("#player", (node) => [node.dataset.frame, node.dataset.frames])
        expect(frames[0]).toBe(frames[1])
        expect(Number(frames[1])).toBe(cast.trim().split("\n").length - 1)
        expect(await terminalText(page, "replayTerm")).toContain(hasSshKeygen ? "keygen-done" : "read-done")
        fs.rmSync(keyDir, { recursive: true, force: true })
        await page.close()
        await agent.client.close()
      })
    }
  )

scenarios(() => startMcpHttp(["--record-input"]), "mcp --http")
scenarios(() => startServeHttp(["--record-input"]), "serve --http (the daemon)")
