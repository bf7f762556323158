import { PtyBackend } from "@agent-terminal/core"
import { NodePtyBackend } from "@agent-terminal/node"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const decoder = new TextDecoder()

layer(NodePtyBackend.layer, { excludeTestServices: true })("flushOutput on a real pty", (it) => {
  it.scoped("reads what the pty holds while node's own reading cannot run: each byte once, in order", () =>
    Effect.gen(function*() {
      const backend = yield* PtyBackend.PtyBackend
      const program = yield* backend.spawn({
        file: "/bin/sh",
        args: ["-c", "printf 'one\\n'; read a; printf 'two:%s\\n' \"$a\"; read b"],
        cwd: "/",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm" },
        cols: 80,
        rows: 24,
        label: "flush-output-test",
        disposeGraceMs: 200
      })
      const flushOutput = program.flushOutput
      expect(flushOutput).toBeDefined()
      let text = ""
      /** Whatever the mailbox holds, without waiting (a take from a non-empty mailbox completes at once). */
      const takeNow = () => {
        while (Option.getOrElse(program.output.unsafeSize(), () => 0) > 0) {
          const [chunks] = Effect.runSync(program.output.takeAll)
          for (const chunk of chunks) text += decoder.decode(chunk)
        }
      }
      // The first line comes through node-pty's reads, on the event loop.
      while (!text.includes("one")) {
        yield* Effect.sleep(5)
        takeNow()
      }
      yield* program.write("x\r")
      // Now the event loop is held (one synchronous stretch): only `flushOutput` can bring the answer in.
      const pulled = yield* Effect.sync(() => {
        const deadline = Date.now() + 10_000
        while (!text.includes("two:x") && Date.now() < deadline) {
          Effect.runSync(flushOutput!)
          takeNow()
        }
        return text.includes("two:x")
      })
      expect(pulled).toBe(true)
      // Then node reads on as before: nothing arrives twice, nothing out of order.
      yield* Effect.sleep(100)
      takeNow()
      expect(text.split("two:x").length).toBe(2)
      expect(text.split("one").length).toBe(2)
      expect(text.indexOf("one")).toBeLessThan(text.indexOf("two:x"))
      expect(text.replace(/\r/g, "")).toBe("one\nx\ntwo:x\n")
    }))
})
