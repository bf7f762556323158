/**
 * A shell played in memory: a `PtyBackend` whose processes answer every line they are sent the way the
 * bash integration does (the echo, the command-start marker, then the exit-status and prompt-end markers
 * around the prompt text), a `ShellDialect` that hands them the nonce, and an inspector that sees the
 * shell in the foreground. For unit tests of the service's logic, and for measuring what the service itself
 * costs per send with no kernel and no shell involved (`agent-terminal bench`, `roundtrip.true.in-memory`).
 *
 * Output is delivered on a later turn of the event loop, as a real pty's is.
 *
 * @since 0.1.0
 */
import { ShellMarkers } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as EnvPolicy from "./EnvPolicy.js"
import type { InvalidConfig } from "./Errors.js"
import type * as Oversight from "./Oversight.js"
import { ProcessInspector } from "./ProcessInspector.js"
import type { ExitStatus, PtyProcess, SpawnRequest } from "./PtyBackend.js"
import { PtyBackend } from "./PtyBackend.js"
import * as PtyService from "./PtyService.js"
import * as Sandbox from "./Sandbox.js"
import type { Dialect } from "./ShellDialect.js"
import * as ShellDialects from "./ShellDialects.js"
import * as TaskRuntime from "./TaskRuntime.js"
import type * as TerminalConfig from "./TerminalConfig.js"

/**
 * The prompt text of the scripted shell.
 *
 * @since 0.1.0
 */
export const promptText = "$ "

const NONCE_VARIABLE = "SCRIPTED_SHELL_NONCE"
const encoder = new TextEncoder()
let nextPid = 90_000

/** The prompt as the integration prints it: status marker, prompt text, prompt-end marker. */
const prompt = (nonce: string, status: number) =>
  `${ShellMarkers.encode("D", nonce, String(status))}${promptText}${ShellMarkers.encode("B", nonce)}`

/**
 * One scripted shell process. Each line it receives (ended by CR) is echoed and "run": an exit status of
 * 0, or the number after `exit-status ` (`exit-status 3`); `burst N P` prints the lines `1` to `N`,
 * delivered one piece per turn of the event loop, pieces of `P` bytes and of 100 bytes alternately; `redrawn`
 * first draws its prompt again where it was (as readline does at a resize), in a piece of its own, then prints
 * `redrawn`; `block` (and `block # a comment`) runs
 * until a SIGINT to the shell's group (then status 130, as bash reports it); `repl` starts a REPL that
 * answers every line with its echo and `>>> ` (and a SIGINT with `KeyboardInterrupt`) until `exit()`;
 * `bracketed-paste` turns bracketed paste on (as bash 5.2's readline does at its prompt); `unfinished N` leaves
 * the command line unfinished at a continuation prompt, and a shell too busy to notice the first `N` SIGINTs
 * (the next one drops the line: `^C` and the prompt, status 130); `exit` ends the process. A bracketed paste
 * is taken as the line it holds.
 *
 * @since 0.1.0
 */
