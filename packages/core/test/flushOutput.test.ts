import { ShellMarkers } from "@agent-terminal/terminal"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as EnvPolicy from "../src/EnvPolicy.js"
import { OwnerId, SessionId } from "../src/Ids.js"
import { ProcessInspector } from "../src/ProcessInspector.js"
import type { ExitStatus, PtyProcess } from "../src/PtyBackend.js"
import { PtyBackend } from "../src/PtyBackend.js"
import * as PtyService from "../src/PtyService.js"
import * as Sandbox from "../src/Sandbox.js"
import * as ScriptedShell from "../src/ScriptedShell.js"
import * as ShellDialects from "../src/ShellDialects.js"
import * as TaskRuntime from "../src/TaskRuntime.js"

const owner = OwnerId.make("owner")
const encoder = new TextEncoder()
/** How long the "kernel" sits on the prompt when nobody pulls it out: far longer than a send takes. */
const KERNEL_DELAY_MS = 5_000

/** An inspector that sees the terminal's program in its foreground, blocked reading it, with `state`'s counters. */
const alwaysReading = (state: { readonly readCalls: number; readonly readBytes: number }) =>
  Layer.succeed(
    ProcessInspector,
    ProcessInspector.of({
      exact: true,
      foregroundGroup: (terminal) => Effect.succeed(Option.some(terminal.shellPid)),
      probe: (terminal) =>
        Effect.sync(() => ({
          _tag: "Snapshot" as const,
          pgid: terminal.shellPid,
          members: [terminal.shellPid],
          waitingOnTerminal: true,
          readCalls: state.readCalls,
          readBytes: state.readBytes
        })),
      processTree: () => Effect.succeed([])
    })
  )

/**
 * A REPL whose prompt, as under load on Linux, is still on its way through the kernel when the program
 * is already blocked reading: the echo and the result arrive at once, the prompt only after
 * `KERNEL_DELAY_MS`, unless `flushOutput` (when the backend has it) pulls it out first.
 */
const heldPromptRepl = (options: { readonly flush: boolean }) => {
  const state = { readBytes: 0, readCalls: 0, pid: 0 }
  const backend = Layer.succeed(PtyBackend, {
    spawn: () =>
      Effect.gen(function*() {
        const output = yield* Mailbox.make<Uint8Array>()
        const exited = yield* Deferred.make<ExitStatus>()
        let held = ""
        let timer: ReturnType<typeof setTimeout> | undefined
        const deliver = (text: string) => output.unsafeOffer(encoder.encode(text))
        const release = () => {
          clearTimeout(timer)
          if (held !== "") deliver(held)
          held = ""
        }
        setImmediate(() => deliver(">>> "))
        state.pid = 4242
        yield* Effect.addFinalizer(() => Effect.sync(() => clearTimeout(timer)))
        const process: PtyProcess = {
          pid: state.pid,
          ttyPath: undefined,
          containment: "sweep",
          output,
          exited: Deferred.await(exited),
          ...(options.flush ? { flushOutput: Effect.sync(() => (release(), true)) } : {}),
          write: (data) =>
            Effect.sync(() => {
              const line = typeof data === "string" ? data : new TextDecoder().decode(data)
              // read at once, answered at once; the prompt printed last is the part still in the kernel
              state.readBytes += encoder.encode(line).length
              state.readCalls++
              const text = line.replace(/\r$/, "")
              setImmediate(() => deliver(`${text}\r\n${text.length}\r\n`))
              held = ">>> "
              timer = setTimeout(release, KERNEL_DELAY_MS)
            }),
          discardInput: Effect.succeed(0),
          resize: () => Effect.void,
          pause: Effect.void,
          resume: Effect.void,
          signalGroup: () => Effect.succeed(true),
          terminate: Effect.sync(() => {
            clearTimeout(timer)
            output.unsafeDone(Exit.void)
            Deferred.unsafeDone(exited, Exit.succeed({ exitCode: null, signal: "SIGKILL" }))
            return { containment: "sweep" as const, signalled: 0, survivors: [] }
          })
        }
        return process
      })
  })
  // The REPL is always blocked reading its terminal; its read counters show every line it took.
  const inspector = alwaysReading(state)
  const dialect = ShellDialects.layer([{
    name: "scripted-shell",
    promptText: ScriptedShell.promptText,
    launch: ({ shell }) => ({ file: shell, args: [], env: {} })
  }])
  // The REPL's start settles by silence (nothing was sent to it): keep that short.
  return PtyService.layerConfig({ shell: "scripted-shell", idleSilenceMs: 100 }).pipe(
    Layer.provideMerge(Layer.mergeAll(
      backend,
      inspector,
      dialect,
      EnvPolicy.layer({ host: {}, cwd: "/" }),
      TaskRuntime.layer,
      Sandbox.layerNone
    ))
  )
}

