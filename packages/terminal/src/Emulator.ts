/**
 * One terminal emulator per session (`@xterm/headless`, the xterm.js core): it interprets everything the
 * program prints the way a terminal would, answers terminal queries, tracks modes and the alternate
 * screen, and reports our shell markers at their exact position in the stream. Rows that scroll off the
 * screen are final: they move into the bounded line log, and into any open output capture.
 *
 * Bytes are decoded here (WHATWG UTF-8, streaming: a code point split across chunks is joined, invalid
 * bytes become U+FFFD) rather than by xterm, whose decoder drops invalid bytes and loses a character
 * whose continuation byte `0x80` ends a chunk (`—`, `‘`, `…`). A clear screen (`ESC [2J`) scrolls the
 * screen into the log as VTE does, and a full reset (`ESC c`) keeps the log and the row numbering going.
 *
 * @since 0.1.0
 */
import { SerializeAddon } from "@xterm/addon-serialize"
import { Unicode11Addon } from "@xterm/addon-unicode11"
import xterm from "@xterm/headless"
import type { Captured, CapturedLine, Position } from "./Capture.js"
import { Capture, omissionLine } from "./Capture.js"
import * as ContentEnd from "./internal/contentEnd.js"
import { capabilityReplies, Palette, windowPixels } from "./internal/replies.js"
import { canSleep, joinState, restores, serializeRows, setJoinState } from "./internal/sleep.js"
import type { Core, CoreBuffer, CoreLine, Disposable } from "./internal/xtermCore.js"
import {
  boundStringSequences,
  coreOf,
  eraseAbove,
  lineAt,
  printsPlainLinesAtBottom,
  recoverFromThrow,
  SmallOscHandler
} from "./internal/xtermCore.js"
import * as LineLog from "./LineLog.js"
import type * as Matcher from "./Matcher.js"
import { OutputWatch, type WatchOptions } from "./OutputWatch.js"
import * as Paging from "./Paging.js"
import * as ShellMarkers from "./ShellMarkers.js"

/**
 * A send's output capture and its omission line (defined in `Capture`, re-exported for the emulator's users).
 *
 * @since 0.1.0
 */
export { Capture, omissionLine }

/**
 * Positions in the stream and rendered captures (defined in `Capture`).
 *
 * @since 0.1.0
 */
export type { Captured, Position }

/**
 * The terminal's state as another xterm.js can be initialised from it (the live view's first frame).
 *
 * @since 0.2.0
 */
export interface Snapshot {
  readonly cols: number
  readonly rows: number
  /** The screen, its modes and cursor as an escape-sequence stream (xterm.js `SerializeAddon`). */
  readonly data: string
  /**
   * The start of a UTF-8 character the emulator holds undecoded (its last bytes are still to come): write
   * these bytes after `data`, before the output that follows the snapshot.
   */
  readonly pending: Uint8Array
}

/** How many bytes at the end of `bytes` begin a UTF-8 character that is not complete yet. */
const incompleteTail = (bytes: Uint8Array): number => {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!
    if ((byte & 0xc0) === 0x80) continue
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return length > back ? back : 0
  }
  return 0
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
 * The longest marker payload accepted; a longer OSC 7331 is no marker of ours and is dropped as it
 * streams.
 *
 * @since 0.1.0
 */
export const MARKER_PAYLOAD_LIMIT = 1024

/**
 * The longest payload of any other OSC or DCS sequence the emulator holds (titles, colors, status
 * requests); beyond it the sequence is dropped as it streams, through its terminator, so an unterminated
 * sequence costs no memory however long it runs.
 *
 * @since 0.1.0
 */
export const STRING_PAYLOAD_LIMIT = 8192

/** What the emulator hands every row that scrolls off the screen for good (captures, watches). */
interface RowSink {
  pushRow(row: number, text: string, wrapped: boolean, bytes: number): void
}

const XTERM_SCROLLBACK = 64
/** What a field of the xterm instance holds once it is released: nothing, until `#awake` sets it again. */
const released = <A>(): A => undefined as A