export const spawn = (request: SpawnRequest): Effect.Effect<PtyProcess> =>
  Effect.gen(function*() {
    const nonce = request.env[NONCE_VARIABLE] ?? ""
    const output = yield* Mailbox.make<Uint8Array>()
    const exited = yield* Deferred.make<ExitStatus>()
    let pending = ""
    let ended = false
    let blocked = false
    let repl = false
    /** At the continuation prompt: how many SIGINTs go unnoticed before one drops the line. */
    let unfinished: number | undefined
    let sink: ((chunk: Uint8Array) => boolean) | undefined
    const deliver = (chunk: Uint8Array) => {
      if (sink === undefined || !sink(chunk)) output.unsafeOffer(chunk)
    }
    /**
     * Delivered on the next turn of the event loop: whole, or (a flood) in pieces of `pieceBytes` and of
     * 100 bytes alternately, one piece per turn.
     */
    const emit = (text: string, pieceBytes?: number) => {
      const bytes = encoder.encode(text)
      const next = (at: number, piece: number) => {
        setImmediate(() => {
          if (ended || at >= bytes.length) return
          const size = pieceBytes === undefined ? bytes.length : piece % 2 === 0 ? pieceBytes : 100
          deliver(bytes.subarray(at, at + size))
          next(at + size, piece + 1)
        })
      }
      next(0, 0)
    }
    const end = (status: ExitStatus) => {
      if (ended) return
      ended = true
      output.unsafeDone(Exit.void)
      Deferred.unsafeDone(exited, Exit.succeed(status))
    }
    /** What running `line` prints, and (a flood) the size of the pieces it arrives in. */
    const run = (line: string): { readonly text: string; readonly pieceBytes?: number } => {
      if (repl) {
        if (line.trim() !== "exit()") return { text: `${line}\r\n>>> ` }
        repl = false
        return { text: `${line}\r\n${prompt(nonce, 0)}` }
      }
      const unfinishedLine = /^unfinished (\d+)$/.exec(line.trim())
      if (unfinishedLine) {
        unfinished = Number(unfinishedLine[1])
        return { text: `${line}\r\n${ShellMarkers.encode("P", nonce)}> ` }
      }
      const started = `${line}\r\n${ShellMarkers.encode("C", nonce)}`
      if (line.trim() === "redrawn") {
        // the prompt drawn again where it was (readline at a resize) before the line's echo, in its own piece
        const redraw = `\r\x1b[K${prompt(nonce, 0)}`
        return { text: `${redraw}${started}redrawn\r\n${prompt(nonce, 0)}`, pieceBytes: redraw.length }
      }
      if (line.trim() === "bracketed-paste") return { text: `${started}\x1b[?2004h${prompt(nonce, 0)}` }
      if (line.trim() === "repl") {
        repl = true
        return { text: `${started}>>> ` }
      }
      if (line.trim() === "block" || line.trim().startsWith("block #")) {
        blocked = true
        return { text: started }
      }
      const burst = /^burst (\d+) (\d+)$/.exec(line.trim())
      if (burst) {
        const lines = Array.from({ length: Number(burst[1]) }, (_, i) => `${i + 1}\r\n`).join("")
        return { text: `${started}${lines}${prompt(nonce, 0)}`, pieceBytes: Math.max(1, Number(burst[2])) }
      }
      const asked = /^exit-status (\d+)$/.exec(line.trim())
      return { text: `${started}${prompt(nonce, asked ? Number(asked[1]) : 0)}` }
    }
    emit(prompt(nonce, 0))
    const pid = nextPid++
    return {
      pid,
      ttyPath: undefined,
      containment: "sweep",
      output,
      attachSink: (next) => {
        sink = next
      },
      exited: Deferred.await(exited),
      write: (data) =>
        Effect.sync(() => {
          if (ended) return
          pending += typeof data === "string" ? data : new TextDecoder().decode(data)
          // A running command does not read: what is typed waits (and a SIGINT flushes it, as a tty does).
          if (blocked) return
          let answer = ""
          let pieceBytes: number | undefined
          for (let cr = pending.indexOf("\r"); cr !== -1; cr = pending.indexOf("\r")) {
            const line = pending.slice(0, cr).replace("\x1b[200~", "").replace("\x1b[201~", "")
            pending = pending.slice(cr + 1)
            if (line.trim() === "exit") {
              emit(`${line}\r\n`)
              setImmediate(() => end({ exitCode: 0, signal: null }))
              return
            }
            const ran = run(line)
            answer += ran.text
            pieceBytes ??= ran.pieceBytes
            if (blocked) break
          }
          if (answer !== "") emit(answer, pieceBytes)
        }),
      discardInput: Effect.sync(() => {
        const dropped = pending.length
        pending = ""
        return dropped
      }),
      resize: () => Effect.void,
      pause: Effect.void,
      resume: Effect.void,
      signalGroup: (pgid, signal) =>
        Effect.sync(() => {
          if (ended || pgid !== pid) return false
          if (signal === "SIGINT" && unfinished !== undefined) {
            if (unfinished-- > 0) return true
            unfinished = undefined
            pending = ""
            emit(`^C\r\n${prompt(nonce, 130)}`)
          } else if (signal === "SIGINT" && blocked) {
            blocked = false
            pending = ""
            emit(`^C\r\n${prompt(nonce, 130)}`)
          } else if (signal === "SIGINT" && repl) {
            pending = ""
            emit(`^C\r\nKeyboardInterrupt\r\n>>> `)
          }
          return true
        }),
      terminate: Effect.sync(() => {
        end({ exitCode: null, signal: "SIGKILL" })
        return { containment: "sweep" as const, signalled: 0, survivors: [] }
      })
    } satisfies PtyProcess
  })

/**
 * The scripted shell's dialect: it hands each shell its nonce (the shell is named `scripted-shell`).
 *
 * @since 0.2.0
 */
export const dialect: Dialect = {
  name: "scripted-shell",
  promptText,
  launch: ({ nonce, shell }) => ({ file: shell, args: [], env: { [NONCE_VARIABLE]: nonce } })
}

/**
 * The backend and the dialect that hands each shell its nonce.
 *
 * @since 0.2.0
 */
export const layerShell: Layer.Layer<PtyBackend | ShellDialects.ShellDialects> = Layer.mergeAll(
  Layer.succeed(PtyBackend, { spawn }),
  ShellDialects.layer([dialect])
)

/**
 * The inspector that comes with the scripted shells: exact, it sees every shell in its terminal's
 * foreground, never waiting for input.
 *
 * @since 0.2.0
 */
export const inspector: ProcessInspector["Type"] = ProcessInspector.of({
  exact: true,
  foregroundGroup: (terminal) => Effect.succeed(Option.some(terminal.shellPid)),
  probe: (terminal) =>
    Effect.succeed({
      _tag: "Snapshot",
      pgid: terminal.shellPid,
      members: [terminal.shellPid],
      waitingOnTerminal: false,
      readCalls: undefined
    }),
  processTree: () => Effect.succeed([])
})

/**
 * The backend, the dialect, and the scripted inspector.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<PtyBackend | ShellDialects.ShellDialects | ProcessInspector> = Layer.merge(
  layerShell,
  Layer.succeed(ProcessInspector, inspector)
)

/**
 * The whole service over scripted shells: no sandbox, an empty host environment, tasks in memory. The
 * inspector can be swapped alone (`inspector`: e.g. scripted `/proc` facts for the readiness engine).
 *
 * @since 0.1.0
 */
export const layerService = (
  options: {
    readonly config?: TerminalConfig.TerminalConfigInput | undefined
    /** The inspector, in place of the scripted one (e.g. `ProcessInspector.layerTest`). */
    readonly inspector?: Layer.Layer<ProcessInspector> | undefined
  } = {}
): Layer.Layer<
  PtyService.PtyService | Oversight.Oversight | TaskRuntime.TaskRuntime | ProcessInspector,
  InvalidConfig
> => {
  const config = { shell: "scripted-shell", ...options.config }
  return PtyService.layerConfig(config).pipe(
    Layer.provideMerge(Layer.mergeAll(
      layerShell,
      options.inspector ?? Layer.succeed(ProcessInspector, inspector),
      EnvPolicy.layer({ host: {}, cwd: "/" }),
      TaskRuntime.layerConfig(config),
      Sandbox.layerNone
    ))
  )
}
