import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Tracer from "effect/Tracer"
import * as EnvPolicy from "../src/EnvPolicy.js"
import { OwnerId, SessionId } from "../src/Ids.js"
import { PtyBackend } from "../src/PtyBackend.js"
import * as PtyService from "../src/PtyService.js"
import * as Sandbox from "../src/Sandbox.js"
import * as ScriptedShell from "../src/ScriptedShell.js"
import * as TaskRuntime from "../src/TaskRuntime.js"

const owner = OwnerId.make("owner")

const openShell = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, {})
  const id = SessionId.make(opened.sessionId)
  return { service, id, send: (text: string) => service.send(owner, id, { text }) }
})

describe("the service over scripted shells (no kernel, no shell)", () => {
  it.scopedLive("a line settles by its prompt with the output between and the exit status", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell
      expect(yield* send("true")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "" })
      expect(yield* send("exit-status 3")).toMatchObject({ waitReason: "prompt", exitCode: 3, output: "" })
    }).pipe(Effect.provide(ScriptedShell.layerService())))

  it.scopedLive("the prompt drawn again where it was (a resize) before the line's echo is not the line's prompt", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell
      yield* send("true")
      expect(yield* send("redrawn")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "redrawn" })
    }).pipe(Effect.provide(ScriptedShell.layerService())))

  it.scopedLive("one send at a time: a second send while one is in flight fails with SendActive", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell
      const first = yield* Effect.fork(send("true"))
      yield* Effect.yieldNow()
      const second = yield* Effect.exit(send("true"))
      expect(Exit.isFailure(second) && second.cause._tag === "Fail" ? second.cause.error._tag : undefined).toBe(
        "SendActive"
      )
      expect((yield* Fiber.join(first)).waitReason).toBe("prompt")
      expect((yield* send("true")).waitReason).toBe("prompt")
    }).pipe(Effect.provide(ScriptedShell.layerService())))

  it.scopedLive("cancel: the send ends interrupted, its caller's fiber goes on, the command got a SIGINT", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell
      const running = yield* Effect.fork(
        Effect.exit(send("block")).pipe(Effect.map((exit) => ({ exit, after: "went on" })))
      )
      // A cancel with no send in flight does nothing: repeat it until the send has started and is stopped.
      let cancelled = yield* service.cancel(owner, id)
      while (!cancelled.cancelled) {
        yield* Effect.yieldNow()
        cancelled = yield* service.cancel(owner, id)
      }
      expect(cancelled).toMatchObject({ cancelled: true, written: true })
      expect(cancelled.signalled.length).toBe(1)
      const { after, exit } = yield* Fiber.join(running)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(after).toBe("went on")
      expect(yield* send("exit-status 0")).toMatchObject({ waitReason: "prompt", exitCode: 0 })
    }).pipe(Effect.provide(ScriptedShell.layerService())))

  it.scopedLive("an unfinished unit is dropped with Ctrl-C, again while the shell does not notice it", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell
      expect(yield* send("bracketed-paste")).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      const unit = (busy: number) => service.send(owner, id, { paste: `unfinished ${busy}`, submit: true })
      for (const busy of [0, 2]) {
        const dropped = yield* unit(busy)
        expect(dropped, `${busy} unnoticed`).toMatchObject({ waitReason: "prompt", continuation: true })
        expect(dropped.output).toContain("nothing ran")
      }
      // Three Ctrl-Cs at most: a shell that notices none of them is reported as it is, silent.
      expect(yield* unit(3)).toMatchObject({ waitReason: "inferred_idle", continuation: true })
    }).pipe(Effect.provide(ScriptedShell.layerService({ config: { idleSilenceMs: 200, handoffGraceMs: 200 } }))))

  it.scopedLive("a look at a background send waits for its output, not the typed command line's echo", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openShell
      const tasks = yield* TaskRuntime.TaskRuntime
      for (let round = 0; round < 5; round++) {
        const started = yield* service.send(owner, id, { text: "block # ready-now", background: true })
        const look = yield* tasks.output(owner, started.taskId!, { waitFor: { text: "ready-now" }, timeoutMs: 100 })
        expect(look, `round ${round}`).toMatchObject({ status: "running", output: "" })
        expect(look.match, `round ${round}`).toBeUndefined()
        yield* tasks.kill(owner, started.taskId!)
      }
    }).pipe(Effect.provide(ScriptedShell.layerService())))

  it.scopedLive("the shell ending is the session's exit", () =>
    Effect.gen(function*() {
      const { send, service, id } = yield* openShell
      expect((yield* send("exit")).waitReason).toBe("session_exit")
      const after = yield* Effect.exit(service.send(owner, id, { text: "true" }))
      expect(Exit.isFailure(after) && after.cause._tag === "Fail" ? after.cause.error._tag : undefined).toBe(
        "SessionExited"
      )
    }).pipe(Effect.provide(ScriptedShell.layerService())))
})

/**
 * The scripted backend, counting what the session's output sink took and what it declined to the mailbox;
 * `offer` hands a piece of output to the last session's sink as the backend's read callback does (declined: into
 * the mailbox), and the scripted shell's own output goes the same way.
 */
