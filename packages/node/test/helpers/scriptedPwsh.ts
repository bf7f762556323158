/**
 * A pwsh 7 played in memory, for the PowerShell dialect's tests: pwsh cannot be installed on these
 * machines, so the dialect is checked against the bytes a pwsh 7 prints for the same start-up, not against
 * a real one (docs/readiness.md says so).
 *
 * The transcript, as pwsh 7.4 with PSReadLine 2.3 prints it on Linux with `TERM=xterm-256color`:
 * - at start-up, .NET's console turns on keypad transmit mode (terminfo `smkx`: `ESC[?1h ESC=`), the host
 *   writes the default prompt (`PS <cwd>> `), and PSReadLine asks for the cursor position (`ESC[6n`) before
 *   it reads — at every prompt. .NET reads the answer from the terminal's input: text typed before the
 *   answer is mixed into it and lost (the reason the dialect's start-up line waits for the first prompt);
 * - PSReadLine hides the cursor while it renders a line (`ESC[?25l` … `ESC[?25h`), colours it by token, and on
 *   Enter moves past it and writes a newline; an incomplete line (an unclosed quote) gets a newline and the
 *   continuation prompt instead;
 * - the host writes what the `prompt` function returns, and `PSConsoleHostReadLine` is called for the line.
 *
 * What the integration asks of pwsh is read from the integration itself, so a broken init script fails
 * these tests: the prompt string, the continuation prompt and the command-start write are taken from
 * `AGENT_TERMINAL_INIT` and expanded the way PowerShell expands them (`$([char]27)`, `$([char]7)`,
 * `$status`); the `prompt` function is read-only only if the init makes it so; the start-up line must be
 * the one that runs the init. The status rule (`$?`, then `$LASTEXITCODE`) is the init's, played here.
 */
import { ProcessInspector, PtyBackend } from "@agent-terminal/core"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import { startupLine } from "../../src/PowerShellDialect.js"

const encoder = new TextEncoder()
const ESC = "\x1b"
const smkx = `${ESC}[?1h${ESC}=`
const askCursor = `${ESC}[6n`
const hideCursor = `${ESC}[?25l`
const showCursor = `${ESC}[?25h`
/** A cursor-position report, as the terminal answers `ESC[6n`. */
const cursorReport = new RegExp(`${ESC}\\[\\d+;\\d+R`)

/** Expand a PowerShell double-quoted string the way the init's strings use it. */
const expand = (text: string, status?: number) =>
  text
    .replaceAll("$([char]27)", ESC)
    .replaceAll("$([char]7)", "\x07")
    .replaceAll("$status", String(status ?? 0))

/** What the init script installs, read from its text (undefined parts were not installed). */
interface Installed {
  readonly prompt: string | undefined
  readonly promptReadOnly: boolean
  readonly continuation: string | undefined
  readonly commandStart: string | undefined
  readonly utf8First: boolean
}

const readInit = (init: string): Installed => {
  const lines = init.split("\n")
  const promptAt = lines.findIndex((line) => line.includes("function:global:prompt"))
  const promptString = promptAt < 0 ? undefined : /^\s*"(.*)"\s*$/.exec(lines[promptAt + 2] ?? "")?.[1]
  const utf8At = lines.findIndex((line) => line.includes("[System.Text.UTF8Encoding]::new($false)"))
  return {
    prompt: promptString,
    promptReadOnly: promptAt >= 0 && lines[promptAt]!.includes("-Options ReadOnly"),
    continuation: /-ContinuationPrompt "([^"]*)"/.exec(init)?.[1],
    commandStart: /\[Console\]::Write\("([^"]*)"\)/.exec(init)?.[1],
    utf8First: utf8At >= 0 && (promptAt < 0 || utf8At < promptAt) && utf8At <= 1
  }
}

