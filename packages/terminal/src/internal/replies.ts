/**
 * Answers to the queries xterm.js leaves to its renderer or does not know, which a headless terminal
 * must give itself: colors (OSC 4 / 10 / 11 / 12 with `?`), pixel sizes (`CSI 14 t`, `CSI 16 t`) and
 * terminfo capabilities (XTGETTCAP, `DCS + q`). Programs such as vim ask and wait for the answers (vim
 * again at exit, for any still missing); an answer keeps them from waiting. The palette is xterm.js's
 * default theme; a cell counts as 8 × 16 pixels.
 */

export type Rgb = readonly [number, number, number]

const hex = (value: string): Rgb => [
  parseInt(value.slice(1, 3), 16),
  parseInt(value.slice(3, 5), 16),
  parseInt(value.slice(5, 7), 16)
]

const ansi16 = [
  "#2e3436",
  "#cc0000",
  "#4e9a06",
  "#c4a000",
  "#3465a4",
  "#75507b",
  "#06989a",
  "#d3d7cf",
  "#555753",
  "#ef2929",
  "#8ae234",
  "#fce94f",
  "#729fcf",
  "#ad7fa8",
  "#34e2e2",
  "#eeeeec"
].map(hex)

const cubeLevels = [0, 95, 135, 175, 215, 255]

/** The default color of a palette index (0–255) or of the special colors 256 (fg), 257 (bg), 258 (cursor). */
export const defaultColor = (index: number): Rgb => {
  if (index < 16) return ansi16[index]!
  if (index < 232) {
    const cube = index - 16
    return [cubeLevels[Math.floor(cube / 36)]!, cubeLevels[Math.floor(cube / 6) % 6]!, cubeLevels[cube % 6]!]
  }
  if (index < 256) {
    const level = 8 + (index - 232) * 10
    return [level, level, level]
  }
  return index === 257 ? [0, 0, 0] : [255, 255, 255]
}

const channel = (value: number) => value.toString(16).padStart(2, "0").repeat(2)

/** `rgb:rrrr/gggg/bbbb`, as xterm reports a color. */
export const rgbSpec = ([r, g, b]: Rgb): string => `rgb:${channel(r)}/${channel(g)}/${channel(b)}`

/** One color request from xterm's parser: report (0), set (1) or restore (2) a palette or special color. */
export interface ColorRequest {
  readonly type: number
  readonly index?: number
  readonly color?: Rgb
}

/** The colors as programs set them (OSC 4 / 10 / 11 / 12), answering reports from them. */
export class Palette {
  readonly #set = new Map<number, Rgb>()

  /** Apply requests; the answers to report requests, as escape sequences. */
  handle(requests: ReadonlyArray<ColorRequest>): string {
    let answer = ""
    for (const request of requests) {
      if (request.type === 0 && request.index !== undefined) {
        const color = this.#set.get(request.index) ?? defaultColor(request.index)
        const ident = request.index < 256 ? `4;${request.index}` : String(10 + request.index - 256)
        answer += `\x1b]${ident};${rgbSpec(color)}\x1b\\`
      } else if (request.type === 1 && request.index !== undefined && request.color !== undefined) {
        this.#set.set(request.index, request.color)
      } else if (request.type === 2) {
        if (request.index === undefined) this.#set.clear()
        else this.#set.delete(request.index)
      }
    }
    return answer
  }
}

export const CELL_WIDTH_PX = 8
export const CELL_HEIGHT_PX = 16

/** The answer to a `CSI Ps t` pixel-size report request, or `undefined` for other window operations. */
export const windowPixels = (ps: number, cols: number, rows: number): string | undefined =>
  ps === 14
    ? `\x1b[4;${rows * CELL_HEIGHT_PX};${cols * CELL_WIDTH_PX}t`
    : ps === 16
    ? `\x1b[6;${CELL_HEIGHT_PX};${CELL_WIDTH_PX}t`
    : undefined

const hexOf = (text: string) =>
  Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("")

const fromHex = (hex: string) => {
  const bytes = hex.match(/[0-9a-fA-F]{2}/g) ?? []
  return new TextDecoder().decode(Uint8Array.from(bytes, (pair) => parseInt(pair, 16)))
}

/** The capabilities XTGETTCAP answers; every other name is reported unknown (the program keeps its own). */
const capabilities: Readonly<Record<string, string>> = {
  TN: "xterm-256color",
  name: "xterm-256color",
  Co: "256",
  colors: "256"
}

/** The answers to an XTGETTCAP request (`DCS + q <hex name>;<hex name>… ST`), one per name, as xterm gives. */
export const capabilityReplies = (request: string): string =>
  request.split(";").filter((name) => name !== "").map((hexName) => {
    const value = capabilities[fromHex(hexName)]
    return value === undefined ? `\x1bP0+r${hexName}\x1b\\` : `\x1bP1+r${hexName}=${hexOf(value)}\x1b\\`
  }).join("")
