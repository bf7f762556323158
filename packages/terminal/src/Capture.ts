/**
 * The output of one send while it happens: the logical lines that scroll off the screen after a start
 * position, kept as a bounded head and tail (a failing build's last lines are what matter). The emulator
 * feeds it and renders it (`Emulator.finish`).
 *
 * @since 0.1.0
 */
import { LineQueue } from "./internal/queue.js"
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

/**
 * The line that stands for the middle of an output too large to return whole (`Utf8.omissionMarker`).
 *
 * @since 0.1.0
 */
export const omissionLine = (lines: number, bytes: number): string => Utf8.omissionMarker(lines, bytes)

/** The omission line, with or without a note after its counts (where to read the middle). */
export const omissionPattern = /^… \[omitted (?:(\d+) lines?, )?(\d+) bytes[^\]\n]*\] …$/m

/**
 * Fit a send's output into `maxBytes`: its head and tail around one omission line. When the capture
 * already left out its middle (its omission line is in `text`), that gap and whatever more must go are
 * counted together in a single marker.
 *
 * @since 0.1.0
 */
export const fit = (text: string, maxBytes: number): Utf8.HeadTail => {
  if (Utf8.byteLength(text) <= maxBytes) return { text, truncated: false, omittedLines: 0, omittedBytes: 0 }
  const match = omissionPattern.exec(text)
  if (match === null) return Utf8.headTail(text, maxBytes)
  const head = text.slice(0, Math.max(0, match.index - 1))
  const tail = text.slice(Math.min(text.length, match.index + match[0].length + 1))
  return Utf8.headGapTail(head, { lines: Number(match[1] ?? 0), bytes: Number(match[2]) }, tail, maxBytes)
}

/**
 * One captured logical line: its first row, its text and the text's UTF-8 length, and (on the start
 * row) where the start column falls in the text.
 *
 * @since 0.1.0
 */
export interface CapturedLine {
  readonly row: number
  readonly text: string
  readonly bytes: number
  readonly from: number
  /** The rest of the previous line (a line too long for the head continues in the tail). */
  readonly joined: boolean
}

const line = (row: number, text: string, bytes: number, from = 0, joined = false): CapturedLine => ({
  row,
  text,
  bytes,
  from,
  joined
})

/**
 * Collects the logical lines that scroll off the screen after `start`, keeping a bounded head and tail:
 * the head up to `budget` bytes, then the newest lines up to `budget` bytes, the ones between counted.
 * Appends cost O(row); a single line longer than the budget keeps its start in the head and its end in
 * the tail.
 *
 * @since 0.1.0
 */
export class Capture {
  #start: Position
  readonly #budget: number
  readonly #cutAt: (row: number, col: number) => number
  readonly #head: Array<CapturedLine> = []
  #headBytes = 0
  #headFull = false
  readonly #tail = new LineQueue()
  /** The oldest tail line continues the newest head line (only it can: the head fills once). */
  #tailJoined = false
  /** Where the start column falls in the oldest tail line (when that line is the start row's). */
  #tailFrom = 0
  #tailBytes = 0
  #omittedLines = 0
  #omittedBytes = 0
  /** @internal */
  closed = false

  /** @internal `cutAt(row, col)`: where a column falls in a row's text (the emulator knows). */
  constructor(start: Position, budget: number, cutAt: (row: number, col: number) => number) {
    this.#start = start
    this.#budget = Math.max(1, budget)
    this.#cutAt = cutAt
  }

  /**
   * Where the capture begins.
   *
   * @since 0.1.0
   */
  get start(): Position {
    return this.#start
  }