const countingSink = () => {
  const counts: { taken: number; declined: number; offer: ((chunk: Uint8Array) => boolean) | undefined } = {
    taken: 0,
    declined: 0,
    offer: undefined
  }
  const backend = Layer.succeed(PtyBackend, {
    spawn: (request) =>
      Effect.gen(function*() {
        const process = yield* ScriptedShell.spawn(request)
        const output = yield* Mailbox.make<Uint8Array>()
        let sink: (chunk: Uint8Array) => boolean = () => false
        const offer = (chunk: Uint8Array) => {
          const taken = sink(chunk)
          if (taken) counts.taken++
          else {
            counts.declined++
            output.unsafeOffer(chunk)
          }
          return taken
        }
        counts.offer = offer
        process.attachSink!((chunk) => {
          offer(chunk)
          return true
        })
        yield* process.exited.pipe(Effect.zipRight(Effect.sync(() => output.unsafeDone(Exit.void))), Effect.forkScoped)
        return {
          ...process,
          output,
          attachSink: (next: (chunk: Uint8Array) => boolean) => {
            sink = next
          }
        }
      })
  })
  // the whole flood in one result: a bound above its 38 KB (the default is 32 KiB)
  const layer = PtyService.layerConfig({ shell: "scripted-shell", maxResultBytes: 256 * 1024 }).pipe(
    Layer.provideMerge(Layer.mergeAll(
      Layer.merge(ScriptedShell.layer, backend),
      EnvPolicy.layer({ host: {}, cwd: "/" }),
      TaskRuntime.layer,
      Sandbox.layerNone
    ))
  )
  return { counts, layer }
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1)).join("\n")

describe("output read in the read callback, and through the mailbox when the sink declines", () => {
  const { counts, layer } = countingSink()
  it.scopedLive("a flood: pieces the sink declines go through the mailbox, and the output keeps its order", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell
      const before = { ...counts }
      // Pieces of 20 000 bytes (over the 16 KiB the sink may parse in a turn: declined, then parsed by the
      // loop in slices, a turn apart) alternate with pieces of 100 bytes arriving in between.
      const flood = yield* send("burst 8000 20000")
      expect(flood).toMatchObject({ waitReason: "prompt", exitCode: 0 })
      expect(flood.output).toBe(lines(8000))
      expect(counts.declined).toBeGreaterThan(before.declined)
      // small pieces are parsed in the read callback
      const taken = counts.taken
      expect((yield* send("burst 300 50")).output).toBe(lines(300))
      expect(counts.taken).toBeGreaterThan(taken)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("one session parses at most 16 KiB of output in the read callbacks of one turn; the rest keeps its order", () =>
    Effect.gen(function*() {
      const { id, send, service } = yield* openShell
      yield* send("true")
      // 64 pieces of 512 bytes (16 lines of 32) arrive in one turn of the event loop
      const encoder = new TextEncoder()
      const row = (piece: number, line: number) => `p${String(piece).padStart(3, "0")}-${String(line).padStart(2, "0")}`
      const piece = (i: number, lines = 16) =>
        encoder.encode(Array.from({ length: lines }, (_, j) => `${row(i, j).padEnd(30, ".")}\r\n`).join(""))
      let taken = 0
      for (let i = 0; i < 64; i++) if (counts.offer!(piece(i))) taken += piece(i).length
      // the sink's bound (the loop all sessions share is not held longer), and most of it is still taken at once
      expect(taken).toBeLessThanOrEqual(16 * 1024)
      expect(taken).toBeGreaterThanOrEqual(12 * 1024)
      // the loop parses the rest: all of it in the transcript, in order (the first row follows the prompt)
      const expected = Array.from({ length: 64 * 16 }, (_, k) => row(Math.floor(k / 16), k % 16))
      const rows = () =>
        Effect.map(
          service.read(owner, id, { count: 5000 }),
          (read) => read.text.split("\n").flatMap((line) => /p\d{3}-\d{2}/.exec(line) ?? [])
        )
      let seen = yield* rows()
      for (let wait = 0; wait < 100 && seen.length < expected.length; wait++) {
        yield* Effect.sleep(10)
        seen = yield* rows()
      }
      expect(seen).toEqual(expected)
      // a later turn's output is parsed in the read callback again: 4 KiB, which the last turn's count would decline
      yield* Effect.sleep(1)
      expect(counts.offer!(piece(64, 128))).toBe(true)
    }).pipe(Effect.provide(layer)))
})

describe("tracing of sends", () => {
  it.scopedLive("a send is a PtyService.send span whenever a tracer other than Effect's built-in one is installed", () =>
    Effect.gen(function*() {
      const builtIn = Context.get(DefaultServices.liveServices, Tracer.Tracer)
      const names: Array<string> = []
      const recording = Tracer.make({
        span: (name, parent, context, links, startTime, kind, options) => {
          names.push(name)
          return builtIn.span(name, parent, context, links, startTime, kind, options)
        },
        context: builtIn.context
      })
      const { send } = yield* openShell
      expect((yield* Effect.withTracer(send("true"), recording)).waitReason).toBe("prompt")
      expect(names).toContain("PtyService.send")
      // under the built-in tracer the result is the same
      expect((yield* send("exit-status 2")).exitCode).toBe(2)
    }).pipe(Effect.provide(ScriptedShell.layerService())))
})
