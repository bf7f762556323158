/**
 * Pasting text into a program: one bracketed paste when the program enabled bracketed-paste mode
 * (`CSI ? 2004 h`), so editors and shells take it as text rather than as typed keys.
 *
 * @since 0.1.0
 */

/**
 * Opens a bracketed paste.
 *
 * @since 0.1.0
 */
export const pasteStart = "\x1b[200~"

/**
 * Closes a bracketed paste.
 *
 * @since 0.1.0
 */
export const pasteEnd = "\x1b[201~"

/**
 * The terminal mode that decides how a paste is sent.
 *
 * @since 0.1.0
 */
export interface PasteModes {
  readonly bracketed: boolean
}

const withoutBrackets = (text: string): string => {
  let out = text
  while (out.includes(pasteStart) || out.includes(pasteEnd)) {
    out = out.split(pasteEnd).join("").split(pasteStart).join("")
  }
  return out
}

/**
 * Encodes `text` as a terminal sends a paste. Line breaks (`\n`, `\r\n`) become `\r`, as xterm and
 * xterm.js send them: in a program without bracketed paste each line is typed and submitted like Enter, and
 * programs with it (readline, vim, prompt_toolkit) read `\r` inside a paste as a newline. With `bracketed`,
 * the text is wrapped in `ESC[200~` … `ESC[201~`, and any bracket sequence inside it is removed first
 * (repeatedly, so none can be re-formed) so the text cannot end the paste early and run the rest as keys.
 *
 * @since 0.1.0
 */
export const encodePaste = (text: string, modes: PasteModes): string => {
  const lines = text.replace(/\r?\n/g, "\r")
  return modes.bracketed ? `${pasteStart}${withoutBrackets(lines)}${pasteEnd}` : lines
}
