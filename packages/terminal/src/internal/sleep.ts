/**
 * A quiet emulator's xterm, released: when the terminal's whole state is its rows (the screen and xterm's own
 * scrollback above it), its modes and its cursor — what xterm's serializer writes back exactly — the rows are
 * kept as that text and the xterm instance (its rows, and the hundreds of handlers and arrays every instance
 * holds: ~250 KiB) is dropped. The emulator wakes, writing the text into a new instance, on the next thing it
 * is asked. The scrollback is kept with the screen because a snapshot (what a live viewer starts from)
 * carries it: a viewer of a terminal that slept sees the rows one of a terminal that stayed awake sees.
 *
 * Anything the serializer would not carry keeps the instance awake: the alternate screen, a sequence half
 * parsed, a scroll region, moved tab stops, another character set, a saved cursor, colors or attributes left
 * set, a hidden or restyled cursor, a mouse encoding, a pending wrap, wraparound off or origin mode (the
 * replay's cursor moves would land elsewhere), and a top row that continues the row above it (its join with
 * the log would be lost). What the last printed character lets the next one join (`joinState`) is carried.
 */
import { SerializeAddon } from "@xterm/addon-serialize"
import { Unicode11Addon } from "@xterm/addon-unicode11"
import xterm from "@xterm/headless"
import { type Core, coreOf } from "./xtermCore.js"

interface Internals {
  readonly _inputHandler: {
    readonly _parser: { readonly currentState: number; precedingJoinState: number }
    readonly _curAttrData: AttributeData
  }
  readonly _charsetService: {
    readonly charset: unknown
    readonly glevel: number
    readonly _charsets: ReadonlyArray<unknown>
  }
  readonly coreService: {
    readonly isCursorHidden: boolean
    readonly decPrivateModes: {
      readonly cursorStyle: unknown
      readonly cursorBlink: unknown
      readonly synchronizedOutput: boolean
      readonly wraparound: boolean
      readonly origin: boolean
    }
  }
  readonly coreMouseService: { readonly activeEncoding: string }
  readonly _bufferService: {
    readonly buffers: {
      readonly active: unknown
      readonly normal: SleepyBuffer
    }
  }
}

interface AttributeData {
  readonly fg: number
  readonly bg: number
  hasExtendedAttrs(): number
}

interface Row {
  readonly isWrapped: boolean
  readonly _data: Uint32Array
  readonly _combined: Record<number, string>
  readonly _extendedAttrs: Record<number, unknown>
}

interface SleepyBuffer {
  readonly x: number
  readonly y: number
  readonly ybase: number
  readonly scrollTop: number
  readonly scrollBottom: number
  readonly savedX: number
  readonly savedY: number
  readonly savedCurAttrData: AttributeData
  readonly savedCharset: unknown
  readonly tabs: Record<number, boolean>
  readonly lines: { get(index: number): Row | undefined }
}

const TAB_WIDTH = 8

const plainAttributes = (data: AttributeData) => data.fg === 0 && data.bg === 0 && !data.hasExtendedAttrs()

const defaultTabs = (tabs: Record<number, boolean>, cols: number): boolean => {
  const stops = Object.keys(tabs)
  if (stops.length !== Math.ceil(cols / TAB_WIDTH)) return false
  return stops.every((stop) => Number(stop) % TAB_WIDTH === 0 && tabs[Number(stop)] === true)
}

/** Whether the serializer carries the whole state of this terminal (see the module's comment). */
export const canSleep = (core: Core, cols: number, rows: number): boolean => {
  const inner = core as unknown as Internals
  const buffers = inner._bufferService.buffers
  const normal = buffers.normal
  const parser = inner._inputHandler._parser
  const charsets = inner._charsetService
  const modes = inner.coreService.decPrivateModes
  return buffers.active === normal &&
    parser.currentState === 0 &&
    normal.scrollTop === 0 && normal.scrollBottom === rows - 1 &&
    normal.x < cols &&
    defaultTabs(normal.tabs, cols) &&
    charsets.charset === undefined && charsets.glevel === 0 && charsets._charsets.every((c) => c === undefined) &&
    normal.savedX === 0 && normal.savedY === 0 && plainAttributes(normal.savedCurAttrData) &&
    normal.savedCharset === undefined &&
    plainAttributes(inner._inputHandler._curAttrData) &&
    !inner.coreService.isCursorHidden && modes.cursorStyle === undefined && modes.cursorBlink === undefined &&
    !modes.synchronizedOutput && modes.wraparound && !modes.origin &&
    inner.coreMouseService.activeEncoding === "DEFAULT" &&
    normal.lines.get(normal.ybase)?.isWrapped !== true
}

