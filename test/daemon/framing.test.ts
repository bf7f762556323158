/**
 * The daemon's socket attacked for real (issue 26, finding 4; SCENARIOS 48): a real `agent-terminal serve`,
 * one raw connection that never says `Hello`, and another owner (`mcp --daemon --owner bob`, a real MCP
 * client) whose `terminal_list` must keep being answered meanwhile. The attacks: the bytes that stalled the
 * daemon before (a msgpack header declaring 2^32-1 items, then 1.6 MiB slowly), a frame within the bound
 * sent slowly and never finished, and a connection that sends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as net from "node:net"
import { attemptLog } from "../support/attempts.js"
import { rssBytes } from "../support/http.js"
import { built, connectMcp, type Daemon, makeHome, sleep, startDaemon } from "./support.js"

const record = attemptLog("daemon-framing")
let home: ReturnType<typeof makeHome>
let daemon: Daemon
let bob: Awaited<ReturnType<typeof connectMcp>>

beforeAll(async () => {
  if (!built) return
  home = makeHome()
  daemon = await startDaemon(home.env)
  bob = await connectMcp(home.env, ["--daemon", "--owner", "bob"])
  await bob.call("terminal_open", { name: "bobs" })
}, 60_000)

afterAll(async () => {
  await bob?.client.close().catch(() => undefined)
  await daemon?.stop()
  home?.dispose()
})

/** A raw connection to the daemon's socket: whether (and when) the daemon closed it. */
const connect = () =>
  new Promise<{ socket: net.Socket; closed: () => boolean; closedAt: Promise<number> }>((resolve, reject) => {
    const socket = net.createConnection({ path: home.socket })
    let closed = false
    const closedAt = new Promise<number>((done) =>
      socket.once("close", () => {
        closed = true
        done(Date.now())
      })
    )
    socket.on("error", () => undefined)
    socket.once("connect", () => resolve({ socket, closed: () => closed, closedAt }))
    socket.once("error", reject)
  })

/** Bob's `terminal_list`, over and over while `running()`: how many answered (each must, with his terminal). */
const bobKeepsAnswering = async (running: () => boolean) => {
  let answers = 0
  while (running()) {
    const listed = await bob.call("terminal_list")
    expect(listed.isError).toBe(false)
    expect(listed.sessions.map((session: { name: string }) => session.name)).toEqual(["bobs"])
    answers++
    await sleep(20)
  }
  return answers
}

describe.runIf(built)("the daemon's frames cannot stall it", () => {
  it("a msgpack header declaring 2^32-1 items, then 1.6 MiB slowly, without Hello: closed at once", async () => {
    const before = rssBytes(daemon.pid)
    const attacker = await connect()
    const started = Date.now()
    attacker.socket.write(Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]))
    let sent = 5
    const sending = (async () => {
      const piece = Buffer.alloc(16 * 1024, 0x61)
      while (sent < 1.6 * 1024 * 1024 && !attacker.closed()) {
        attacker.socket.write(piece)
        sent += piece.length
        await sleep(20)
      }
    })()
    const answers = await bobKeepsAnswering(() => !attacker.closed() && Date.now() - started < 20_000)
    await sending
    const closedAfter = (await attacker.closedAt) - started
    const grown = (rssBytes(daemon.pid) - before) / (1024 * 1024)
    record(
      "serve, the Unix socket",
      "no Hello; a msgpack array header declaring 2^32-1 items, then 16 KiB every 20 ms up to 1.6 MiB",
      `closed after ${closedAfter} ms (${Math.round(sent / 1024)} KiB written); bob's terminal_list answered ` +
        `${answers} times meanwhile; daemon RSS ${grown >= 0 ? "+" : ""}${grown.toFixed(1)} MiB`,
      attacker.closed()
    )
    expect(attacker.closed()).toBe(true)
    expect(grown).toBeLessThan(16)
    expect((await bob.call("terminal_list")).isError).toBe(false)
  }, 60_000)

  it(
    "a frame within the bound sent slowly and never finished, and a silent connection: closed at the Hello deadline",
    async () => {
      const slow = await connect()
      const silent = await connect()
      const started = Date.now()
      const header = Buffer.alloc(4)
      header.writeUInt32BE(60_000)
      slow.socket.write(header)
      const dripping = (async () => {
        while (!slow.closed() && Date.now() - started < 20_000) {
          slow.socket.write(Buffer.alloc(100, 0x62))
          await sleep(50)
        }
      })()
      const answers = await bobKeepsAnswering(() =>
        (!slow.closed() || !silent.closed()) && Date.now() - started < 20_000
      )
      await dripping
      const slowAfter = (await slow.closedAt) - started
      const silentAfter = (await silent.closedAt) - started
      record(
        "serve, the Unix socket",
        "no Hello; a 60 000-byte frame sent 100 bytes every 50 ms, and a connection that sends nothing",
        `closed after ${slowAfter} ms and ${silentAfter} ms (the Hello deadline: 5 s); bob answered ${answers} times`,
        slow.closed() && silent.closed()
      )
      expect(slow.closed()).toBe(true)
      expect(silent.closed()).toBe(true)
      expect(answers).toBeGreaterThan(0)
      expect(daemon.log()).toContain("no Hello in time")
    },
    60_000
  )
})
