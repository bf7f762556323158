/**
 * One terminal emulator per session (`@xterm/headless`, the xterm.js core): it interprets everything the
 * program prints the way a terminal would, answers terminal queries, tracks modes and the alternate
 * screen, and reports our shell markers at their exact position in the stream. Rows that scroll off the
 * screen are final: they move into the bounded line log, and into any open output capture.
 *
 * @since 0.1.0
 */
import { Unicode11Addon } from "@xterm/addon-unicode11"
import xterm from "@xterm/headless"
import * as LineLog from "./LineLog.js"
import * as Paging from "./Paging.js"
import * as ShellMarkers from "./ShellMarkers.js"
import * as Utf8 from "./Utf8.js"

/**
 * A place in the stream: an absolute row (counted from the session's first row, never reused) and a
 * column.
 *
 * @since 0.1.0
 */
export interface Position {
  readonly row: number
  readonly col: number
}

/**
 * @since 0.1.0
 */
export interface EmulatorOptions {
  readonly cols: number
  readonly rows: number
  readonly scrollbackLines: number
  readonly scrollbackMaxBytes: number
}

/**
 * What the emulator tells its owner while it parses.
 *
 * @since 0.1.0
 */
export interface EmulatorHooks {
  /** Bytes the terminal answers (cursor position, device attributes…): write them back into the pty. */
  readonly onReply: (data: string) => void
  /** One of our OSC markers, with the position where it occurred. */
  readonly onMarker: (payload: string, at: Position) => void
}

/**
 * The modes a program set that change how input must be encoded or how the screen must be read.
 *
 * @since 0.1.0
 */
export interface Modes {
  readonly bracketedPaste: boolean
  readonly applicationCursor: boolean
  readonly alternateScreen: boolean
}

/**
 * A rendered screen: what a person sees in the window now.
 *
 * @since 0.1.0
 */
export interface Screen {
  readonly rows: ReadonlyArray<string>
  readonly cursor: { readonly row: number; readonly col: number }
  readonly alternate: boolean
}

/**
 * The text that appeared between two positions, bounded: over the budget the head and the tail are kept
 * and the middle is counted.
 *
 * @since 0.1.0
 */
export interface Captured {
  readonly text: string
  readonly truncated: boolean
  readonly omittedLines: number
  readonly omittedBytes: number
}

interface CapturedLine {
  readonly row: number
  text: string
}

const XTERM_SCROLLBACK = 64

/**
 * The line that stands for the middle of an output too large to return whole.
 *
 * @since 0.1.0
 */
export const omissionLine = (lines: number, bytes: number): string =>
  `… [${lines} line${lines === 1 ? "" : "s"} (${bytes} bytes) omitted] …`

/**
 * Collects the logical lines that scroll off the screen after `start`, keeping a bounded head and tail.
 *
 * @since 0.1.0
 */
export class Capture {
  #start: Position
  readonly #budget: number
  readonly #head: Array<CapturedLine> = []
  #headBytes = 0
  #headFull = false
  readonly #tail: Array<CapturedLine> = []
  #tailBytes = 0
  #omittedLines = 0
  #omittedBytes = 0
  /** @internal */
  closed = false

  /** @internal */
  constructor(start: Position, budget: number) {
    this.#start = start
    this.#budget = budget
  }

  /** Where the capture begins. */
  get start(): Position {
    return this.#start
  }

  /** @internal */
  pushRow(row: number, text: string, wrapped: boolean): void {
    if (row < this.#start.row) return
    const last = this.#tail.length > 0 ? this.#tail[this.#tail.length - 1] : this.#head[this.#head.length - 1]
    if (wrapped && last !== undefined && last.row < row) {
      this.#extend(last, text)
      return
    }
    this.#pushLine({ row, text })
  }

  /** Forget what was captured before `position` (e.g. the echo of a command line before its start marker). */
  rebase(position: Position): void {
    if (position.row < this.#start.row) return
    this.#start = position
    const keep = (line: CapturedLine) => line.row >= position.row
    const head = this.#head.filter(keep)
    const tail = this.#tail.filter(keep)
    this.#head.length = 0
    this.#tail.length = 0
    this.#headBytes = 0
    this.#tailBytes = 0
    this.#headFull = false
    for (const line of [...head, ...tail]) this.#pushLine(line)
  }

  /** @internal */
  get head(): ReadonlyArray<CapturedLine> {
    return this.#head
  }

  /** @internal */
  get tail(): ReadonlyArray<CapturedLine> {
    return this.#tail
  }

  /** @internal */
  get omitted(): { readonly lines: number; readonly bytes: number } {
    return { lines: this.#omittedLines, bytes: this.#omittedBytes }
  }

  #pushLine(line: CapturedLine): void {
    const bytes = Utf8.byteLength(line.text) + 1
    if (!this.#headFull && this.#headBytes + bytes <= this.#budget) {
      this.#head.push(line)
      this.#headBytes += bytes
      return
    }
    this.#headFull = true
    this.#tail.push(line)
    this.#tailBytes += bytes
    this.#trimTail()
  }

  #extend(line: CapturedLine, text: string): void {
    const bytes = Utf8.byteLength(text)
    line.text += text
    if (this.#tail.length > 0 || this.#headFull) {
      this.#tailBytes += bytes
      this.#trimTail()
    } else {
      this.#headBytes += bytes
    }
  }

  #trimTail(): void {
    while (this.#tailBytes > this.#budget && this.#tail.length > 1) {
      const dropped = this.#tail.shift()!
      const bytes = Utf8.byteLength(dropped.text) + 1
      this.#tailBytes -= bytes
      this.#omittedLines++
      this.#omittedBytes += bytes
    }
  }
}

