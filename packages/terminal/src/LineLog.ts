/**
 * The bounded scrollback of logical lines: a ring buffer with a line cap and a byte cap, where every line
 * ever appended keeps its absolute index, so a reader can page by index while old lines are evicted.
 *
 * @since 0.1.0
 */
import * as Utf8 from "./Utf8.js"

/**
 * The caps of a {@link LineLog}. `maxBytes` counts the UTF-8 bytes of the texts plus one per line for its
 * newline.
 *
 * @since 0.1.0
 */
export interface Options {
  readonly maxLines: number
  readonly maxBytes: number
}

const atLeastOne = (n: number): number => n >= 1 ? Math.floor(n) : 1

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

const mergeBelowBytes = 256

/**
 * Logical lines (the caller splits on newlines and joins wrapped rows with `extendLast`) kept within
 * `maxLines` lines and `maxBytes` bytes by evicting the oldest. The newest line is never evicted: when it
 * alone outgrows the byte cap it keeps its last `maxBytes - 1` bytes (its newline takes the last byte), cut
 * on a code-point boundary. Caps below 1 (or `NaN`) are raised to 1; fractions are rounded down.
 *
 * Sealed lines live in a ring of strings; the newest line is a queue of pieces, so extending it and cutting
 * its head are both O(length of the added text) amortized, however long the line grows.
 *
 * @since 0.1.0
 */
export class LineLog {
  /** @since 0.1.0 */
  readonly maxLines: number
  /** @since 0.1.0 */
  readonly maxBytes: number

  #ring: Array<string> = []
  #ringBytes: Array<number> = []
  #ringHead = 0
  #sealed = 0
  #pieces: Array<string> = []
  #pieceBytes: Array<number> = []
  #pieceHead = 0
  #pieceEnd = 0
  #openBytes = 0
  #first = 0
  #end = 0
  #bytes = 0

  constructor(options: Options) {
    this.maxLines = atLeastOne(options.maxLines)
    this.maxBytes = atLeastOne(options.maxBytes)
  }

  /**
   * Absolute index of the oldest retained line (equal to `endIndex` when empty).
   *
   * @since 0.1.0
   */
  get firstIndex(): number {
    return this.#first
  }

  /**
   * One past the absolute index of the newest line: the number of lines ever appended.
   *
   * @since 0.1.0
   */
  get endIndex(): number {
    return this.#end
  }

  /**
   * Number of retained lines.
   *
   * @since 0.1.0
   */
  get lines(): number {
    return this.#end - this.#first
  }

  /**
   * Retained bytes: UTF-8 bytes of the texts plus one per line.
   *
   * @since 0.1.0
   */
  get bytes(): number {
    return this.#bytes
  }

  /**
   * Number of lines evicted so far (always `firstIndex`).
   *
   * @since 0.1.0
   */
  get evicted(): number {
    return this.#first
  }

