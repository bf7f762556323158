import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { discardPendingInput, makePtyWriter } from "../src/internal/pty/writer.js"

/** A FIFO opened non-blocking on both ends: a full buffer is EAGAIN, as on a pty master nobody reads. */
const fifo = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pty-writer-"))
  const file = path.join(dir, "fifo")
  execFileSync("mkfifo", [file])
  const reader = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  const writer = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
  const drain = (): Buffer => {
    const chunks: Array<Buffer> = []
    const buffer = Buffer.alloc(65536)
    for (;;) {
      try {
        const n = fs.readSync(reader, buffer, 0, buffer.length, null)
        if (n <= 0) break
        chunks.push(Buffer.from(buffer.subarray(0, n)))
      } catch {
        break
      }
    }
    return Buffer.concat(chunks)
  }
  const close = () => {
    fs.closeSync(reader)
    fs.closeSync(writer)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return { writer, drain, close }
}

const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill)

describe("the pty writer", () => {
  it.live("completes a write only once all of it is in the kernel, in call order, across EAGAIN", () =>
    Effect.acquireUseRelease(Effect.sync(fifo), (pipe) =>
      Effect.gen(function*() {
        const writer = makePtyWriter(pipe.writer, () => true)
        const first = yield* Effect.fork(writer.write(bytes(100_000, 1)))
        const second = yield* Effect.fork(writer.write(bytes(50_000, 2)))
        yield* Effect.sleep(20)
        expect(first.unsafePoll()).toBeNull()
        expect(second.unsafePoll()).toBeNull()
        const received: Array<Buffer> = []
        while (first.unsafePoll() === null || second.unsafePoll() === null) {
          received.push(pipe.drain())
          yield* Effect.sleep(2)
        }
        received.push(pipe.drain())
        const all = Buffer.concat(received)
        expect(all.length).toBe(150_000)
        expect(all.subarray(0, 100_000).every((b) => b === 1)).toBe(true)
        expect(all.subarray(100_000).every((b) => b === 2)).toBe(true)
      }), (pipe) => Effect.sync(pipe.close)))

  it.live("a small write lands at once, in the call; a closed writer or a closed pty completes writes without writing", () =>
    Effect.acquireUseRelease(Effect.sync(fifo), (pipe) =>
      Effect.gen(function*() {
        let open = true
        const writer = makePtyWriter(pipe.writer, () => open)
        yield* writer.write(new TextEncoder().encode("hello\r"))
        expect(pipe.drain().toString()).toBe("hello\r")
        // it completes in the call, without suspending its fiber: `runSync` throws on an asynchronous effect
        Effect.runSync(writer.write(new TextEncoder().encode("again\r")))
        expect(pipe.drain().toString()).toBe("again\r")
        open = false
        yield* writer.write(bytes(10, 3))
        expect(pipe.drain().length).toBe(0)
        open = true
        const blocked = yield* Effect.fork(writer.write(bytes(200_000, 4)))
        yield* Effect.sleep(10)
        writer.close()
        yield* Fiber.join(blocked)
        yield* writer.write(bytes(10, 5))
        const written = pipe.drain()
        expect(written.length).toBeLessThan(200_000)
        expect(written.every((b) => b === 4)).toBe(true)
      }), (pipe) => Effect.sync(pipe.close)))

  it("discarding the input of a terminal that does not exist drops nothing", () => {
    expect(discardPendingInput("/dev/pts/does-not-exist")).toBe(0)
  })
})
