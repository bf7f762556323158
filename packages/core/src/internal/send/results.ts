/**
 * A send's result, from how its wait ended: the output up to where it settled (echo dropped, bounded head and
 * tail), the notes the model reads, the screen while a full-screen program holds the terminal.
 */
import { Capture, type Emulator, Utf8 } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ProcessInspector } from "../../ProcessInspector.js"
import { type HumanNote, humanNoteText, isUnconfirmed, type SendRequest, type SendResult } from "../../Session.js"
import type { TerminalConfig } from "../../TerminalConfig.js"
import { outputRoom } from "../bounds.js"
import { type Decisive, reasonOf } from "../readiness/settled.js"
import { statusOf } from "../session/runtime.js"
import type { SessionRuntime } from "../session/runtime.js"
import { stripEcho } from "./input.js"

/**
 * How a send ended, as its result reports it: a decisive end of its wait, or `Abandoned` — a command sent
 * as one unit was incomplete and has been discarded with Ctrl-C; `after` is how the wait after that ended.
 */
export type Outcome = Decisive | { readonly _tag: "Abandoned"; readonly after: Decisive }

/** What the model reads when a command sent as one unit was incomplete and has been discarded. */
const abandonedNote = "[nothing ran: the shell waited for more of this command (an unclosed quote, a heredoc " +
  "without its end line, an unfinished block), so it was discarded with Ctrl-C]"

/** What the model reads when a line left the shell at its continuation prompt (deliberately, perhaps). */
const continuationNote = "[the shell waits for the rest of this command at its continuation prompt: send the " +
  "rest, or keys [\"C-c\"] to drop it]"

/** The output of a send whose program holds the screen and printed nothing before it. */
export const fullScreenNote = "[a full-screen program holds the terminal: see screen]"

/** The same, for a step of a batch whose screen is not in the result (only the last step's is). */
export const fullScreenStepNote = "[a full-screen program held the terminal]"

const decisiveOf = (outcome: Outcome): Decisive => outcome._tag === "Abandoned" ? outcome.after : outcome

/**
 * A full-screen program holds the terminal: the alternate screen is on (vim, htop, less), or a program
 * waits for a key with application cursor keys set (a pager that keeps the main screen, `less -X`).
 */
const holdsScreen = (runtime: SessionRuntime, outcome: Outcome): boolean => {
  const modes = runtime.emulator.modes
  return modes.alternateScreen || (modes.applicationCursor && decisiveOf(outcome)._tag === "StdinRead")
}

/**
 * Where the send's output ends. A program that holds the screen without the alternate screen (`less` as git
 * starts it, `LESS=FRX`: it sets application cursor keys and waits for a key): what is on the screen goes
 * in `screen`, the output keeps only what scrolled above it.
 */
export const endOf = (runtime: SessionRuntime, outcome: Outcome): Emulator.Position => {
  const end = decisiveOf(outcome).end
  if (!holdsScreen(runtime, outcome) || runtime.emulator.modes.alternateScreen) return end
  const top = runtime.emulator.screenTop()
  return top.row < end.row ? top : end
}

/** The send's output up to where it settled: the echo dropped (unless the capture moved past it). */
export const outputOf = (
  runtime: SessionRuntime,
  request: SendRequest,
  captured: Emulator.Captured,
  baseline: number
): string => {
  const rebased = runtime.shell.since(baseline).some((marker) => marker.kind === "C")
  return rebased ? captured.text : stripEcho(captured.text, request)
}

/** The output the model reads: the notes of an abandoned or unfinished command line. */
export const textOf = (outcome: Outcome, output: string): string => {
  switch (outcome._tag) {
    case "Abandoned":
      return abandonedNote
    case "Continuation":
      return `${output}${output === "" ? "" : "\n"}${continuationNote}`
    default:
      return output
  }
}

/** Room for the read hint in the omission line. */
const HINT_ROOM = 128

/**
 * Where the lines an omission line stands for are in the session's transcript: found from the first whole
 * line of the tail kept after it (looked for just above where the tail must end, near the transcript's
 * end), as the `terminal_read` call that shows them; `undefined` when the tail cannot be placed.
 */
