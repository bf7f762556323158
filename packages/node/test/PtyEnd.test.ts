import { describe, expect, it } from "@effect/vitest"
import * as pty from "node-pty"
import { readToTheEnd } from "../src/internal/pty/writer.js"

interface Internals {
  readonly _fd: number
  readonly _socket: { push: (chunk: Buffer | null) => boolean }
}

/**
 * A program that answers one line and then stays: its answer is in the kernel, unread, when the test
 * (holding the event loop) ends node's stream the way libuv does at a hangup after a partial read.
 */
const endEarly = async (hooked: boolean): Promise<string> => {
  const terminal = pty.spawn("/bin/sh", ["-c", "printf 'ready\\n'; read x; printf 'last:%s\\n' \"$x\"; exec sleep 5"], {
    cols: 80,
    rows: 24,
    cwd: "/",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    encoding: null
  })
  const internals = terminal as unknown as Internals
  if (hooked) readToTheEnd(internals._socket, internals._fd)
  let text = ""
  terminal.onData((data: string | Buffer) => {
    text += data.toString()
  })
  // node-pty reports an end it did not expect as an error: the unhooked run ends that way
  const socket = internals._socket as unknown as NodeJS.EventEmitter
  socket.on("error", () => {})
  try {
    while (!text.includes("ready")) await new Promise((resolve) => setTimeout(resolve, 5))
    terminal.write("go\r")
    // the event loop held until the program has answered (the answer waits in the kernel), then the end
    const deadline = Date.now() + 300
    while (Date.now() < deadline) {
      // busy: node reads nothing meanwhile
    }
    internals._socket.push(null)
    await new Promise((resolve) => setTimeout(resolve, 100))
    return text.replace(/\r/g, "")
  } finally {
    terminal.kill("SIGKILL")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("the end of a pty's output", () => {
  it("what the program wrote before node's stream ended is read and delivered ahead of the end", async () => {
    expect(await endEarly(true)).toBe("ready\ngo\nlast:go\n")
  })

  it("without it, that output is lost (the failure the hook exists for)", async () => {
    expect(await endEarly(false)).toBe("ready\n")
  })
})
