/**
 * ReDoS against the whole server (issue 26, finding 3; SCENARIOS 48): one owner's `waitFor` regex of each
 * class that froze JavaScript's backtracking engine — `(a|a)+$`, `(a+){20}$`, `a*a*a*$` — over long lines of
 * `a` that end in `!` (no match: the backtracking worst case), on a real `agent-terminal mcp --http`, while
 * another owner's `echo` keeps being answered. With JavaScript's engine the first of them blocked the event
 * loop for good on a 40-character line; on RE2 every regex run is linear and bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { attemptLog } from "../support/attempts.js"
import { connectHttp, type HttpServer, startHttpServer, stopHttpServer } from "../support/http.js"
import { bodyOf, structured } from "../support/mcp.js"

const record = attemptLog("redos")
let server: HttpServer
const clients: Array<Client> = []

beforeAll(async () => {
  server = await startHttpServer()
})

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)))
  await stopHttpServer(server)
})

const owner = async () => {
  const { client } = await connectHttp(server)
  clients.push(client)
  // the facts from structuredContent, the output from the text (sent once, there)
  const call = async (name: string, args: Record<string, unknown>, timeout = 60_000) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout })
    return { ...structured(result), output: bodyOf(result) } as Record<string, any>
  }
  const { sessionId } = await call("terminal_open", {})
  return { call, sessionId: sessionId as string }
}

/** Lines of 50 000 `a` and a `!`, 30 of them, a little apart: the regex looks at each as it comes. */
const flood = "python3 -c \"import sys, time\n" +
  "for i in range(30):\n" +
  "    sys.stdout.write('a' * 50000 + '!\\n'); sys.stdout.flush(); time.sleep(0.05)\""

describe("a waitFor regex cannot stall the server", () => {
  for (const regex of ["(a|a)+$", "(a+){20}$", "a*a*a*$"]) {
    it(`${regex} over 30 lines of 50 000 characters, while another owner's echo answers`, async () => {
      const attacker = await owner()
      const other = await owner()
      let done = false
      const attack = attacker.call("terminal_send", {
        sessionId: attacker.sessionId,
        text: flood,
        waitFor: { regex },
        timeoutMs: 120_000
      }, 180_000).finally(() => {
        done = true
      })
      const answers: Array<string> = []
      // another owner's sends, one after the other while the regex runs: each must answer (a frozen loop
      // answers none; 20 s is far above an echo's usual few ms, so this asserts "answers", not a time)
      for (let i = 0; !done && i < 200; i++) {
        const result = await other.call("terminal_send", { sessionId: other.sessionId, text: `echo ping-${i}` }, 20_000)
        expect(result.output).toBe(`ping-${i}`)
        answers.push(result.output)
      }
      const result = await attack
      expect(["prompt", "matched"]).toContain(result.waitReason)
      expect(answers.length).toBeGreaterThan(0)
      record(
        "mcp --http, waitFor",
        `regex ${regex} over 30 lines of 50 000 'a' + '!', another owner sending echo meanwhile`,
        `the wait ended by ${result.waitReason}; the other owner's echo answered ${answers.length} times meanwhile`,
        true
      )
    }, 240_000)
  }
})