/**
 * @since 0.1.0
 */
export class Emulator {
  readonly log: LineLog.LineLog
  readonly #terminal: xterm.Terminal
  readonly #core: any
  readonly #captures = new Set<Capture>()
  readonly #disposers: Array<{ dispose(): void }> = []
  #trimmed = 0
  #harvested = 0
  #lost = 0

  constructor(options: EmulatorOptions, hooks: EmulatorHooks) {
    this.log = new LineLog.LineLog({ maxLines: options.scrollbackLines, maxBytes: options.scrollbackMaxBytes })
    this.#terminal = new xterm.Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: XTERM_SCROLLBACK,
      allowProposedApi: true,
      logLevel: "off",
      windowOptions: { getWinSizeChars: true, getCellSizePixels: true, getWinSizePixels: true }
    })
    this.#core = (this.#terminal as any)._core
    this.#terminal.loadAddon(new Unicode11Addon())
    this.#terminal.unicode.activeVersion = "11"
    this.#disposers.push(
      this.#terminal.onData(hooks.onReply),
      this.#terminal.onBinary(hooks.onReply),
      this.#terminal.parser.registerOscHandler(ShellMarkers.OSC_NUMBER, (payload) => {
        hooks.onMarker(payload, this.cursor())
        return true
      }),
      this.#normal.lines.onTrim((amount: number) => {
        this.#trimmed += amount
      }),
      this.#terminal.onScroll(() => this.#harvest())
    )
  }

  get #normal(): any {
    return this.#core._bufferService.buffers.normal
  }

  /**
   * Parse output synchronously: when this returns, markers fired, queries were answered and the screen
   * and the log are up to date.
   */
  write(data: string | Uint8Array): void {
    this.#core.writeSync(data)
    this.#harvest()
  }

  /** The cursor's position in the main screen (where the next output will appear). */
  cursor(): Position {
    const buffer = this.#normal
    return { row: this.#trimmed + buffer.ybase + buffer.y, col: buffer.x }
  }

  /** The modes the program has set. */
  get modes(): Modes {
    return {
      bracketedPaste: this.#terminal.modes.bracketedPasteMode,
      applicationCursor: this.#terminal.modes.applicationCursorKeysMode,
      alternateScreen: this.#terminal.buffer.active.type === "alternate"
    }
  }

  /** Rows that scrolled away before they could be logged (only after a resize reflow). */
  get lostRows(): number {
    return this.#lost
  }

  /** Start collecting what appears from `start` on, keeping at most `budget` bytes of head and of tail. */
  capture(start: Position, budget: number): Capture {
    const capture = new Capture(start, budget)
    this.#captures.add(capture)
    return capture
  }

  /** End a capture and render what it saw up to `end` (default: the cursor). */
  finish(capture: Capture, end: Position = this.cursor()): Captured {
    this.#captures.delete(capture)
    capture.closed = true
    const start = capture.start
    const lines: Array<string> = []
    let current: string | undefined
    const push = (text: string) => {
      if (current !== undefined) lines.push(current)
      current = text
    }
    const cut = (line: CapturedLine): string => {
      const from = line.row === start.row ? this.#rowText(line.row, 0, start.col).length : 0
      return from === 0 ? line.text : line.text.slice(from)
    }
    const omitted = capture.omitted
    for (const line of capture.head) if (line.row < end.row) push(cut(line))
    if (omitted.lines > 0) push(omissionLine(omitted.lines, omitted.bytes))
    for (const line of capture.tail) if (line.row < end.row) push(cut(line))
    for (let row = Math.max(start.row, this.#harvested); row <= end.row; row++) {
      const text = this.#rowText(row, row === start.row ? start.col : 0, row === end.row ? end.col : undefined)
      if (current !== undefined && row > start.row && this.#rowWrapped(row)) current += text
      else push(text)
    }
    if (current !== undefined) lines.push(current)
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop()
    return {
      text: lines.join("\n"),
      truncated: omitted.lines > 0,
      omittedLines: omitted.lines,
      omittedBytes: omitted.bytes
    }
  }

  /** The exact text between two positions of the main screen that are still on it (e.g. a prompt). */
  textBetween(from: Position, to: Position): string {
    if (from.row === to.row) return this.#rowText(from.row, from.col, to.col)
    const parts: Array<string> = []
    for (let row = from.row; row <= to.row; row++) {
      const text = this.#rowText(row, row === from.row ? from.col : 0, row === to.row ? to.col : undefined)
      parts.push(row > from.row && !this.#rowWrapped(row) ? `\n${text}` : text)
    }
    return parts.join("")
  }

  /** A page of the whole transcript (the log plus what is on screen), for `terminal_read`. */
  page(request: Paging.PageRequest): ReturnType<typeof Paging.page> {
    const live = this.#liveLines()
    const logEnd = this.log.endIndex
    const joinsLast = live.length > 0 && live[0]!.wrapped && logEnd > this.log.firstIndex
    const liveTexts = live.map((line) => line.text)
    const total = logEnd + liveTexts.length - (joinsLast ? 1 : 0)
    const line = (index: number): string => {
      if (joinsLast && index === logEnd - 1) return (this.log.get(index) ?? "") + liveTexts[0]
      if (index < logEnd) return this.log.get(index) ?? ""
      return liveTexts[index - logEnd + (joinsLast ? 1 : 0)] ?? ""
    }
    return Paging.page({ first: this.log.firstIndex, total: total - this.log.firstIndex, line }, request)
  }

  /** The screen as a person sees it now (the alternate screen while a full-screen program holds it). */
  screen(): Screen {
    const buffer = this.#terminal.buffer.active
    const rows: Array<string> = []
    for (let y = 0; y < this.#terminal.rows; y++) {
      rows.push(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? "")
    }
    while (rows.length > 0 && rows[rows.length - 1] === "" && rows.length - 1 > buffer.cursorY) rows.pop()
    return {
      rows,
      cursor: { row: buffer.cursorY, col: buffer.cursorX },
      alternate: buffer.type === "alternate"
    }
  }

  resize(cols: number, rows: number): void {
    this.#harvest()
    this.#terminal.resize(cols, rows)
  }

  dispose(): void {
    for (const disposable of this.#disposers) disposable.dispose()
    this.#captures.clear()
    this.#terminal.dispose()
  }

  #harvest(): void {
    const buffer = this.#normal
    const upTo = this.#trimmed + buffer.ybase
    if (this.#harvested < this.#trimmed) {
      this.#lost += this.#trimmed - this.#harvested
      this.#harvested = this.#trimmed
    }
    while (this.#harvested < upTo) {
      const row = this.#harvested
      const wrapped = this.#rowWrapped(row)
      const text = this.#rowText(row, 0, undefined)
      if (wrapped && this.log.endIndex > this.log.firstIndex) this.log.extendLast(text)
      else this.log.append(text)
      for (const capture of this.#captures) capture.pushRow(row, text, wrapped)
      this.#harvested++
    }
  }

  #line(row: number): any {
    return this.#normal.lines.get(row - this.#trimmed)
  }

  #rowWrapped(row: number): boolean {
    return this.#line(row)?.isWrapped ?? false
  }

  #rowText(row: number, startCol: number, endCol: number | undefined): string {
    const line = this.#line(row)
    if (line === undefined) return ""
    const trimRight = endCol === undefined && !this.#rowWrapped(row + 1)
    return line.translateToString(trimRight, startCol, endCol)
  }

  #liveLines(): Array<{ text: string; wrapped: boolean }> {
    const buffer = this.#normal
    const top = this.#trimmed + buffer.ybase
    let bottom = top + buffer.y
    for (let row = top + this.#terminal.rows - 1; row > bottom; row--) {
      if (this.#rowText(row, 0, undefined) !== "") {
        bottom = row
        break
      }
    }
    const lines: Array<{ text: string; wrapped: boolean }> = []
    for (let row = this.#harvested; row <= bottom; row++) {
      const text = this.#rowText(row, 0, undefined)
      const wrapped = this.#rowWrapped(row)
      if (wrapped && lines.length > 0) lines[lines.length - 1]!.text += text
      else lines.push({ text, wrapped })
    }
    while (lines.length > 1 && lines[lines.length - 1]!.text === "") lines.pop()
    return lines
  }
}
