/**
 * A send's input: its bytes (`encode`), what kind of input it is for the readiness race (`classify`, once per
 * send), and its echo in the output (`stripEcho`).
 */
import type { Emulator } from "@agent-terminal/terminal"
import { Keys, Paste } from "@agent-terminal/terminal"
import * as Either from "effect/Either"
import { InvalidInput } from "../../Errors.js"
import type { SendRequest, SessionType } from "../../Session.js"
import type { ShellState } from "../session/shellState.js"

/**
 * What a send's input is, for the tiers that judge it, classified once before the write:
 * - `Command`: input to a command session (no shell integration, no markers);
 * - `Line`: one command line and Enter to a shell at its prompt: the shell's command-start marker proves the
 *   whole line was taken, so no probe is taken before the write;
 * - `Unit`: a submitted bracketed paste, which the shell takes as one command line (left incomplete, it is
 *   discarded, not left half-typed);
 * - `LeftOpen`: keys or text without Enter, Ctrl-C or Ctrl-D: the shell's command line stays open, and the
 *   shell reading on is the answer;
 * - `Other`: any other input to a shell.
 * `running`: the shell reported a command running at the write, so the first prompt after it may be that
 * command's.
 */
export type InputKind =
  | { readonly _tag: "Command" }
  | { readonly _tag: "Line" }
  | { readonly _tag: "Unit"; readonly running: boolean }
  | { readonly _tag: "LeftOpen"; readonly running: boolean }
  | { readonly _tag: "Other"; readonly running: boolean }

/** The kinds, allocated once. */
export const InputKind = {
  Command: { _tag: "Command" },
  Line: { _tag: "Line" },
  Unit: { _tag: "Unit", running: false },
  UnitWhileRunning: { _tag: "Unit", running: true },
  LeftOpen: { _tag: "LeftOpen", running: false },
  LeftOpenWhileRunning: { _tag: "LeftOpen", running: true },
  Other: { _tag: "Other", running: false },
  OtherWhileRunning: { _tag: "Other", running: true }
} as const satisfies Record<string, InputKind>

/** A command was running at the write: the first prompt after it may be that command's. */
export const runningAtStart = (kind: InputKind): boolean =>
  kind._tag !== "Command" && kind._tag !== "Line" && kind.running

/** The quick path applies: a shell at its prompt was given input that ends the line (see `promptFirst`). */
export const promptComesNext = (kind: InputKind): boolean =>
  kind._tag === "Line" || ((kind._tag === "Unit" || kind._tag === "Other") && !kind.running)

/**
 * The kind of `input` (the encoded bytes) sent to a session of `type` whose shell is in `shell.state`.
 */
export const classify = (type: SessionType, shell: ShellState, input: string): InputKind => {
  if (type !== "shell") return InputKind.Command
  const running = shell.state === "running"
  if (leavesLineOpen(input)) return running ? InputKind.LeftOpenWhileRunning : InputKind.LeftOpen
  if (shell.state === "prompt" && singleLine(input)) return InputKind.Line
  if (sentAsUnit(input)) return running ? InputKind.UnitWhileRunning : InputKind.Unit
  return running ? InputKind.OtherWhileRunning : InputKind.Other
}

/** The kind a background send's watch is re-armed with once its first wait was seen: no line to prove taken. */
export const rearmed = (kind: InputKind): InputKind => kind._tag === "Line" ? InputKind.Other : kind

/**
 * The bytes of a send. `text` is typed as its exact UTF-8 (every code point, ≥ U+0080 too, goes out as its
 * UTF-8 bytes, unchanged), then Enter unless `submit` is false; one trailing newline of a submitted text is
 * that Enter. A text of several lines, for a shell reading its command line (`shellReading`) with
 * bracketed paste on (bash 5.2's readline), goes as one bracketed paste (then Enter when submitted): the
 * shell takes the lines as one command line and runs them as one unit; none of them runs early, and they
 * never meet a continuation prompt line by line. `keys` are named keys (arrows per the application-cursor
 * mode); `paste` is bracketed when the program enabled bracketed paste.
 */
export const encode = (
  request: Pick<SendRequest, "text" | "keys" | "paste" | "submit">,
  modes: Emulator.Modes,
  shellReading = false
): Either.Either<string, InvalidInput> => {
  const given = (request.text !== undefined ? 1 : 0) + (request.keys !== undefined ? 1 : 0) +
    (request.paste !== undefined ? 1 : 0)
  if (given === 0) {
    return Either.left(new InvalidInput({ field: "text", reason: "give one of text, keys or paste" }))
  }
  if (given > 1) {
    return Either.left(new InvalidInput({ field: "text", reason: "give only one of text, keys or paste per send" }))
  }
  if (request.keys !== undefined) {
    if (request.keys.length === 0) {
      return Either.left(new InvalidInput({ field: "keys", reason: "is empty" }))
    }
    return Keys.encodeKeys(request.keys, { applicationCursor: modes.applicationCursor }).pipe(
      Either.mapLeft((error) => new InvalidInput({ field: "keys", reason: error.message })),
      Either.map((bytes) => request.submit === true ? `${bytes}\r` : bytes)
    )
  }
  if (request.paste !== undefined) {
    const pasted = Paste.encodePaste(request.paste, { bracketed: modes.bracketedPaste })
    return Either.right(request.submit === true ? `${pasted}\r` : pasted)
  }
  const submit = request.submit !== false
  const text = submit ? request.text!.replace(/\r?\n$/, "") : request.text!
  const enter = submit ? "\r" : ""
  if (shellReading && modes.bracketedPaste && /[\r\n]/.test(text)) {
    return Either.right(`${Paste.encodePaste(text, { bracketed: true })}${enter}`)
  }
  return Either.right(`${text}${enter}`)
}

/** Input without Enter, Ctrl-C or Ctrl-D (a bracketed paste's inside aside) leaves a command line open. */
const leavesLineOpen = (input: string): boolean => {
  let outside = input
  for (let start = outside.indexOf(Paste.pasteStart); start !== -1; start = outside.indexOf(Paste.pasteStart)) {
    const end = outside.indexOf(Paste.pasteEnd, start)
    if (end === -1) break
    outside = outside.slice(0, start) + outside.slice(end + Paste.pasteEnd.length)
  }
  return !["\r", "\n", "\x03", "\x04"].some((ends) => outside.includes(ends))
}

/**
 * One command line and Enter, nothing else: no other line break, no control character a line editor would
 * act on (a tab, for completion, is typed like any character).
 */
const singleLine = (input: string): boolean => {
  if (!input.endsWith("\r")) return false
  for (let i = 0; i < input.length - 1; i++) {
    const code = input.charCodeAt(i)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return false
  }
  return true
}

/** A submitted bracketed paste: the shell got it as one command line (see `encode`). */
const sentAsUnit = (input: string): boolean => input.startsWith(Paste.pasteStart) && input.endsWith("\r")

/**
 * The first line of a capture that began at the write is the line being typed: its echo (or nothing, when
 * the program turned echo off, as a password prompt does). Drop it when the input was submitted.
 */
export const stripEcho = (output: string, request: SendRequest): string => {
  const text = request.text ?? request.paste
  const submitted = request.text !== undefined ? request.submit !== false : request.submit === true
  if (text === undefined || !submitted) return output
  const newline = output.indexOf("\n")
  const first = newline < 0 ? output : output.slice(0, newline)
  const typed = text.split(/\r?\n|\r/)[0] ?? ""
  if (first.trim() !== "" && first !== typed) return output
  return newline < 0 ? "" : output.slice(newline + 1)
}