/**
 * How long a terminal stays without output before its xterm instance is released (`sleep`): the timer's check
 * comes after at least this long, at most twice it. Half a minute: a session an agent is using stays awake
 * between its sends (a wake costs ~1.7 ms, a release ~2.5 ms), one left alone lets the instance go.
 *
 * @since 0.3.0
 */
export const QUIET_MS = 30_000
/** Rows that scroll off are logged in batches, well before xterm's own scrollback would drop them. */
const HARVEST_BATCH = 16
/**
 * Plain output (printable ASCII, CR and LF) is held back until something reads the terminal, up to this many
 * characters: a flood's lines that nobody will see on the screen are then logged without being printed.
 */
const PLAIN_HOLD = 128 * 1024
/** Anything but printable ASCII, CR and LF. */
const NOT_PLAIN = /[^\x20-\x7e\r\n]/

const plainByte = (byte: number): boolean => byte >= 0x20 ? byte <= 0x7e : byte === 0x0a || byte === 0x0d

/**
 * Whether every byte is printable ASCII, CR or LF: four bytes at a time, a word that may hold another byte (one
 * below 0x20, CR and LF among them, or above 0x7e) looked at byte by byte.
 */
const plainBytes = (bytes: Uint8Array): boolean => {
  const length = bytes.length
  let at = 0
  while (at < length && ((bytes.byteOffset + at) & 3) !== 0) {
    if (!plainByte(bytes[at++]!)) return false
  }
  if (at === length) return true
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + at, (length - at) >> 2)
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (((((word - 0x20202020) & ~word) | word | (word + 0x01010101)) & 0x80808080) !== 0) {
      const first = at + 4 * i
      for (let j = first; j < first + 4; j++) {
        if (!plainByte(bytes[j]!)) return false
      }
    }
  }
  for (let j = at + 4 * words.length; j < length; j++) {
    if (!plainByte(bytes[j]!)) return false
  }
  return true
}

/**
 * Of a run of plain lines, the last ones xterm prints: enough rows to fill its screen and its scrollback, so
 * both end exactly as they would had every line been printed.
 */
const printedRows = (rows: number): number => rows + XTERM_SCROLLBACK

/** A row's text from `startCol` to `endCol` (its end), without trailing blanks when `trimRight`. */
const lineText = (line: CoreLine, trimRight: boolean, startCol: number, endCol: number | undefined): string =>
  ContentEnd.rowText(
    line,
    startCol,
    trimRight ? Math.min(endCol ?? line.length, ContentEnd.trimmedLength(line)) : endCol ?? line.length
  )

/**
 * A session's terminal: feed it the program's output (`write`), ask it where the cursor is, what a send
 * printed (`capture` / `finish`), what the screen shows (`screen`), and page its transcript (`page`).
 *
 * @since 0.1.0
 */
export class Emulator {
  readonly #log: LineLog.LineLog
  readonly #hooks: EmulatorHooks
  readonly #palette = new Palette()
  #terminal!: xterm.Terminal
  #core!: Core
  readonly #decoder = new TextDecoder("utf-8")
  /**
   * The decoder holds no bytes of an unfinished character: the last byte it was given was ASCII, which ends any
   * sequence. Plain bytes (ASCII) are then their own text, decoded one byte a character.
   */
  #decoderEmpty = true
  /** What receives the rows that scroll off: open captures and watches. */
  #captures: Array<RowSink> = []
  /** Plain output not parsed yet (see `PLAIN_HOLD`), and its length. */
  #held: Array<string> = []
  #heldLength = 0
  #unprinted = 0
  #disposers: Array<Disposable> = []
  #normal!: CoreBuffer
  #trimListener!: Disposable
  /** Absolute row of the current normal buffer's first line (moves on a full reset, and at a wake). */
  #origin = 0
  #trimmed = 0
  #harvested = 0
  #lost = 0
  #scrolls = 0
  #faults = 0
  #lastFault: string | undefined
  /** The last bytes written (not copied): where an undecoded character's start is, for `snapshot`. */
  #lastBytes: Uint8Array | undefined
  #serializer: SerializeAddon | undefined
  /**
   * While the xterm instance is released (`sleep`): its rows (scrollback and screen) as the text that writes
   * them back, and the absolute row of the screen's top.
   */
  #asleep:
    | {
      readonly text: string
      readonly cols: number
      readonly rows: number
      readonly top: number
      readonly joinState: number
    }
    | undefined
  /** The screen is being written back into a new instance: nothing of it is output. */
  #replaying = false
  #writes = 0
  #writesAtArm = 0
  #quiet: ReturnType<typeof setTimeout> | undefined
  #disposed = false

