import { Ids, PtyService } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RemoteTerminal } from "../src/index.js"
import { daemonLayer, tempDir } from "./support.js"

describe("RemoteTerminal over a daemon in this process", () => {
  it.scopedLive("open, send, read, close through the socket", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const socket = path.join(dir, "d.sock")
      yield* Layer.build(daemonLayer(socket))
      const context = yield* Layer.build(RemoteTerminal.layer({ socket }))
      const pty = yield* Effect.provide(PtyService.PtyService, context)
      const { owner } = yield* Effect.provide(RemoteTerminal.Connected, context)
      const opened = yield* pty.open(owner, {})
      const id = Ids.SessionId.make(opened.sessionId)
      const sent = yield* pty.send(owner, id, { text: "echo remote-$((6*7))" })
      expect(sent).toMatchObject({ output: "remote-42", waitReason: "prompt", exitCode: 0 })
      const listed = yield* pty.list(owner)
      expect(listed.map((s) => s.sessionId)).toEqual([opened.sessionId])
      const closed = yield* pty.close(owner, id)
      expect(closed.outcome).toBe("closed")
      const again = yield* pty.send(owner, id, { text: "true" }).pipe(Effect.flip)
      expect(again._tag).toBe("SessionNotFound")
    }))
})