/** What the last printed character lets the next one join (a combining mark, `REP`). */
export const joinState = (core: Core): number => (core as unknown as Internals)._inputHandler._parser.precedingJoinState

/** Carry `joinState` into a terminal whose screen was just written back. */
export const setJoinState = (core: Core, state: number): void => {
  ;(core as unknown as Internals)._inputHandler._parser.precedingJoinState = state
}

/**
 * The normal buffer's rows (xterm's scrollback and the screen), its modes and the cursor as the text that
 * restores them (xterm's serializer).
 */
export const serializeRows = (terminal: xterm.Terminal): string => {
  const serializer = new SerializeAddon()
  terminal.loadAddon(serializer)
  const rows = serializer.serialize({ excludeAltBuffer: true })
  serializer.dispose()
  return rows
}

const normalOf = (core: Core): SleepyBuffer => (core as unknown as Internals)._bufferService.buffers.normal

const sameRow = (a: Row | undefined, b: Row | undefined, wrap: boolean): boolean => {
  if (a === undefined || b === undefined) return a === b
  if ((wrap && a.isWrapped !== b.isWrapped) || a._data.length !== b._data.length) return false
  for (let i = 0; i < a._data.length; i++) if (a._data[i] !== b._data[i]) return false
  const combined = Object.keys(a._combined)
  if (combined.length !== Object.keys(b._combined).length) return false
  if (combined.some((key) => a._combined[Number(key)] !== b._combined[Number(key)])) return false
  return Object.keys(a._extendedAttrs).length === 0 && Object.keys(b._extendedAttrs).length === 0
}

/**
 * Whether `text` written into a new terminal gives back exactly this one's rows: every cell (content, width,
 * colors, attributes) of the scrollback and the screen, every row's wrap, the cursor and the modes. The
 * serializer has quirks (a lone combining mark at a row's start is dropped): rows it cannot give back stay
 * awake. The first row's own wrap is not compared: nothing shows it (the serializer, the harvest and the log
 * read a row's wrap only to join it to the row above, and there is none above the first); it is set when
 * xterm's scrollback dropped the start of its line.
 */
export const restores = (terminal: xterm.Terminal, core: Core, text: string): boolean => {
  const a = normalOf(core)
  const copy = verifier(terminal.cols, terminal.rows, terminal.options.scrollback ?? 0)
  const copyCore = coreOf(copy)
  copyCore.writeSync(text)
  const b = normalOf(copyCore)
  if (a.x !== b.x || a.y !== b.y || a.ybase !== b.ybase) return false
  for (let y = 0; y < a.ybase + terminal.rows; y++) {
    if (!sameRow(a.lines.get(y), b.lines.get(y), y > 0)) return false
  }
  return JSON.stringify(terminal.modes) === JSON.stringify(copy.modes)
}

/**
 * The one terminal every check of a screen writes into, reset before each: a new instance per check would
 * double what creating terminals costs the process's memory (each leaves its allocations to be reused).
 */
let shared: xterm.Terminal | undefined

const verifier = (cols: number, rows: number, scrollback: number): xterm.Terminal => {
  if (shared === undefined) {
    shared = new xterm.Terminal({ cols, rows, scrollback, allowProposedApi: true, logLevel: "off" })
    shared.loadAddon(new Unicode11Addon())
    shared.unicode.activeVersion = "11"
  }
  coreOf(shared).writeSync("\x1bc")
  if (shared.options.scrollback !== scrollback) shared.options.scrollback = scrollback
  if (shared.cols !== cols || shared.rows !== rows) shared.resize(cols, rows)
  return shared
}