  constructor(options: EmulatorOptions, hooks: EmulatorHooks) {
    this.#log = new LineLog.LineLog({ maxLines: options.scrollbackLines, maxBytes: options.scrollbackMaxBytes })
    this.#hooks = hooks
    this.#start(options.cols, options.rows)
  }

  /** The bounded transcript of the rows that scrolled off the screen (every output written is in it). */
  get log(): LineLog.LineLog {
    this.#settle()
    return this.#log
  }

  /** A new xterm instance with every handler of ours (at construction, and at each wake). */
  #start(cols: number, rows: number): void {
    const hooks = this.#hooks
    const reply = (data: string) => {
      if (!this.#replaying) hooks.onReply(data)
    }
    this.#terminal = new xterm.Terminal({
      cols,
      rows,
      scrollback: XTERM_SCROLLBACK,
      allowProposedApi: true,
      logLevel: "off",
      scrollOnEraseInDisplay: true,
      // xterm passes `CSI t` to our handler only for the window operations enabled here
      windowOptions: { getWinSizeChars: true, getCellSizePixels: true, getWinSizePixels: true }
    })
    this.#core = coreOf(this.#terminal)
    ContentEnd.install(this.#terminal)
    this.#terminal.loadAddon(new Unicode11Addon())
    this.#terminal.unicode.activeVersion = "11"
    this.#disposers = [
      this.#terminal.parser.registerDcsHandler({ intermediates: "+", final: "q" }, (data) => {
        reply(capabilityReplies(data))
        return true
      })
    ]
    boundStringSequences(this.#core, STRING_PAYLOAD_LIMIT)
    this.#normal = this.#core._bufferService.buffers.normal
    this.#trimListener = this.#listenTrim(this.#normal)
    const markers = new SmallOscHandler(MARKER_PAYLOAD_LIMIT, (payload) => hooks.onMarker(payload, this.cursor()))
    this.#disposers.push(
      this.#terminal.onData(reply),
      this.#terminal.onBinary(reply),
      this.#core._inputHandler.onColor((requests) => {
        const answer = this.#palette.handle(requests)
        if (answer !== "") reply(answer)
      }),
      this.#terminal.parser.registerCsiHandler({ final: "t" }, (params) => {
        const answer = windowPixels(Number(params[0] ?? 0), this.#terminal.cols, this.#terminal.rows)
        if (answer === undefined) return false
        reply(answer)
        return true
      }),
      this.#core._inputHandler._parser.registerOscHandler(ShellMarkers.OSC_NUMBER, markers),
      this.#terminal.parser.registerEscHandler({ final: "c" }, () => {
        this.#beforeReset()
        return false
      }),
      this.#core._bufferService.buffers.onBufferActivate(() => this.#afterBufferSwitch()),
      this.#core._bufferService.onScroll(() => {
        if (++this.#scrolls >= HARVEST_BATCH && !this.#replaying) this.#harvest()
      }),
      this.#terminal.parser.registerCsiHandler({ final: "J" }, (params) => this.#eraseInDisplay(params, false)),
      this.#terminal.parser.registerCsiHandler(
        { prefix: "?", final: "J" },
        (params) => this.#eraseInDisplay(params, true)
      )
    )
  }

  /**
   * Release the xterm instance of a quiet terminal (see `internal/sleep.ts`): nothing is open on it (no
   * capture, no watch) and its whole state is its rows (xterm's scrollback and the screen), its modes and its
   * cursor, which are kept as text.
   * Whatever is asked of it next — output, the cursor, the screen, a page of the transcript, a snapshot — wakes
   * it first, into the state it had. The log is the emulator's own and stays. True when it is asleep.
   */
  sleep(): boolean {
    if (this.#asleep !== undefined) return true
    if (this.#captures.length > 0 || this.#disposed) return false
    this.#parseHeld()
    this.#harvest()
    const cols = this.#terminal.cols
    const rows = this.#terminal.rows
    const top = this.#origin + this.#trimmed + this.#normal.ybase
    if (this.#harvested !== top || !canSleep(this.#core, cols, rows)) return false
    const text = serializeRows(this.#terminal)
    if (!restores(this.#terminal, this.#core, text)) return false
    const join = joinState(this.#core)
    this.#release()
    // let the instance go: every use wakes a new one first (`#awake`)
    this.#terminal = released()
    this.#core = released()
    this.#normal = released()
    this.#trimListener = released()
    this.#asleep = { text, cols, rows, top, joinState: join }
    return true
  }

  /** Whether the xterm instance is released (see `sleep`). */
  get asleep(): boolean {
    return this.#asleep !== undefined
  }

  /** The terminal up to date for a reader: awake, and the output held back parsed. */
  #awake(): void {
    this.#wake()
    this.#parseHeld()
  }

  /** The log up to date (the output held back parsed); the instance is not woken for it. */
  #settle(): void {
    if (this.#heldLength > 0) this.#awake()
  }

  /** The xterm instance, back from its text if it was released. */
  #wake(): void {
    const asleep = this.#asleep
    if (asleep === undefined) return
    this.#asleep = undefined
    this.#start(asleep.cols, asleep.rows)
    this.#replaying = true
    try {
      this.#core.writeSync(asleep.text)
    } finally {
      this.#replaying = false
    }
    setJoinState(this.#core, asleep.joinState)
    this.#scrolls = 0
    this.#origin = asleep.top - this.#normal.ybase
    this.#trimmed = 0
  }

  #release(): void {
    for (const disposable of this.#disposers) disposable.dispose()
    this.#disposers = []
    this.#trimListener.dispose()
    this.#serializer = undefined
    this.#terminal.dispose()
  }

  /** After output, a quiet moment (`QUIET_MS` without any) lets the instance go: one timer per quiet spell. */
  #arm(): void {
    this.#writesAtArm = this.#writes
    const quiet = setTimeout(() => {
      this.#quiet = undefined
      if (this.#writes !== this.#writesAtArm) this.#arm()
      else this.sleep()
    }, QUIET_MS)
    quiet.unref?.()
    this.#quiet = quiet
  }

  /**
   * Parse output synchronously: when this returns, markers fired, queries were answered and the screen
   * and the log are up to date. Bytes are decoded as a UTF-8 stream; a string is taken as decoded text.
   */
  write(data: string | Uint8Array): void {
    this.#wake()
    this.#writes++
    if (this.#quiet === undefined && !this.#disposed) this.#arm()
    let text: string
    let plain: boolean
    if (typeof data === "string") {
      text = data
      plain = !NOT_PLAIN.test(data)
    } else {
      this.#lastBytes = data
      plain = this.#decoderEmpty && plainBytes(data)
      // plain bytes are their own text, one byte a character: node's `Buffer` decodes them in one native call
      text = plain && ContentEnd.isLatin1(data) ? data.latin1Slice(0, data.length) : this.#decode(data)
    }
    if (plain && !this.#watching() && !this.#disposed && text.length > 0) {
      // plain output waits for a reader (or `PLAIN_HOLD`): parsed then in one piece (`#parsePlain`)
      this.#held.push(text)
      this.#heldLength += text.length
      if (this.#heldLength >= PLAIN_HOLD) this.#parseHeld()
      return
    }
    this.#parseHeld()
    if (plain) this.#parsePlain(text)
    else this.#parse(text)
  }

  /** Bytes decoded as the stream's next (see `#decoderEmpty`). */
  #decode(bytes: Uint8Array): string {
    if (bytes.length > 0) this.#decoderEmpty = bytes[bytes.length - 1]! < 0x80
    return this.#decoder.decode(bytes, { stream: true })
  }

  /** Text into xterm, and the rows it scrolled off into the log. */
  #parse(text: string): void {
    if (text.length > 0) {
      try {
        this.#core.writeSync(text)
      } catch (error) {
        // an xterm handler threw: without this the terminal would stay frozen for the session's life
        recoverFromThrow(this.#core)
        this.#faults++
        this.#lastFault = error instanceof Error ? error.message : String(error)
      }
    }
    this.#harvest()
  }

  /** The plain output held back, parsed (emptied first: nothing parsed here holds anything back). */
  #parseHeld(): void {
    if (this.#heldLength === 0) return
    const text = this.#held.length === 1 ? this.#held[0]! : this.#held.join("")
    this.#held = []
    this.#heldLength = 0
    this.#parsePlain(text)
  }

  /**
   * Plain output, parsed so that the terminal ends exactly as if xterm had printed all of it, but the lines that
   * scroll off before anyone could see them on the terminal are not printed: once the first line is ended and
   * the cursor sits on a blank bottom row (`printsPlainLinesAtBottom`), each line ended by CR LF fills the next
   * rows with its characters and scrolls away, so those rows are logged (and given to the captures) from the
   * text itself, and only the last `printedRows` rows' lines are printed, filling xterm's screen and scrollback
   * as printing them all would have.
   */
  #parsePlain(text: string): void {
    const firstEnd = text.indexOf("\r\n")
    if (firstEnd < 0) return this.#parse(text)
    const from = firstEnd + 2
    this.#parse(text.slice(0, from))
    if (from === text.length) return
    const rows = this.#terminal.rows
    if (!printsPlainLinesAtBottom(this.#core, rows)) return this.#parse(text.slice(from))
    const cols = this.#terminal.cols
    // the lines ended by CR LF with no other CR or LF in them, from `from` on: where each starts
    const starts: Array<number> = []
    let at = from
    let cr = text.indexOf("\r", at)
    let lf = text.indexOf("\n", at)
    while (lf >= 0 && cr === lf - 1) {
      starts.push(at)
      at = lf + 1
      cr = text.indexOf("\r", at)
      lf = text.indexOf("\n", at)
    }
    starts.push(at)
    // the lines printed are the last ones that fill `printedRows` rows; those before them are logged
    let printed = 0
    let skip = starts.length - 1
    while (skip > 0 && printed < printedRows(rows)) {
      skip--
      printed += Math.max(1, Math.ceil((starts[skip + 1]! - 2 - starts[skip]!) / cols))
    }
    if (skip === 0) return this.#parse(text.slice(from))
    const buffer = this.#normal
    const top = this.#origin + this.#trimmed + buffer.ybase
    // the rows above the cursor are final: the lines below scroll every one of them away
    this.#harvestTo(top + buffer.y)
    let row = this.#harvested
    for (let line = 0; line < skip; line++) {
      const start = starts[line]!
      const end = starts[line + 1]! - 2
      if (end === start) this.#logRow(row++, "", false, 0)
      for (let col = start; col < end; col += cols) {
        const piece = text.slice(col, Math.min(end, col + cols))
        this.#logRow(row++, piece, col > start, piece.length)
      }
    }
    // the printed lines continue from the row after the logged ones
    this.#unprinted += row - this.#harvested
    this.#origin += row - this.#harvested
    this.#harvested = row
    this.#parse(text.slice(starts[skip]!))
  }

  /**
   * How many times xterm threw on a sequence (an xterm bug): each time the rest of that chunk was lost to
   * the screen and the log, and parsing went on with the next chunk.
   */
  get faults(): number {
    return this.#faults
  }

  /** What xterm threw last (see `faults`). */
  get lastFault(): string | undefined {
    return this.#lastFault
  }

  /** The cursor's position in the main screen (where the next output will appear). */
  cursor(): Position {
    this.#awake()
    const buffer = this.#normal
    return { row: this.#origin + this.#trimmed + buffer.ybase + buffer.y, col: buffer.x }
  }

  /** Where the main screen's top row is now: everything above it has scrolled into the log. */
  screenTop(): Position {
    this.#awake()
    return { row: this.#origin + this.#trimmed + this.#normal.ybase, col: 0 }
  }

  /**
   * The modes the program has set. Read from xterm's core: the public `terminal.modes` and `buffer.active`
   * build new objects on every read, and a send reads the modes three times.
   */
  get modes(): Modes {
    this.#awake()
    const modes = this.#core.coreService.decPrivateModes
    const buffers = this.#core._bufferService.buffers
    return {
      bracketedPaste: modes.bracketedPasteMode,
      applicationCursor: modes.applicationCursorKeys,
      alternateScreen: buffers.active !== buffers.normal
    }
  }

  /**
   * Rows of plain output logged (and given to the captures) from the text without xterm printing them: they
   * scrolled away before anyone could see them on the terminal (see `write`).
   */
  get unprintedRows(): number {
    return this.#unprinted
  }

  /** Rows that scrolled away before they could be logged (only after a resize reflow). */
  get lostRows(): number {
    return this.#lost
  }

  /** Start collecting what appears from `start` on, keeping at most `budget` bytes of head and of tail. */
  capture(start: Position, budget: number): Capture {
    this.#awake()
    const capture = new Capture(start, budget, (row, col) => this.#cutAt(row, col))
    this.#captures = [...this.#captures, capture]
    return capture
  }

  /**
   * Look for `target` in the output from `start` on (see `OutputWatch`): `hold` keeps the rows until
   * `begin` says where the output begins; `echo` leaves out the echo of that typed line. `unwatch` ends it.
   */
  watch(
    start: Position,
    target: Matcher.Pattern,
    options: WatchOptions = {}
  ): OutputWatch {
    this.#awake()
    const watch = new OutputWatch(start, target, {
      cutAt: (row, col) => this.#cutAt(row, col),
      live: (from) => this.#liveFrom(from)
    }, options)
    this.#captures = [...this.#captures, watch]
    return watch
  }

  /** Stop a watch. */
  unwatch(watch: OutputWatch): void {
    this.#captures = this.#captures.filter((open) => open !== watch)
    watch.closed = true
  }

  /** A watch is open: it looks at the screen between writes, so nothing is held back (see `write`). */
  #watching(): boolean {
    return this.#captures.some((open) => open instanceof OutputWatch)
  }

  /** End a capture and render what it saw up to `end` (default: the cursor). */
  finish(capture: Capture, end: Position = this.cursor()): Captured {
    this.#awake()
    this.#captures = this.#captures.filter((open) => open !== capture)
    capture.closed = true
    return this.peek(capture, end)
  }

  /** Render what a capture saw up to `end` (default: the cursor) and keep it open (a background task's view). */
  peek(capture: Capture, end: Position = this.cursor()): Captured {
    this.#awake()
    const start = capture.start
    const lines: Array<string> = []
    let current: string | undefined
    const push = (text: string) => {
      if (current !== undefined) lines.push(current)
      current = text
    }
    const append = (text: string) => {
      if (current === undefined) current = text
      else current += text
    }
    const cut = (line: CapturedLine): string => line.row === start.row ? line.text.slice(line.from) : line.text
    const omitted = capture.omitted
    const cutShort = omitted.lines > 0 || omitted.bytes > 0
    for (const line of capture.head) {
      if (line.row < end.row) (line.joined ? append : push)(cut(line))
    }
    if (cutShort) push(omissionLine(omitted.lines, omitted.bytes))
    capture.tail.forEach((line, index) => {
      if (line.row >= end.row) return
      if (line.joined && !(index === 0 && cutShort)) append(cut(line))
      else push(cut(line))
    })
    for (let row = Math.max(start.row, this.#harvested); row <= end.row; row++) {
      const text = this.#rowText(row, row === start.row ? start.col : 0, row === end.row ? end.col : undefined)
      if (current !== undefined && row > start.row && this.#rowWrapped(row)) current += text
      else push(text)
    }
    if (current !== undefined) lines.push(current)
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop()
    return {
      text: lines.join("\n"),
      truncated: cutShort,
      omittedLines: omitted.lines,
      omittedBytes: omitted.bytes
    }
  }

  /** The exact text between two positions of the main screen that are still on it (e.g. a prompt). */
  textBetween(from: Position, to: Position): string {
    this.#awake()
    if (from.row === to.row) return this.#rowText(from.row, from.col, to.col)
    const parts: Array<string> = []
    for (let row = from.row; row <= to.row; row++) {
      const text = this.#rowText(row, row === from.row ? from.col : 0, row === to.row ? to.col : undefined)
      parts.push(row > from.row && !this.#rowWrapped(row) ? `\n${text}` : text)
    }
    return parts.join("")
  }

  /**
   * The whole transcript (the log plus what is on screen) as `terminal_read` pages it: lines `first` to
   * `first + total - 1`, `offset` counted back from the newest.
   */
  transcript(): { readonly first: number; readonly total: number; readonly line: (index: number) => string } {
    this.#awake()
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
    return { first: this.log.firstIndex, total: total - this.log.firstIndex, line }
  }

  /** A page of the whole transcript (the log plus what is on screen), for `terminal_read`. */
  page(request: Paging.PageRequest): ReturnType<typeof Paging.page> {
    return Paging.page(this.transcript(), request)
  }

  /**
   * The screen as a person sees it now (the alternate screen while a full-screen program holds it): its
   * rows without trailing blanks (programs such as vim paint them with spaces), the rows below the cursor
   * that are empty left out, and the cursor.
   */
  screen(): Screen {
    this.#awake()
    const buffer = this.#terminal.buffer.active
    const rows: Array<string> = []
    for (let y = 0; y < this.#terminal.rows; y++) {
      rows.push((buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? "").replace(/ +$/, ""))
    }
    while (rows.length > 0 && rows[rows.length - 1] === "" && rows.length - 1 > buffer.cursorY) rows.pop()
    return {
      rows,
      cursor: { row: buffer.cursorY, col: buffer.cursorX },
      alternate: buffer.type === "alternate"
    }
  }

  /**
   * The terminal as it is now, for another xterm.js to start from: taken between two writes (parsing is
   * synchronous), so the output written after it continues it exactly.
   */
  snapshot(): Snapshot {
    this.#awake()
    this.#serializer ??= this.#load(new SerializeAddon())
    const last = this.#lastBytes
    const pending = last === undefined ? new Uint8Array(0) : last.slice(last.length - incompleteTail(last))
    return { cols: this.#terminal.cols, rows: this.#terminal.rows, data: this.#serializer.serialize(), pending }
  }

  #load<A extends xterm.ITerminalAddon>(addon: A): A {
    this.#terminal.loadAddon(addon)
    return addon
  }

  resize(cols: number, rows: number): void {
    this.#awake()
    this.#harvest()
    this.#terminal.resize(cols, rows)
  }

  /** Its xterm instance disposed, its timer stopped; what it held can still be read (a task's last output). */
  dispose(): void {
    if (!this.#disposed) this.#settle()
    this.#disposed = true
    if (this.#quiet !== undefined) clearTimeout(this.#quiet)
    this.#captures = []
    if (this.#asleep === undefined) this.#release()
  }

  /** `CSI J` / `CSI ? J`: erasing the scrollback (`3`, as `clear` sends it) drops rows, so they are logged first. */
  #eraseInDisplay(params: ReadonlyArray<number | ReadonlyArray<number>>, respectProtect: boolean): boolean {
    if (params[0] === 3 && !this.#replaying) this.#harvest()
    if (params[0] !== 1) return false
    eraseAbove(this.#core, respectProtect)
    return true
  }

  #listenTrim(buffer: CoreBuffer): Disposable {
    return buffer.lines.onTrim((amount) => {
      this.#trimmed += amount
    })
  }

  /** A full reset replaces the screen: what is on it now is final, the next screen starts below it. */
  #beforeReset(): void {
    this.#harvest()
    const screenTop = this.#origin + this.#trimmed + this.#normal.ybase
    let bottom = screenTop + this.#normal.y - 1
    for (let row = screenTop + this.#terminal.rows - 1; row > bottom; row--) {
      if (this.#rowText(row, 0, undefined) !== "") {
        bottom = row
        break
      }
    }
    this.#harvestTo(bottom + 1)
  }

  #afterBufferSwitch(): void {
    const normal = this.#core._bufferService.buffers.normal
    if (normal === this.#normal) return
    this.#trimListener.dispose()
    this.#normal = normal
    this.#trimListener = this.#listenTrim(normal)
    this.#origin = this.#harvested
    this.#trimmed = 0
  }

  #harvest(): void {
    this.#scrolls = 0
    this.#harvestTo(this.#origin + this.#trimmed + this.#normal.ybase)
  }

  #harvestTo(upTo: number): void {
    const firstKept = this.#origin + this.#trimmed
    if (this.#harvested < firstKept) {
      this.#lost += firstKept - this.#harvested
      this.#harvested = firstKept
    }
    const lines = this.#normal.lines
    let index = this.#harvested - firstKept
    let line = lineAt(lines, index)
    while (this.#harvested < upTo) {
      const next = lineAt(lines, index + 1)
      const wrapped = line?.isWrapped ?? false
      const text = line === undefined ? "" : lineText(line, !(next?.isWrapped ?? false), 0, undefined)
      const bytes = line === undefined ? 0 : ContentEnd.lastRow.bytes
      this.#logRow(this.#harvested, text, wrapped, bytes)
      this.#harvested++
      index++
      line = next
    }
  }

  /** A row that scrolled off for good: into the log (a wrapped row continues its line) and to every capture. */
  #logRow(row: number, text: string, wrapped: boolean, bytes: number): void {
    const log = this.#log
    if (wrapped && log.endIndex > log.firstIndex) log.extendLast(text, bytes)
    else log.append(text, bytes)
    for (let i = 0; i < this.#captures.length; i++) this.#captures[i]!.pushRow(row, text, wrapped, bytes)
  }

  #line(row: number): CoreLine | undefined {
    const index = row - this.#origin - this.#trimmed
    return lineAt(this.#normal.lines, index)
  }

  /** Where column `col` of `row` is in the row's text (a capture's or a watch's first row is cut there). */
  #cutAt(row: number, col: number): number {
    this.#settle()
    return this.#rowText(row, 0, col).length
  }

  #rowWrapped(row: number): boolean {
    return this.#line(row)?.isWrapped ?? false
  }

  #rowText(row: number, startCol: number, endCol: number | undefined): string {
    const line = this.#line(row)
    if (line === undefined) return ""
    return lineText(line, endCol === undefined && !this.#rowWrapped(row + 1), startCol, endCol)
  }

  /**
   * The rows from `from` (or the first row not scrolled off, if later) to the cursor's, as one text; while a
   * full-screen program holds the alternate screen, its rows follow.
   */
  #liveFrom(from: Position): { text: string; continues: boolean } {
    this.#awake()
    const first = Math.max(from.row, this.#harvested)
    const cursor = this.cursor()
    let text = ""
    for (let row = first; row <= cursor.row; row++) {
      const piece = this.#rowText(row, row === from.row ? from.col : 0, undefined)
      text += row > first && !this.#rowWrapped(row) ? `\n${piece}` : piece
    }
    if (this.modes.alternateScreen) text += `${text === "" ? "" : "\n"}${this.screen().rows.join("\n")}`
    return { text, continues: first > from.row && this.#rowWrapped(first) }
  }

  #liveLines(): Array<{ text: string; wrapped: boolean }> {
    const buffer = this.#normal
    const top = this.#origin + this.#trimmed + buffer.ybase
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
