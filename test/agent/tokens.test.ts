import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { openShell, owner, TestTerminal } from "../support/terminal.js"

const marker =
  /^… \[omitted (\d+) lines, (\d+) bytes; terminal_read \{"sessionId":"([^"]+)","offset":(\d+),"count":(\d+)\} shows them\] …$/m

layer(TestTerminal(), { excludeTestServices: true })("results a model can afford", (it) => {
  it.scoped("seq 1 10000 with the defaults: head and tail within 32 KiB, the marker names the terminal_read that shows the middle", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      const result = yield* send("seq 1 10000")
      expect(result.waitReason).toBe("prompt")
      expect(result.truncated).toBe(true)
      expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(32 * 1024)
      const lines = result.output.split("\n")
      expect(lines[0]).toBe("1")
      expect(lines[lines.length - 1]).toBe("10000")
      const found = marker.exec(result.output)
      expect(found).not.toBeNull()
      const [, omitted, , sessionId, offset, count] = found!
      expect(sessionId).toBe(id)
      const markerAt = lines.findIndex((line) => line.startsWith("… [omitted"))
      const lastHead = Number(lines[markerAt - 1])
      const firstTail = Number(lines[markerAt + 1])
      expect(firstTail - lastHead - 1).toBe(Number(omitted))
      const page = yield* service.read(owner, id, { offset: Number(offset), count: Number(count) })
      const shown = page.text.split("\n").map(Number)
      // the page covers the omitted lines exactly (and at most the line cut at the edge)
      expect(shown[shown.length - 1]).toBe(firstTail - 1)
      expect(shown[0]).toBeLessThanOrEqual(lastHead + 1)
      expect(shown[0]).toBeGreaterThanOrEqual(lastHead)
    }))
})
