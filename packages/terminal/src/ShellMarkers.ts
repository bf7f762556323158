/**
 * The shell-integration protocol: the prompt hook of a shell dialect prints private OSC sequences that
 * carry a per-session random nonce. The emulator reports each one with its exact position in the stream;
 * this module gives them meaning.
 *
 * @since 0.1.0
 */

/**
 * The OSC number our markers use (private, unlikely to collide with a program's own sequences).
 *
 * @since 0.1.0
 */
export const OSC_NUMBER = 7331

/**
 * The kinds of marker.
 *
 * - `D` prompt start, after a command finished: carries the exit status (`$?`).
 * - `B` prompt end: the shell waits for a command line.
 * - `C` command start: a command line was accepted and runs now.
 * - `P` a continuation prompt (PS2): the shell waits for the rest of an unfinished command.
 *
 * @since 0.1.0
 */
export type MarkerKind = "D" | "B" | "C" | "P"

/**
 * A decoded marker.
 *
 * @since 0.1.0
 */
export interface ShellMarker {
  readonly kind: MarkerKind
  readonly exitCode: number | undefined
}

/**
 * Decode an OSC payload (`D;<nonce>;<status>`); anything without our nonce is not a marker (a program
 * printing a copy of one, e.g. `cat` of a file holding one, never counts).
 *
 * @since 0.1.0
 */
export const decode = (payload: string, nonce: string): ShellMarker | undefined => {
  const parts = payload.split(";")
  if (parts[1] !== nonce) return undefined
  switch (parts[0]) {
    case "D": {
      const status = Number(parts[2])
      return { kind: "D", exitCode: Number.isInteger(status) ? status : undefined }
    }
    case "B":
    case "C":
    case "P":
      return { kind: parts[0], exitCode: undefined }
    default:
      return undefined
  }
}

/**
 * A marker's OSC payload (`7331;D;<nonce>;<extra>`), for a dialect to frame with its shell's own escapes; `extra`
 * is what follows the nonce (a `D` marker's status, or the shell's expression for it).
 *
 * @since 0.4.0
 */
export const payload = (kind: MarkerKind, nonce: string, extra?: string): string =>
  `${OSC_NUMBER};${kind};${nonce}${extra === undefined ? "" : `;${extra}`}`

/**
 * The escape sequence for a marker, as a shell prints it (`\x1b]7331;B;<nonce>\x07`).
 *
 * @since 0.1.0
 */
export const encode = (kind: MarkerKind, nonce: string, extra?: string): string =>
  `\x1b]${payload(kind, nonce, extra)}\x07`
