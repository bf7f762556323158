/**
 * `snapshot`: the screen of a terminal now, in process over real bash and vim — the rows, the cursor, the
 * size, sending nothing and waiting for nothing; a send in flight keeps its slot and completes.
 */
import { Ids, PtyService } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { failureOf, openShell, otherOwner, owner, tempDir, TestTerminal } from "../support/terminal.js"

/** Take snapshots until one satisfies `done` (each is immediate: this polls the screen, never the send). */
const snapshotUntil = (
  service: PtyService.PtyService["Type"],
  id: Ids.SessionId,
  done: (snapshot: PtyService.SnapshotResult) => boolean
) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 400; attempt++) {
      const snapshot = yield* service.snapshot(owner, id)
      if (done(snapshot)) return snapshot
      yield* Effect.sleep("25 millis")
    }
    return yield* Effect.dieMessage("the screen never showed what was expected")
  })

layer(TestTerminal(), { excludeTestServices: true })("snapshot", (it) => {
  it.scoped("a shell's screen: the prompt, the cursor after it, the size; nothing is sent", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell({ cols: 90, rows: 20 })
      yield* send("echo snap-one")
      const first = yield* service.snapshot(owner, id)
      expect(first).toMatchObject({ cols: 90, rows: 20, alternate: false, busy: false })
      expect(first.sessionStatus._tag).toBe("running")
      const rows = first.screen.rows
      expect(rows).toContain("snap-one")
      const cursorRow = rows[first.screen.cursor.row]!
      expect(cursorRow.endsWith("$")).toBe(true)
      expect(first.screen.cursor.col).toBe(cursorRow.length + 1)
      // a snapshot writes nothing: the transcript and the screen are the same after two more
      const before = yield* service.read(owner, id, {})
      yield* service.snapshot(owner, id)
      const again = yield* service.snapshot(owner, id)
      expect(again).toEqual(first)
      expect((yield* service.read(owner, id, {})).text).toBe(before.text)
      // the size follows a resize
      yield* service.resize(owner, id, { cols: 100, rows: 30 })
      expect(yield* service.snapshot(owner, id)).toMatchObject({ cols: 100, rows: 30 })
    }))

  it.scoped("vim: the alternate screen, its rows as drawn", () =>
    Effect.gen(function*() {
      // in a directory of its own: vim keeps its swap file of an unnamed buffer in the working directory
      const { id, keys, send, service } = yield* openShell({ rows: 24, cwd: yield* tempDir() })
      yield* send("vim -u NONE -N", { waitFor: { screenStableMs: 300 } })
      yield* keys(["i"], { waitFor: { screenStableMs: 200 } })
      yield* send("hello from vim", { waitFor: { screenStableMs: 200 } })
      const shown = yield* snapshotUntil(service, id, (s) => s.screen.rows[0] === "hello from vim")
      expect(shown.alternate).toBe(true)
      expect(shown.screen.rows.filter((row) => row === "~").length).toBeGreaterThan(15)
      // the send's text ends with Enter: vim opened a second line and the cursor is at its start
      expect(shown.screen.cursor).toEqual({ row: 1, col: 0 })
      yield* keys(["Escape", ":", "q", "!", "Enter"])
      const back = yield* snapshotUntil(service, id, (s) => !s.alternate)
      expect(back.screen.rows.join("\n")).toContain("vim -u NONE -N")
    }))

  it.scoped("during a running send: the snapshot answers, the send keeps its slot and completes", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      const running = yield* Effect.fork(send("sleep 2; echo slept-through"))
      const during = yield* snapshotUntil(service, id, (s) => s.busy)
      expect(during.screen.rows.join("\n")).toContain("sleep 2; echo slept-through")
      // the slot is still the send's: another send is refused, the snapshot is not
      const refused = yield* Effect.exit(service.send(owner, id, { text: "echo no" }))
      expect(failureOf(refused)?._tag).toBe("SendActive")
      expect((yield* service.snapshot(owner, id)).busy).toBe(true)
      const result = yield* Fiber.join(running)
      expect(result.waitReason).toBe("prompt")
      expect(result.output).toBe("slept-through")
      expect((yield* service.snapshot(owner, id)).busy).toBe(false)
    }))

  it.scoped("an exited session shows its last screen; another owner's and an unknown id are refused", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell()
      yield* send("echo last-words; exit 3")
      const last = yield* snapshotUntil(service, id, (s) => s.sessionStatus._tag === "exited")
      expect(last.sessionStatus).toMatchObject({ _tag: "exited", exitCode: 3 })
      expect(last.screen.rows).toContain("last-words")
      const foreign = yield* Effect.exit(service.snapshot(otherOwner, id))
      expect(failureOf(foreign)?._tag).toBe("ForeignSession")
      const unknown = yield* Effect.exit(service.snapshot(owner, Ids.SessionId.make("s-nosuchsession")))
      expect(failureOf(unknown)?._tag).toBe("SessionNotFound")
    }))
})