/** PSReadLine's rendering of a line as typed: token colours, the cursor hidden meanwhile. */
const render = (line: string) => {
  const [head, ...rest] = line.split(" ")
  const tail = rest.length > 0 ? ` ${ESC}[37m${rest.join(" ")}${ESC}[0m` : ""
  return `${hideCursor}${ESC}[93m${head}${ESC}[0m${tail}${showCursor}`
}

/** What the scripted pwsh saw: for assertions on the order of things. */
export interface PwshLog {
  readonly typedBeforeAnswer: Array<string>
  readonly lines: Array<string>
  env: Readonly<Record<string, string>> | undefined
  args: ReadonlyArray<string> | undefined
}

let nextPid = 70_000

/** Whether each scripted pwsh waits reading its terminal (at a prompt, its cursor question answered). */
const reading = new Map<number, () => boolean>()

/** One scripted pwsh process. */
const spawn = (log: PwshLog) => (request: PtyBackend.SpawnRequest) =>
  Effect.gen(function*() {
    log.env = request.env
    log.args = request.args
    const output = yield* Mailbox.make<Uint8Array>()
    const exited = yield* Deferred.make<PtyBackend.ExitStatus>()
    const pid = nextPid++
    let installed: Installed | undefined
    let userPrompt: string | undefined
    let pending = ""
    let continued: Array<string> = []
    let answered = false
    let blocked = false
    let ended = false
    let ok = true
    let lastExitCode: number | undefined
    const emit = (text: string) =>
      setImmediate(() => {
        if (!ended) output.unsafeOffer(encoder.encode(text))
      })
    const end = (code: number) => {
      if (ended) return
      ended = true
      output.unsafeDone(Exit.void)
      Deferred.unsafeDone(exited, Exit.succeed({ exitCode: code, signal: null }))
    }
    const status = () => ok ? 0 : lastExitCode !== undefined && lastExitCode !== 0 ? lastExitCode : 1
    /** The host writes the prompt function's result; PSReadLine asks where the cursor is, then reads. */
    const prompt = () => {
      answered = false
      const text = userPrompt ?? (installed?.prompt !== undefined
        ? expand(installed.prompt, status())
        : `PS ${request.cwd}> `)
      return `${text}${askCursor}`
    }
    const fail = (message: string) => {
      ok = false
      return `${message}\r\n`
    }
    const run = (line: string): string => {
      const command = line.trim()
      let match: RegExpExecArray | null
      if (command === startupLine) {
        installed = readInit(request.env.AGENT_TERMINAL_INIT ?? "")
        ok = true
        return ""
      }
      if ((match = /^exit (\d+)$/.exec(command))) {
        setImmediate(() => end(Number(match![1])))
        return ""
      }
      if ((match = /^(?:Write-Output|echo) "?([^"]*)"?$/s.exec(command))) {
        ok = true
        return `${match[1]!.replaceAll("\n", "\r\n")}\r\n`
      }
      if ((match = /^sh -c 'exit (\d+)'$/.exec(command))) {
        lastExitCode = Number(match[1])
        ok = lastExitCode === 0
        return ""
      }
      if (command === "true" || command === "false") {
        lastExitCode = command === "true" ? 0 : 1
        ok = lastExitCode === 0
        return ""
      }
      if ((match = /^Get-Item (\S+)$/.exec(command))) {
        return fail(`Get-Item: Cannot find path '${match[1]}' because it does not exist.`)
      }
      if ((match = /^function prompt \{ '([^']*)' \}$/.exec(command))) {
        if (installed?.promptReadOnly === true) {
          return fail("Cannot write to function prompt because it is read-only or constant.")
        }
        userPrompt = match[1]
        ok = true
        return ""
      }
      if (/^Start-Sleep \d+$/.test(command)) {
        blocked = true
        return ""
      }
      return fail(
        `${command.split(" ")[0]}: The term '${
          command.split(" ")[0]
        }' is not recognized as a name of a cmdlet, function, script file, or executable program.`
      )
    }
    /** A line ends: an incomplete one (an odd number of `"`) continues; a whole one runs. */
    const enter = (line: string) => {
      const text = [...continued, line].join("\n")
      if ((text.split("\"").length - 1) % 2 === 1) {
        continued = [...continued, line]
        const prompt = installed?.continuation !== undefined ? expand(installed.continuation) : ">> "
        return `${render(line)}\r\n${prompt}`
      }
      continued = []
      log.lines.push(text)
      // the init's wrapper of PSConsoleHostReadLine writes it once installed (not for the start-up line itself)
      const started = installed?.commandStart !== undefined ? expand(installed.commandStart) : ""
      const ran = run(text)
      if (ended || blocked) return `${render(line)}\r\n${started}${ran}`
      return `${render(line)}\r\n${started}${ran}${prompt()}`
    }
    emit(`${smkx}${prompt()}`)
    reading.set(pid, () => answered && !blocked && !ended)
    yield* Effect.addFinalizer(() => Effect.sync(() => reading.delete(pid)))
    return {
      pid,
      ttyPath: undefined,
      containment: "sweep" as const,
      output,
      exited,
      write: (data: string | Uint8Array) =>
        Effect.sync(() => {
          if (ended) return
          let text = typeof data === "string" ? data : new TextDecoder().decode(data)
          const report = cursorReport.exec(text)
          if (report !== null) {
            const before = text.slice(0, report.index)
            if (!answered && before !== "") log.typedBeforeAnswer.push(before)
            // .NET takes what came before the answer as part of its reply: lost
            text = answered ? text.replace(cursorReport, "") : text.slice(report.index + report[0].length)
            answered = true
          } else if (!answered) {
            log.typedBeforeAnswer.push(text)
            return
          }
          pending += text
          if (blocked) return
          let answer = ""
          for (let cr = pending.indexOf("\r"); cr !== -1 && !blocked && !ended; cr = pending.indexOf("\r")) {
            const line = pending.slice(0, cr)
            pending = pending.slice(cr + 1)
            answer += enter(line)
          }
          if (answer !== "") emit(answer)
        }),
      discardInput: Effect.sync(() => {
        const dropped = pending.length
        pending = ""
        return dropped
      }),
      resize: () => Effect.void,
      pause: Effect.void,
      resume: Effect.void,
      signalGroup: (pgid: number, signal: NodeJS.Signals) =>
        Effect.sync(() => {
          if (ended || pgid !== pid) return false
          if (signal === "SIGINT") {
            blocked = false
            pending = ""
            continued = []
            ok = false
            emit(`\r\n${prompt()}`)
          }
          return true
        }),
      terminate: Effect.sync(() => {
        end(-1)
        return { containment: "sweep" as const, signalled: 0, survivors: [] }
      })
    } satisfies PtyBackend.PtyProcess
  })

/**
 * The scripted pwsh as a backend, with an exact inspector that sees it in the foreground, blocked reading
 * its terminal while it waits at a prompt (once its cursor question was answered).
 */
export const layer = (log: PwshLog): Layer.Layer<PtyBackend.PtyBackend | ProcessInspector.ProcessInspector> =>
  Layer.mergeAll(
    Layer.succeed(PtyBackend.PtyBackend, { spawn: spawn(log) }),
    Layer.succeed(
      ProcessInspector.ProcessInspector,
      ProcessInspector.ProcessInspector.of({
        exact: true,
        foregroundGroup: (terminal) => Effect.succeed(Option.some(terminal.shellPid)),
        probe: (terminal) =>
          Effect.sync(() => ({
            _tag: "Snapshot" as const,
            pgid: terminal.shellPid,
            members: [terminal.shellPid],
            waitingOnTerminal: reading.get(terminal.shellPid)?.() ?? false,
            readCalls: undefined
          })),
        processTree: () => Effect.succeed([])
      })
    )
  )

/** A fresh log. */
export const makeLog = (): PwshLog => ({ typedBeforeAnswer: [], lines: [], env: undefined, args: undefined })
