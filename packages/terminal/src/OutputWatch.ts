/**
 * A `Matcher` over a terminal's output from a start position: the rows that scroll off the screen are
 * appended once as final text, the rows still on the screen are the live part of each check. It can hold
 * its rows until told where the output really begins (`begin`: a shell's command-start marker, past the
 * echo of the command line), and it can leave out the echo of a typed line (`echo`).
 *
 * @since 0.3.0
 */
import * as Matcher from "./Matcher.js"

interface Position {
  readonly row: number
  readonly col: number
}

/** What the watch needs of its emulator (`Emulator.watch` wires it). */
export interface Screen {
  /** The text of `row` from `col` on (on the start row), as the emulator renders a captured row. */
  readonly cutAt: (row: number, col: number) => number
  /** The rows from `from` (at least the first row not scrolled off) to the cursor's, and whether the first continues a scrolled one. */
  readonly live: (from: Position) => { readonly text: string; readonly continues: boolean }
}

/**
 * Options of a watch: `hold` its rows until `begin`; leave out the `echo` of this typed line; `seed`: final
 * text from before `start` (what scrolled off since an earlier look), looked at first.
 *
 * @since 0.3.0
 */
export interface WatchOptions {
  /** Hold the rows until this tells where the output begins (asked on every row while holding). */
  readonly hold?: (() => Position | undefined) | undefined
  readonly echo?: string | undefined
  readonly seed?: string | undefined
}

/** Rows held before `begin` (the echo of a command line): far more than a command line's rows. */
const MAX_HELD_ROWS = 4096

/**
 * The echo of a typed line, decided once that line is complete: the line is the typed text, or blank.
 * `undefined` while it is not complete and could still be the echo.
 */
const isEcho = (line: string, typed: string): boolean => line.trim() === "" || line === typed

/**
 * A pattern looked for in the output from `start`. See the module's description.
 *
 * @since 0.3.0
 */
export class OutputWatch {
  readonly #matcher: Matcher.Matcher
  readonly #screen: Screen
  #start: Position
  /** Rows waiting for `begin`; `undefined` once begun. */
  #held: Array<{ row: number; text: string; wrapped: boolean }> | undefined
  readonly #beginsAt: (() => Position | undefined) | undefined
  /** Something final was appended (the next row starts a new line unless it continues this one). */
  #any = false
  /** The typed line whose echo is left out, until the first line is decided. */
  #echo: string | undefined
  /** The first line's final text while its echo is undecided. */
  #firstLine = ""
  /** @internal */
  closed = false

  /** @internal */
  constructor(
    start: Position,
    target: Matcher.Pattern,
    screen: Screen,
    options: WatchOptions = {}
  ) {
    this.#start = start
    this.#matcher = new Matcher.Matcher(target)
    if (options.seed !== undefined && options.seed !== "") {
      this.#matcher.append(options.seed)
      this.#any = true
    }
    this.#screen = screen
    this.#held = options.hold !== undefined ? [] : undefined
    this.#beginsAt = options.hold
    this.#echo = options.echo
  }

  /** Where the watched output begins. */
  get start(): Position {
    return this.#start
  }

  /** Whether the watch still waits for `begin` (asking `hold` once more). */
  get holding(): boolean {
    this.#beginIfKnown()
    return this.#held !== undefined
  }

  #beginIfKnown(): void {
    if (this.#held === undefined) return
    const at = this.#beginsAt?.()
    if (at !== undefined) this.begin(at)
  }

  /** The output begins at `position` (rows before it, held so far, are dropped). */
  begin(position: Position): void {
    const held = this.#held
    if (held === undefined) return
    this.#held = undefined
    this.#start = position.row >= this.#start.row ? position : this.#start
    for (const row of held) this.#push(row.row, row.text, row.wrapped)
  }

  /** @internal A row scrolled off the screen for good. */
  pushRow(row: number, text: string, wrapped: boolean, _bytes: number): void {
    if (row < this.#start.row) return
    this.#beginIfKnown()
    if (this.#held !== undefined) {
      this.#held.push({ row, text, wrapped })
      if (this.#held.length > MAX_HELD_ROWS) this.#held.shift()
      return
    }
    this.#push(row, text, wrapped)
  }

  /** The first match in the output so far; `undefined` while none (or while holding). */
  check(): Matcher.Match | undefined {
    if (this.holding) return undefined
    if (this.#matcher.found !== undefined) return this.#matcher.found
    const live = this.#screen.live(this.#start)
    const joined = live.text === "" ? "" : this.#any && !live.continues ? `\n${live.text}` : live.text
    if (this.#echo === undefined) return this.#matcher.check(joined)
    // the first line is not decided yet: it is in `#firstLine` and the live rows
    const candidate = this.#firstLine + (this.#firstLine !== "" && live.text !== "" && !live.continues ? "\n" : "") +
      live.text
    const newline = candidate.indexOf("\n")
    if (newline < 0) {
      return candidate.trim() === "" || this.#echo.startsWith(candidate) ? undefined : this.#matcher.check(candidate)
    }
    const first = candidate.slice(0, newline)
    return this.#matcher.check(isEcho(first, this.#echo) ? candidate.slice(newline + 1) : candidate)
  }

  #push(row: number, raw: string, wrapped: boolean): void {
    const text = row === this.#start.row ? raw.slice(this.#screen.cutAt(row, this.#start.col)) : raw
    const piece = this.#any && !(wrapped && row > this.#start.row) ? `\n${text}` : text
    this.#any = true
    if (this.#echo === undefined) return this.#matcher.append(piece)
    const line = this.#firstLine + piece
    const newline = line.indexOf("\n")
    if (newline < 0) {
      this.#firstLine = line
      return
    }
    const first = line.slice(0, newline)
    const echo = this.#echo
    this.#echo = undefined
    this.#firstLine = ""
    this.#matcher.append(isEcho(first, echo) ? line.slice(newline + 1) : line)
  }
}
