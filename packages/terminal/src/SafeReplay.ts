/**
 * A recording's output made safe to play in a person's own terminal. What a program printed can act outside
 * the screen when it reaches a real terminal: OSC 52 sets the clipboard (a model's output becoming the
 * person's next paste), OSC 0/1/2 set the title, OSC 8 makes links, DCS and the other string sequences
 * (APC, PM, SOS) reach the terminal's own machinery, and some CSI sequences ask the terminal to answer
 * (device attributes, status reports, mode queries, its version) or move and resize its window. `Filter`
 * drops all of those — every OSC and string sequence, the querying and window CSIs, and the private modes
 * that make the terminal report the mouse, focus or pastes — and passes the rest (text, colours, cursor
 * movement, erasing, the alternate screen) unchanged. It works on text as it comes: a sequence split
 * between two pieces is handled whole.
 *
 * @since 0.3.0
 */

const ESC = 0x1b
const BEL = 0x07

/** CSI final bytes whose sequences query the terminal or act on its window: DA, DSR, window ops. */
const droppedFinals = new Set(["c", "n", "t"])

/** Private modes that make the terminal report what happens in it (mouse, focus, bracketed paste). */
const reportingModes = new Set([9, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016, 2004])

/** The most characters of a CSI kept while it is read (longer ones are dropped whole). */
const MAX_CSI = 256

type State =
  | { readonly _tag: "Ground" }
  | { readonly _tag: "Escape" }
  | { readonly _tag: "Csi"; text: string }
  /** An OSC, DCS, APC, PM or SOS: skipped until its terminator (`escaped`: an ESC was just seen). */
  | { readonly _tag: "String"; escaped: boolean; readonly osc: boolean }

/**
 * What a CSI sequence (`ESC [` … final) is, for the filter: `undefined` to drop it, else the text to keep.
 */
const keepCsi = (sequence: string): string | undefined => {
  const final = sequence[sequence.length - 1]!
  const body = sequence.slice(2, -1)
  if (droppedFinals.has(final)) return undefined
  // DECRQM (`$p`), XTVERSION (`>q`), XTGETTCAP and other queries with intermediates
  if (final === "p" && body.endsWith("$")) return undefined
  if (final === "q" && body.startsWith(">")) return undefined
  if ((final === "h" || final === "l") && body.startsWith("?")) {
    const modes = body.slice(1).split(";").map(Number)
    const kept = modes.filter((mode) => !reportingModes.has(mode))
    if (kept.length === 0) return undefined
    if (kept.length < modes.length) return `\x1b[?${kept.join(";")}${final}`
  }
  return sequence
}

/**
 * The filter of one recording's output, fed in order. `dropped` counts the sequences left out.
 *
 * @since 0.3.0
 */
export class Filter {
  #state: State = { _tag: "Ground" }
  dropped = 0

  /** The safe part of `text`, given everything before it. */
  push(text: string): string {
    let out = ""
    let plainFrom = -1
    const flushPlain = (to: number) => {
      if (plainFrom >= 0) out += text.slice(plainFrom, to)
      plainFrom = -1
    }
    for (let at = 0; at < text.length; at++) {
      const code = text.charCodeAt(at)
      const state = this.#state
      switch (state._tag) {
        case "Ground":
          if (code === ESC) {
            flushPlain(at)
            this.#state = { _tag: "Escape" }
          } else if (code === 0x9d || code === 0x90 || code === 0x98 || code === 0x9e || code === 0x9f) {
            // the 8-bit forms of OSC, DCS, SOS, PM, APC
            flushPlain(at)
            this.#state = { _tag: "String", escaped: false, osc: code === 0x9d }
          } else if (code === 0x9b) {
            flushPlain(at)
            this.#state = { _tag: "Csi", text: "\x1b[" }
          } else if (plainFrom < 0) plainFrom = at
          break
        case "Escape": {
          const char = text[at]!
          if (char === "[") this.#state = { _tag: "Csi", text: "\x1b[" }
          else if (char === "]" || char === "P" || char === "_" || char === "^" || char === "X") {
            this.#state = { _tag: "String", escaped: false, osc: char === "]" }
          } else {
            // a two-character escape (ESC 7, ESC =, ESC c…): on the screen only
            out += `\x1b${char}`
            this.#state = { _tag: "Ground" }
          }
          break
        }
        case "Csi": {
          state.text += text[at]!
          if (code >= 0x40 && code <= 0x7e) {
            const kept = keepCsi(state.text)
            if (kept === undefined) this.dropped++
            else out += kept
            this.#state = { _tag: "Ground" }
          } else if (state.text.length > MAX_CSI) {
            this.dropped++
            this.#state = { _tag: "Ground" }
          }
          break
        }
        case "String": {
          const ends = code === 0x9c || (state.osc && code === BEL) || (state.escaped && code === 0x5c)
          if (ends) {
            this.dropped++
            this.#state = { _tag: "Ground" }
          } else if (state.escaped) {
            // ESC and anything but `\` ends the string (as terminals read it) and begins a new escape
            this.dropped++
            this.#state = { _tag: "Escape" }
            at--
          } else state.escaped = code === ESC
          break
        }
      }
    }
    flushPlain(text.length)
    return out
  }
}

/**
 * The safe part of a whole text (one recording's output at once).
 *
 * @since 0.3.0
 */
export const filter = (text: string): string => new Filter().push(text)
