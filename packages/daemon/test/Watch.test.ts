import { Ids, PtyService, TaskRuntime, type Watch } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { describe, expect, it } from "@effect/vitest"
import xterm from "@xterm/headless"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { RemoteTerminal } from "../src/index.js"
import { daemonLayer, owner, tempDir, testConfig } from "./support.js"

/** A browser's terminal, as the live view would initialise it: the snapshot, its pending bytes, then the output. */
const replay = (
  snapshot: { cols: number; rows: number; data: string; pending: Uint8Array },
  chunks: ReadonlyArray<Uint8Array>,
  whole = false
) =>
  Effect.async<ReadonlyArray<string>>((resume) => {
    const terminal = new xterm.Terminal({
      cols: snapshot.cols,
      rows: snapshot.rows,
      scrollback: 100_000,
      allowProposedApi: true
    })
    terminal.write(snapshot.data)
    terminal.write(snapshot.pending)
    for (const chunk of chunks) terminal.write(chunk)
    terminal.write("", () => {
      const buffer = terminal.buffer.active
      const rows: Array<string> = []
      const from = whole ? 0 : buffer.baseY
      for (let y = from; y < buffer.baseY + terminal.rows; y++) {
        const line = buffer.getLine(y)
        const text = line?.translateToString(true) ?? ""
        // a row the terminal wrapped continues the previous line (the transcript keeps logical lines)
        if (whole && line?.isWrapped === true && rows.length > 0) rows[rows.length - 1] += text
        else rows.push(text)
      }
      for (let i = 0; i < rows.length; i++) rows[i] = rows[i]!.replace(/ +$/, "")
      while (whole && rows.length > 0 && rows[rows.length - 1] === "") rows.pop()
      terminal.dispose()
      resume(Effect.succeed(rows))
    })
  })

/** What the service's own screen shows, via a fresh watch's snapshot alone. */
const screenNow = (pty: PtyService.PtyService["Type"], owner: Ids.OwnerId, id: Ids.SessionId) =>
  Effect.scoped(Effect.flatMap(pty.watch!(owner, id), (watch) => replay(watch.snapshot, [])))

/**
 * The chunks taken so far, replayed after the snapshot, show the service's screen now (the reader may lag a
 * little behind the send that just returned: wait for it, a bounded while).
 */
const catchesUp = (
  pty: PtyService.PtyService["Type"],
  owner: Ids.OwnerId,
  id: Ids.SessionId,
  snapshot: Parameters<typeof replay>[0],
  chunks: () => ReadonlyArray<Uint8Array>
) =>
  Effect.gen(function*() {
    const now = yield* screenNow(pty, owner, id)
    const replayed = yield* Effect.suspend(() => replay(snapshot, chunks())).pipe(
      Effect.repeat({
        until: (rows) => rows.join("\n") === now.join("\n"),
        schedule: Schedule.passthrough(Schedule.spaced(20).pipe(Schedule.upTo(5_000)))
      })
    )
    expect(replayed).toEqual(now)
    // and every line since the snapshot, once and in order: the whole replayed buffer is the transcript's tail
    const lines = yield* replay(snapshot, chunks(), true)
    const transcript = yield* pty.read(owner, id, { count: lines.length })
    const tail = transcript.text.split("\n").map((line) => line.replace(/ +$/, ""))
    while (tail.length > 0 && tail[tail.length - 1] === "") tail.pop()
    expect(lines.slice(lines.length - tail.length)).toEqual(tail)
    return now
  })