  /**
   * Forget what was captured before `position` (e.g. the echo of a command line before its start marker).
   *
   * @since 0.1.0
   */
  rebase(position: Position): void {
    if (position.row < this.#start.row) return
    this.#start = position
    const kept = [...this.#head, ...this.tail].filter((captured) => captured.row >= position.row)
    this.#head.length = 0
    this.#tail.clear()
    this.#tailJoined = false
    this.#tailFrom = 0
    this.#headBytes = 0
    this.#tailBytes = 0
    this.#headFull = false
    for (const captured of kept) {
      if (captured.joined) this.#extend(captured.row, captured.text, captured.bytes)
      else {
        const from = captured.row === position.row ? this.#cutAt(captured.row, position.col) : 0
        this.#pushLine(captured.row, captured.text, captured.bytes, from)
      }
    }
  }

  /** @internal A row scrolled off the screen for good; `bytes` is the UTF-8 length of `text`. */
  pushRow(row: number, text: string, wrapped: boolean, bytes: number): void {
    if (row < this.#start.row) return
    if (wrapped && (this.#tail.size > 0 || this.#head.length > 0)) this.#extend(row, text, bytes)
    else this.#pushLine(row, text, bytes, row === this.#start.row ? this.#cutAt(row, this.#start.col) : 0)
  }

  /** @internal */
  get head(): ReadonlyArray<CapturedLine> {
    return this.#head
  }

  /** @internal */
  get tail(): ReadonlyArray<CapturedLine> {
    const lines: Array<CapturedLine> = []
    for (let i = 0; i < this.#tail.size; i++) {
      lines.push(
        line(
          this.#tail.row(i),
          this.#tail.text(i),
          this.#tail.bytes(i),
          i === 0 ? this.#tailFrom : 0,
          i === 0 && this.#tailJoined
        )
      )
    }
    return lines
  }

  /** @internal */
  get omitted(): { readonly lines: number; readonly bytes: number } {
    return { lines: this.#omittedLines, bytes: this.#omittedBytes }
  }

  #pushLine(row: number, text: string, bytes: number, from: number): void {
    if (!this.#headFull && this.#headBytes + bytes + 1 <= this.#budget) {
      this.#head.push(line(row, text, bytes, from))
      this.#headBytes += bytes + 1
      return
    }
    this.#headFull = true
    if (this.#tail.size === 0) this.#tailFrom = from
    this.#tail.push(row, text, bytes)
    this.#tailBytes += bytes + 1
    this.#trimTail()
  }

  /** A wrapped row continues the newest line. */
  #extend(row: number, text: string, bytes: number): void {
    const size = this.#tail.size
    if (size > 0) {
      this.#tail.set(size - 1, this.#tail.text(size - 1) + text, this.#tail.bytes(size - 1) + bytes)
      this.#tailBytes += bytes
      this.#trimTail()
      return
    }
    const index = this.#head.length - 1
    const previous = this.#head[index]!
    if (!this.#headFull && this.#headBytes + bytes <= this.#budget) {
      this.#head[index] = { ...previous, text: previous.text + text, bytes: previous.bytes + bytes }
      this.#headBytes += bytes
      return
    }
    this.#headFull = true
    const fit = Utf8.cutHead(text, this.#budget - this.#headBytes)
    const fitBytes = Utf8.byteLength(fit)
    this.#head[index] = { ...previous, text: previous.text + fit, bytes: previous.bytes + fitBytes }
    this.#headBytes += fitBytes
    this.#tail.push(row, text.slice(fit.length), bytes - fitBytes)
    this.#tailJoined = true
    this.#tailFrom = 0
    this.#tailBytes += bytes - fitBytes + 1
    this.#trimTail()
  }

  #trimTail(): void {
    while (this.#tailBytes > this.#budget && this.#tail.size > 1) {
      // only the oldest tail line can continue the head; the line after it never continues it
      const dropped = this.#tail.bytes(0)
      this.#tail.shift()
      this.#tailBytes -= dropped + 1
      this.#omittedLines++
      this.#omittedBytes += dropped + 1
      this.#tailJoined = false
      this.#tailFrom = 0
    }
    // one line longer than the budget (a huge wrapped line): keep its end, amortized
    if (this.#tail.size === 1 && this.#tailBytes > 2 * this.#budget) {
      const text = this.#tail.text(0)
      const kept = Utf8.cutTail(text, this.#budget - 1)
      const keptBytes = Utf8.byteLength(kept)
      this.#omittedBytes += this.#tail.bytes(0) - keptBytes
      this.#tail.set(0, kept, keptBytes)
      this.#tailBytes = keptBytes + 1
      this.#tailJoined = false
      this.#tailFrom = 0
    }
  }
}
