/**
 * The live view works under its own Content-Security-Policy (issue 26): a real Chromium signs in to
 * `agent-terminal mcp --http`, opens a terminal that prints 16-colour, 256-colour and 24-bit colour text,
 * and the test collects every CSP violation (the `securitypolicyviolation` events and the console's
 * "Refused to …" messages): there are none, and xterm.js draws each colour. The policy keeps
 * `style-src 'self'` plus a nonce new for each load of the page, never `'unsafe-inline'`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { built } from "../daemon/support.js"
import { hasChromium, launch, waitForText } from "../support/browser.js"
import { agentOf, type LiveServer, startMcpHttp } from "./support.js"

let browser: Awaited<ReturnType<typeof launch>> | undefined
let server: LiveServer

beforeAll(async () => {
  if (!hasChromium || !built) return
  browser = await launch()
  server = await startMcpHttp()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe.skipIf(!hasChromium || !built)(
  "the live view under its own policy (skipped without /usr/bin/chromium or a build)",
  () => {
    it("no CSP violation in Chromium, and xterm renders 16-colour, 256-colour and 24-bit colour", async () => {
      const agent = await agentOf(server)
      const page = await browser!.context.newPage()
      const refused: Array<string> = []
      page.on("console", (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text())
      })
      await page.addInitScript(() => {
        const seen: Array<string> = []
        ;(globalThis as any).cspViolations = seen
        ;(globalThis as any).document.addEventListener("securitypolicyviolation", (event: any) => {
          seen.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample ?? ""}`)
        })
      })
      const answer = await page.goto(`${server.base}/#token=${server.token}`)
      const policy = answer?.headers()["content-security-policy"] ?? ""
      await page.waitForSelector("#connection.live", { timeout: 15_000 })
      // the policy of the signed-in page: its own files, a per-load nonce, no inline style or script
      const signed = await page.request.get(`${server.base}/`)
      const nonced = signed.headers()["content-security-policy"] ?? ""
      expect(nonced).toMatch(/style-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}'/)
      expect(nonced).toContain("script-src 'self'")
      expect(`${policy} ${nonced}`).not.toContain("unsafe-inline")
      expect(nonced).not.toBe((await page.request.get(`${server.base}/`)).headers()["content-security-policy"])

      const opened = await agent.call("terminal_open", { name: "colours" })
      const sessionId = opened.structured.sessionId as string
      await page.click(`#sessions tr[data-session="${sessionId}"]`, { timeout: 15_000 })
      await page.waitForSelector("#terminal[data-ready=true]")
      await agent.call("terminal_send", {
        sessionId,
        text: "printf '\\033[31mRED16\\033[0m \\033[38;5;208mORANGE256\\033[0m \\033[38;2;10;200;30mGREEN24\\033[0m\\n'"
      })
      await waitForText(page, "GREEN24")
      // the buffer has the text before the DOM renderer draws it (on an animation frame): wait for the spans
      const colours = await (await page.waitForFunction(
        () => {
          const doc = (globalThis as any).document
          const colourOf = (text: string) => {
            for (const span of doc.querySelectorAll("#terminal .xterm-rows span")) {
              if (span.textContent === text) return (globalThis as any).getComputedStyle(span).color as string
            }
            return undefined
          }
          const found = { red: colourOf("RED16"), orange: colourOf("ORANGE256"), green: colourOf("GREEN24") }
          return Object.values(found).every((colour) => colour !== undefined) ? found : undefined
        },
        undefined,
        { timeout: 15_000 }
      )).jsonValue()
      // xterm 6's default theme: red #cc0000 (its style element); colour 208 of the 256 is #ff8700 (same); the
      // 24-bit one as given (the cell's own style)
      expect(colours).toEqual({ red: "rgb(204, 0, 0)", orange: "rgb(255, 135, 0)", green: "rgb(10, 200, 30)" })
      const violations = await page.evaluate(() => (globalThis as any).cspViolations as Array<string>)
      expect(violations).toEqual([])
      expect(refused).toEqual([])
      await agent.call("terminal_close", { sessionId })
      await page.close()
      await agent.client.close()
    }, 90_000)
  }
)