  /**
   * Appends `text` as a new logical line, evicting the oldest lines as needed. `bytes`, when the caller
   * already measured it, is `text`'s UTF-8 length.
   *
   * @since 0.1.0
   */
  append(text: string, bytes?: number): void {
    if (this.#end > this.#first) {
      if (this.#sealed + 2 > this.maxLines) {
        if (this.#sealed > 0) this.#evictOldest()
        else this.#dropOpen()
      }
      if (this.#end > this.#first) this.#seal()
    }
    this.#end++
    this.#bytes += 1
    this.#extendOpen(text, bytes)
    this.#enforceCaps()
  }

  /**
   * Appends `text` to the newest line (a wrapped row continuing it); on an empty log it appends a new line.
   *
   * @since 0.1.0
   */
  extendLast(text: string, bytes?: number): void {
    if (this.#end === this.#first) {
      this.append(text, bytes)
    } else {
      this.#extendOpen(text, bytes)
      this.#enforceCaps()
    }
  }

  /**
   * The line at absolute index `index`, or `undefined` when it was evicted or not yet appended.
   *
   * @since 0.1.0
   */
  get(index: number): string | undefined {
    if (!Number.isInteger(index) || index < this.#first || index >= this.#end) return undefined
    return this.#lineAt(index)
  }

  /**
   * The lines with absolute indices in `[from, to)`, clamped to the retained range.
   *
   * @since 0.1.0
   */
  slice(from: number, to: number): Array<string> {
    const begin = Math.max(this.#first, Math.ceil(from))
    const end = Math.min(this.#end, Math.ceil(to))
    const out: Array<string> = []
    for (let i = begin; i < end; i++) {
      out.push(this.#lineAt(i))
    }
    return out
  }

  #lineAt(index: number): string {
    if (index === this.#end - 1) return this.#openText()
    return this.#ring[(this.#ringHead + index - this.#first) % this.#ring.length]
  }

  #openText(): string {
    const count = this.#pieceEnd - this.#pieceHead
    if (count === 0) return ""
    if (count === 1) return this.#pieces[this.#pieceHead]
    return this.#pieces.slice(this.#pieceHead, this.#pieceEnd).join("")
  }

  #resetOpen(): void {
    if (this.#pieceEnd > 64) {
      this.#pieces = []
      this.#pieceBytes = []
    } else {
      for (let i = this.#pieceHead; i < this.#pieceEnd; i++) this.#pieces[i] = ""
    }
    this.#pieceHead = 0
    this.#pieceEnd = 0
    this.#openBytes = 0
  }

  #seal(): void {
    if (this.#sealed === this.#ring.length) this.#growRing()
    const slot = (this.#ringHead + this.#sealed) % this.#ring.length
    this.#ring[slot] = this.#openText()
    this.#ringBytes[slot] = this.#openBytes
    this.#sealed++
    this.#resetOpen()
  }

  #growRing(): void {
    const capacity = this.#ring.length
    const grown = Math.min(Math.max(16, capacity * 2), this.maxLines - 1)
    const ring = new Array<string>(grown).fill("")
    const ringBytes = new Array<number>(grown).fill(0)
    for (let i = 0; i < this.#sealed; i++) {
      ring[i] = this.#ring[(this.#ringHead + i) % capacity]
      ringBytes[i] = this.#ringBytes[(this.#ringHead + i) % capacity]
    }
    this.#ring = ring
    this.#ringBytes = ringBytes
    this.#ringHead = 0
  }

  #evictOldest(): void {
    this.#bytes -= this.#ringBytes[this.#ringHead] + 1
    this.#ring[this.#ringHead] = ""
    this.#ringHead = (this.#ringHead + 1) % this.#ring.length
    this.#sealed--
    this.#first++
  }

  #dropOpen(): void {
    this.#bytes -= this.#openBytes + 1
    this.#first++
    this.#resetOpen()
  }

  #extendOpen(text: string, measured: number | undefined): void {
    if (text.length === 0) return
    let added = text
    let addedBytes = measured
    let last = this.#pieceEnd - 1
    if (last >= this.#pieceHead) {
      const piece = this.#pieces[last]
      if (isHighSurrogate(piece.charCodeAt(piece.length - 1)) && isLowSurrogate(added.charCodeAt(0))) {
        // a surrogate pair split across two calls is re-joined so that no piece ends mid-code-point
        added = piece.slice(-1) + added
        addedBytes = undefined
        this.#removeOpenBytes(3)
        this.#pieceBytes[last] -= 3
        if (piece.length === 1) {
          this.#pieces[last] = ""
          this.#pieceEnd--
          last--
        } else {
          this.#pieces[last] = piece.slice(0, -1)
        }
      }
    }
    const bytes = addedBytes ?? Utf8.byteLength(added)
    if (last >= this.#pieceHead && this.#pieceBytes[last] + bytes <= mergeBelowBytes) {
      this.#pieces[last] += added
      this.#pieceBytes[last] += bytes
    } else {
      this.#pieces[this.#pieceEnd] = added
      this.#pieceBytes[this.#pieceEnd] = bytes
      this.#pieceEnd++
    }
    this.#openBytes += bytes
    this.#bytes += bytes
  }

  #removeOpenBytes(n: number): void {
    this.#openBytes -= n
    this.#bytes -= n
  }

  #enforceCaps(): void {
    const openCap = this.maxBytes - 1
    if (this.#openBytes > openCap) this.#cutOpenHead(this.#openBytes - openCap)
    while (this.#bytes > this.maxBytes && this.#sealed > 0) this.#evictOldest()
  }

  #cutOpenHead(excess: number): void {
    let rest = excess
    while (rest > 0 && this.#pieceHead < this.#pieceEnd) {
      const head = this.#pieceHead
      const pieceBytes = this.#pieceBytes[head]
      if (pieceBytes <= rest) {
        rest -= pieceBytes
        this.#removeOpenBytes(pieceBytes)
        this.#pieces[head] = ""
        this.#pieceHead++
      } else {
        const kept = Utf8.cutTail(this.#pieces[head], pieceBytes - rest)
        const keptBytes = Utf8.byteLength(kept)
        this.#removeOpenBytes(pieceBytes - keptBytes)
        this.#pieces[head] = kept
        this.#pieceBytes[head] = keptBytes
        rest = 0
      }
    }
    if (this.#pieceHead > 32 && this.#pieceHead * 2 > this.#pieceEnd) {
      this.#pieces = this.#pieces.slice(this.#pieceHead, this.#pieceEnd)
      this.#pieceBytes = this.#pieceBytes.slice(this.#pieceHead, this.#pieceEnd)
      this.#pieceEnd -= this.#pieceHead
      this.#pieceHead = 0
    }
  }
}

/**
 * Creates an empty {@link LineLog} with the given caps.
 *
 * @since 0.1.0
 */
export const make = (options: Options): LineLog => new LineLog(options)