const sendToRepl = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, { type: "command", argv: ["repl"] })
  const id = SessionId.make(opened.sessionId)
  return yield* service.send(owner, id, { text: "abc" })
})

describe("output still in the kernel when the program already waits", () => {
  it.scopedLive("a backend that can flush hands over the prompt before the send settles by stdin_read", () =>
    Effect.gen(function*() {
      const result = yield* sendToRepl
      expect(result.waitReason).toBe("stdin_read")
      expect(result.output).toBe("3\n>>> ")
    }).pipe(Effect.provide(heldPromptRepl({ flush: true }))))

  it.scopedLive("without flushOutput (it is optional) the send settles on what has arrived", () =>
    Effect.gen(function*() {
      const result = yield* sendToRepl
      expect(result.waitReason).toBe("stdin_read")
      expect(result.output).toBe("3")
    }).pipe(Effect.provide(heldPromptRepl({ flush: false }))))
})

/**
 * A shell whose prompt after a command is still in the kernel when the shell is already blocked reading its
 * next line: the command's echo and output arrive, the prompt (its exit-status marker onwards) only after
 * `KERNEL_DELAY_MS` unless `flushOutput` pulls it out first. Under load a quiet moment's timer can also fire
 * before the turn that reads what the shell printed; both look the same to the send.
 */
const heldPromptShell = (() => {
  const state = { readCalls: 0, readBytes: 0 }
  const backend = Layer.succeed(PtyBackend, {
    spawn: (request) =>
      Effect.gen(function*() {
        const inner = yield* ScriptedShell.spawn(request)
        const nonce = request.env.SCRIPTED_SHELL_NONCE ?? ""
        const statusMarker = `\x1b]${ShellMarkers.OSC_NUMBER};D;${nonce}`
        const output = yield* Mailbox.make<Uint8Array>()
        let sink: ((chunk: Uint8Array) => boolean) | undefined
        let held: Array<Uint8Array> = []
        let timer: ReturnType<typeof setTimeout> | undefined
        let commands = 0
        const pass = (chunk: Uint8Array) => {
          if (sink === undefined || !sink(chunk)) output.unsafeOffer(chunk)
        }
        const release = () => {
          clearTimeout(timer)
          timer = undefined
          const chunks = held
          held = []
          for (const chunk of chunks) pass(chunk)
          return true
        }
        inner.attachSink!((chunk) => {
          const text = new TextDecoder().decode(chunk)
          const at = text.indexOf(statusMarker)
          if (commands === 0 || (held.length === 0 && at === -1)) pass(chunk)
          else {
            if (held.length === 0 && at > 0) pass(encoder.encode(text.slice(0, at)))
            held.push(held.length === 0 ? encoder.encode(text.slice(at)) : chunk)
            timer ??= setTimeout(release, KERNEL_DELAY_MS)
          }
          return true
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => clearTimeout(timer)))
        yield* inner.exited.pipe(
          Effect.zipRight(Effect.sync(() => output.unsafeDone(Exit.void))),
          Effect.forkScoped
        )
        const process: PtyProcess = {
          ...inner,
          output,
          attachSink: (next) => {
            sink = next
          },
          flushOutput: Effect.sync(release),
          write: (data) =>
            Effect.zipRight(
              Effect.sync(() => {
                commands++
                state.readCalls++
                state.readBytes += typeof data === "string" ? encoder.encode(data).length : data.length
              }),
              inner.write(data)
            )
        }
        return process
      })
  })
  // The shell is blocked reading its terminal whenever it is not running a command (the scripted shell
  // answers at once); its read counters show every line it took.
  const inspector = alwaysReading(state)
  return PtyService.layerConfig({ shell: "scripted-shell" }).pipe(
    Layer.provideMerge(Layer.mergeAll(
      backend,
      inspector,
      ShellDialects.layer([ScriptedShell.dialect]),
      EnvPolicy.layer({ host: {}, cwd: "/" }),
      TaskRuntime.layer,
      Sandbox.layerNone
    ))
  )
})()

describe("a shell's prompt still in the kernel when the shell already reads its next line", () => {
  it.scopedLive("the send settles by the prompt, with the exit status, not as the shell waiting for input", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      const opened = yield* service.open(owner, {})
      const id = SessionId.make(opened.sessionId)
      const result = yield* service.send(owner, id, { text: "exit-status 3" })
      expect(result.waitReason).toBe("prompt")
      expect(result.exitCode).toBe(3)
    }).pipe(Effect.provide(heldPromptShell)))
})