const readHint = (runtime: SessionRuntime, text: string, omittedLines: number): string | undefined => {
  const marker = Capture.omissionPattern.exec(text)
  if (marker === null) return undefined
  const tail = text.slice(marker.index + marker[0].length + 1).split("\n")
  const source = runtime.emulator.transcript()
  const end = source.first + source.total
  const lowest = Math.max(source.first, end - tail.length - 64)
  for (let at = end - tail.length; at >= lowest; at--) {
    const line = source.line(at)
    const placed = (line === tail[0] || (tail[0] !== "" && line.endsWith(tail[0]!))) &&
      (tail.length < 2 || source.line(at + 1) === tail[1])
    if (!placed) continue
    const count = omittedLines + 1
    if (at - count < source.first) return undefined
    return `terminal_read {"sessionId":"${runtime.id}","offset":${end - at},"count":${count}} shows them`
  }
  return undefined
}

/**
 * A send's output within `maxBytes` (less the room for the facts): its head and tail, the omission line
 * naming the `terminal_read` call that shows the middle.
 */
export const fitOutput = (runtime: SessionRuntime, text: string, maxBytes: number): Utf8.HeadTail => {
  const room = outputRoom(maxBytes)
  const whole = Capture.fit(text, room)
  if (!whole.truncated) return whole
  if (room < 4 * HINT_ROOM) return whole
  const cut = Capture.fit(text, room - HINT_ROOM)
  const hint = readHint(runtime, cut.text, cut.omittedLines)
  if (hint === undefined) return whole
  const hinted = cut.text.replace(
    Capture.omissionPattern,
    (line) => `${line.slice(0, line.length - "] …".length)}; ${hint}] …`
  )
  return Utf8.byteLength(hinted) <= room ? { ...cut, text: hinted } : whole
}

/**
 * The send's result: the output over the cap cut to its head and tail (code points intact), and, while a
 * full-screen program holds the terminal, the screen as a person sees it instead of a byte stream.
 */
export const resultOf = (
  config: TerminalConfig,
  runtime: SessionRuntime,
  outcome: Outcome,
  text: string,
  truncated: boolean,
  elapsedMs: number
): SendResult => {
  const human = runtime.control.takeNote()
  const cut = fitOutput(
    runtime,
    human === undefined ? text : withHumanNote(human.note, human.output, text),
    config.maxResultBytes
  )
  const screen = holdsScreen(runtime, outcome) ? runtime.emulator.screen() : undefined
  const decisive = decisiveOf(outcome)
  const continuation = outcome._tag === "Abandoned" || outcome._tag === "Continuation"
  return {
    output: screen !== undefined && cut.text.trim() === "" ? fullScreenNote : cut.text,
    waitReason: reasonOf(decisive),
    ...(outcome._tag === "Prompt" && outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
    sessionStatus: statusOf(runtime),
    ...(screen !== undefined ? { screen: { rows: screen.rows, cursor: screen.cursor } } : {}),
    truncated: truncated || cut.truncated,
    ...(continuation ? { continuation: true } : {}),
    ...(decisive._tag === "Matched" ? { match: decisive.match } : {}),
    elapsedMs,
    ...(human !== undefined ? { human: human.note } : {})
  }
}

/**
 * A result that ended by `timeout` or `inferred_idle`, with what the foreground program is doing (`/proc`):
 * sleeping, blocked reading a pipe or a socket, waiting for a child, running — so the model can choose
 * between waiting longer, signalling and reading. Other results are returned as they are.
 */
export const withForeground = (
  inspector: ProcessInspector["Type"],
  runtime: SessionRuntime,
  result: SendResult
): Effect.Effect<SendResult> => {
  const activity = inspector.activity
  if (activity === undefined || !isUnconfirmed(result.waitReason)) {
    return Effect.succeed(result)
  }
  if (runtime.exit !== undefined) return Effect.succeed(result)
  return Effect.map(
    activity(runtime.terminal),
    Option.match({ onNone: () => result, onSome: (foreground) => ({ ...result, foreground }) })
  )
}

/**
 * The first result after a person held the control: the note, what the terminal showed meanwhile, then the
 * send's own output.
 */
const withHumanNote = (note: HumanNote, meanwhile: string, output: string): string =>
  [humanNoteText(note), meanwhile, output].filter((part) => part !== "").join("\n")