const scenario = (pty: PtyService.PtyService["Type"], owner: Ids.OwnerId) =>
  Effect.gen(function*() {
    const opened = yield* pty.open(owner, { cols: 60, rows: 12 })
    const id = Ids.SessionId.make(opened.sessionId)
    yield* pty.send(owner, id, { text: "printf 'before the watch: \\342\\234\\223\\n'" })
    const watch = yield* pty.watch!(owner, id)
    expect(watch.snapshot).toMatchObject({ _tag: "Snapshot", cols: 60, rows: 12, status: { _tag: "running" } })
    const events: Array<Watch.WatchEvent> = []
    const reader = yield* watch.events.pipe(
      Stream.runForEach((event) => Effect.sync(() => events.push(event))),
      Effect.fork
    )
    const outputs = () => events.flatMap((event) => event._tag === "Output" ? [event.data] : [])
    yield* pty.send(owner, id, { text: "for i in $(seq 1 30); do printf 'line %s \\342\\234\\223\\n' $i; done" })
    yield* pty.send(owner, id, { text: "printf '\\033[1;31mred\\033[0m and a progress 10%%\\r50%%\\r100%%\\n'" })
    const screen = yield* catchesUp(pty, owner, id, watch.snapshot, outputs)
    expect(screen.join("\n")).toContain("line 30 ✓")
    expect(screen.join("\n")).toContain("100%and a progress 10%")
    yield* pty.send(owner, id, { text: "exit" })
    yield* Fiber.join(reader)
    expect(events[events.length - 1]).toMatchObject({ _tag: "Exited", exitCode: 0 })
  })

describe("watching a terminal (the live view's feed)", () => {
  it.scopedLive("in-process: snapshot + every later chunk, no gap, no duplicate; the exit ends it", () =>
    Effect.gen(function*() {
      const pty = yield* Effect.provide(PtyService.PtyService, yield* Layer.build(NodeTerminal.layer(testConfig)))
      yield* scenario(pty, owner)
    }))

  it.scopedLive("through the daemon: the same over the protocol", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const socket = path.join(dir, "d.sock")
      yield* Layer.build(daemonLayer(socket))
      const remote = yield* Layer.build(RemoteTerminal.layer({ socket }))
      const pty = yield* Effect.provide(PtyService.PtyService, remote)
      // through the daemon, the connection's owner
      yield* scenario(pty, (yield* Effect.provide(RemoteTerminal.Connected, remote)).owner)
    }))

  it.scopedLive("a watch taken while output streams continues exactly the screen it started from", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeTerminal.layer(testConfig))
      const pty = yield* Effect.provide(PtyService.PtyService, context)
      const tasks = yield* Effect.provide(TaskRuntime.TaskRuntime, context)
      const opened = yield* pty.open(owner, { cols: 40, rows: 8 })
      const id = Ids.SessionId.make(opened.sessionId)
      const running = yield* pty.send(owner, id, {
        text: "for i in $(seq 1 3000); do printf 'n=%s \\342\\234\\223\\n' $i; done",
        background: true
      })
      yield* Effect.sleep(20)
      const watch = yield* pty.watch!(owner, id)
      const chunks: Array<Uint8Array> = []
      yield* watch.events.pipe(
        Stream.runForEach((event) => Effect.sync(() => event._tag === "Output" && chunks.push(event.data))),
        Effect.forkScoped
      )
      const done = yield* tasks.output(owner, running.taskId!, { wait: true, timeoutMs: 20_000 })
      expect(done.status).toBe("completed")
      const screen = yield* catchesUp(pty, owner, id, watch.snapshot, () => chunks)
      expect(screen.join("\n")).toContain("n=3000 ✓")
    }))

  it.scopedLive("a watcher that does not keep up is dropped, says so, and never slows the session", () =>
    Effect.gen(function*() {
      const pty = yield* Effect.provide(PtyService.PtyService, yield* Layer.build(NodeTerminal.layer(testConfig)))
      const opened = yield* pty.open(owner, {})
      const id = Ids.SessionId.make(opened.sessionId)
      const watch = yield* pty.watch!(owner, id, { maxBufferedBytes: 4096 })
      // nobody reads the watch while 200 KB go by
      const sent = yield* pty.send(owner, id, { text: "seq 1 40000 | tail -1" })
      expect(sent).toMatchObject({ output: "40000", waitReason: "prompt" })
      const big = yield* pty.send(owner, id, { text: "seq 1 30000 >/dev/stdout; echo end" })
      expect(big.waitReason).toBe("prompt")
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(watch.events))
      const last = events[events.length - 1]!
      expect(last).toMatchObject({ _tag: "Dropped" })
      expect(last._tag === "Dropped" && last.reason).toContain("4096 bytes behind")
      const buffered = events.reduce((sum, event) => sum + (event._tag === "Output" ? event.data.length : 0), 0)
      expect(buffered).toBeLessThanOrEqual(4096)
    }))
})
