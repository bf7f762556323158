/**
 * The live view's WebSockets attacked for real (issue 26, findings 5 and 7; SCENARIOS 48), against
 * `agent-terminal mcp --http`, with a raw WebSocket client (test/support/ws.ts): a 90 MiB frame from a
 * signed-in viewer; more sockets than a sign-in may hold; a flood of messages in one write; and a second
 * viewer who claims the name of the person holding the control lease. Meanwhile another owner's calls are
 * answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { attemptLog } from "../support/attempts.js"
import { connectHttp, type HttpServer, rawRequest, rssBytes, startHttpServer, stopHttpServer } from "../support/http.js"
import { bodyOf, structured } from "../support/mcp.js"
import * as Ws from "../support/ws.js"

const record = attemptLog("websocket")
let server: HttpServer
let agent: Client
let sessionId: string
const sockets: Array<Ws.RawSocket> = []

// the facts from structuredContent, the output (or a page's text) from the text (sent once, there)
const call = async (name: string, args: Record<string, unknown> = {}) => {
  const result = await agent.callTool({ name, arguments: args }, undefined, { timeout: 30_000 })
  return { ...structured(result), output: bodyOf(result), text: bodyOf(result) } as Record<string, any>
}

beforeAll(async () => {
  server = await startHttpServer()
  agent = (await connectHttp(server)).client
  sessionId = (await call("terminal_open", { name: "watched" })).sessionId
})

afterAll(async () => {
  for (const socket of sockets) socket.end()
  await agent.close().catch(() => undefined)
  await stopHttpServer(server)
})

const signIn = async (to: HttpServer = server): Promise<string> => {
  const answer = await rawRequest(to.url, {
    path: "/live/login",
    headers: { authorization: `Bearer ${to.token}`, origin: to.url.origin }
  })
  expect(answer.status).toBe(204)
  return /agent_terminal_session=([^;]+)/.exec(String(answer.headers["set-cookie"]))![1]!
}

const open = async (cookie: string, route: string) => {
  const socket = await Ws.open(`ws://${server.url.host}${route}`, {
    cookie: `agent_terminal_session=${cookie}`,
    origin: server.url.origin
  })
  sockets.push(socket)
  return socket
}

const echoAnswers = async (word: string) => {
  const result = await call("terminal_send", { sessionId, text: `echo ${word}` })
  // after a person held the control, the output begins with what happened meanwhile
  expect(result.output.split("\n").at(-1)).toBe(word)
}

describe("the live view's sockets are bounded, and a person is their sign-in", () => {
  it(
    "a 90 MiB frame from a signed-in viewer: the connection closes at its header, the server grows < 16 MiB",
    async () => {
      const cookie = await signIn()
      const viewer = await open(cookie, `/live/terminal/${sessionId}`)
      expect(viewer.status).toBe(101)
      const pid = server.process.pid!
      const before = rssBytes(pid)
      let peak = before
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssBytes(pid))
      }, 10)
      const total = 90 * 1024 * 1024
      viewer.socket.write(Ws.frame(2, Buffer.alloc(0), total))
      const chunk = Buffer.alloc(1024 * 1024, 0x61)
      let sent = 0
      while (sent < total && !viewer.isClosed()) {
        const drained = viewer.socket.write(chunk)
        sent += chunk.length
        if (!drained) {
          await Promise.race([
            new Promise((resolve) => viewer.socket.once("drain", resolve)),
            viewer.closed,
            new Promise((resolve) => setTimeout(resolve, 2000))
          ])
        }
      }
      await Promise.race([viewer.closed, new Promise((resolve) => setTimeout(resolve, 10_000))])
      clearInterval(sampler)
      peak = Math.max(peak, rssBytes(pid))
      const grown = (peak - before) / (1024 * 1024)
      record(
        "mcp --http, /live/terminal/:id",
        "a signed-in viewer sends one binary frame declaring 90 MiB, then its bytes",
        `closed: ${viewer.isClosed()} after ${Math.round(sent / 1048576)} MiB written; server RSS +${
          grown.toFixed(1)
        } MiB`,
        viewer.isClosed() && grown < 16
      )
      expect(viewer.isClosed()).toBe(true)
      expect(grown).toBeLessThan(16)
      await echoAnswers("after-the-frame")
    },
    60_000
  )

  it("a sign-in holds at most 16 sockets; another sign-in still opens; a closed one frees its place", async () => {
    const first = await signIn()
    const held: Array<Ws.RawSocket> = []
    for (let i = 0; i < 16; i++) {
      const socket = await open(first, "/live/events")
      expect(socket.status).toBe(101)
      held.push(socket)
    }
    const refused = await open(first, "/live/events")
    const other = await open(await signIn(), "/live/events")
    record(
      "mcp --http, /live/events",
      "a 17th WebSocket with one sign-in's cookie",
      `${refused.status}; another sign-in's socket meanwhile: ${other.status}`,
      refused.status === 429
    )
    expect(refused.status).toBe(429)
    expect(other.status).toBe(101)
    held[0]!.end()
    const deadline = Date.now() + 10_000
    let again = 0
    while (Date.now() < deadline) {
      const socket = await open(first, "/live/events")
      again = socket.status
      if (again === 101) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(again).toBe(101)
    for (const socket of held) socket.end()
    await echoAnswers("after-the-sockets")
  }, 60_000)

  it("2000 messages in one write overflow the socket's inbox: the server closes it (1008)", async () => {
    const viewer = await open(await signIn(), `/live/terminal/${sessionId}`)
    expect(viewer.status).toBe(101)
    await viewer.next((frame) => frame.type === "text" && frame.text.includes("\"snapshot\""))
    const flood = Buffer.concat(Array.from({ length: 2000 }, () => Ws.json({ type: "resize", cols: 80, rows: 24 })))
    viewer.socket.write(flood)
    const closing = await viewer.next((frame) => frame.type === "close")
    // the close handshake, as a client answers it
    if (closing !== undefined) viewer.socket.write(Ws.frame(8, Buffer.from([0x03, 0xe8])))
    await Promise.race([viewer.closed, new Promise((resolve) => setTimeout(resolve, 10_000))])
    record(
      "mcp --http, /live/terminal/:id",
      "2000 messages in one write (faster than they are answered)",
      `close ${closing?.type === "close" ? closing.code : "none"}; connection closed: ${viewer.isClosed()}`,
      viewer.isClosed()
    )
    expect(closing).toEqual({ type: "close", code: 1008 })
    expect(viewer.isClosed()).toBe(true)
    await echoAnswers("after-the-flood")
  }, 60_000)

  it(
    "a second viewer who claims the holder's name cannot take or type; default names do not share a lease",
    async () => {
      const message = (socket: Ws.RawSocket, test: (message: Record<string, any>) => boolean) =>
        socket.next((frame) => frame.type === "text" && test(JSON.parse(frame.text))).then((frame) =>
          frame?.type === "text" ? JSON.parse(frame.text) as Record<string, any> : undefined
        )
      const snapshot = (socket: Ws.RawSocket) => message(socket, (sent) => sent.type === "snapshot")
      for (const name of ["ops", undefined]) {
        const query = name === undefined ? "" : `?person=${name}`
        const holder = await open(await signIn(), `/live/terminal/${sessionId}${query}`)
        await snapshot(holder)
        holder.socket.write(Ws.json({ type: "take" }))
        const taken = await message(holder, (sent) => sent.type === "control")
        expect(taken?.control.holder).toMatch(
          new RegExp(`^person:${name ?? "person"} \\(web-[0-9a-f]{12}\\)$`)
        )
        const intruder = await open(await signIn(), `/live/terminal/${sessionId}${query}`)
        await snapshot(intruder)
        intruder.socket.write(Ws.json({ type: "take" }))
        const refused = (await message(intruder, (sent) => sent.type === "error"))!
        const word = `stolen-${name ?? "default"}`
        intruder.socket.write(Ws.json({ type: "input", data: `echo ${word}\r` }))
        const notInControl = (await message(intruder, (sent) => sent.type === "error" && sent.tag === "NotInControl"))!
        record(
          "mcp --http, the control lease",
          `a second sign-in opens the terminal ${name === undefined ? "with the default name" : `as ?person=${name}`}` +
            " while the first holds the lease, then takes and types",
          `take: ${refused.tag}; input: ${notInControl.tag}`,
          refused.tag === "HumanInControl" && notInControl.tag === "NotInControl"
        )
        expect(refused.tag).toBe("HumanInControl")
        expect(notInControl.tag).toBe("NotInControl")
        holder.socket.write(Ws.json({ type: "release" }))
        await message(holder, (sent) => sent.type === "control" && sent.note !== undefined)
        const read = await call("terminal_read", { sessionId, count: 200 })
        expect(read.text).not.toContain(word)
        holder.end()
        intruder.end()
      }
      await echoAnswers("after-the-claims")
    },
    60_000
  )
})

describe("a viewer cannot hold the server's stop", () => {
  it(
    "a socket that never answers the close frame is cut a grace after SIGTERM (the WebSocket library waits 30 s)",
    async () => {
      const own = await startHttpServer()
      try {
        const silent = await Ws.open(`ws://${own.url.host}/live/events`, {
          cookie: `agent_terminal_session=${await signIn(own)}`,
          origin: own.url.origin
        })
        sockets.push(silent)
        expect(silent.status).toBe(101)
        await silent.next((frame) => frame.type === "text" && frame.text.includes("\"sessions\""))
        const stopping = Date.now()
        own.process.kill("SIGTERM")
        const closing = await silent.next((frame) => frame.type === "close")
        // no answer to the close frame: the server cuts the connection itself, then exits
        const code = await Promise.race([
          own.exited,
          new Promise((resolve) => setTimeout(() => resolve("running"), 20_000))
        ])
        const seconds = (Date.now() - stopping) / 1000
        record(
          "mcp --http, /live/events",
          "a signed-in viewer that never answers the close frame, at SIGTERM",
          `close frame: ${closing?.type ?? "none"}; exit ${String(code)} after ${seconds.toFixed(1)} s`,
          code === 0
        )
        expect(closing?.type).toBe("close")
        expect(silent.isClosed()).toBe(true)
        expect(code).toBe(0)
      } finally {
        await stopHttpServer(own)
      }
    },
    60_000
  )
})
