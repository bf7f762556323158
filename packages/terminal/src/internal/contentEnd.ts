/**
 * Where a row's content ends, without scanning it from the right edge.
 *
 * A row that scrolls off is logged without its trailing blanks. xterm finds them the only way it can:
 * `getTrimmedLength` walks every cell from the right edge until one has content: 153 empty cells for a
 * 7-character line at 160 columns, a fifth of the emulator's time on short-line output (`seq`).
 *
 * Here every xterm `BufferLine` keeps `__end`, an upper bound of where its content ends, raised by each
 * method that can put content into a cell (`set`, `setCell`, `setCellFromCodepoint`,
 * `addCodepointToCell`, `copyCellsFrom`) and carried by the two that copy a whole row (`copyFrom`,
 * `clone`). Those are the only writers of a row's cells in `@xterm/headless` 6.0.0 (pinned: no other code
 * writes `_data`). The parser reaches `set` never and `addCodepointToCell` only on a cell that has content
 * already; they are wrapped all the same, so the bound holds for any caller. A row's trimmed length is then found by scanning down from that bound, so it is
 * exactly xterm's (`test/ContentEnd.test.ts` checks every row against `getTrimmedLength` through random
 * streams of every editing sequence).
 *
 * The bound only ever errs high: cells cleared later still lie below it and are skipped by the scan. A row
 * made before the methods were wrapped has no bound of its own and is scanned from its edge.
 *
 * The wrap is on the class, once per process: every terminal of this xterm module gets the bound; they
 * behave exactly as before.
 */
import type { Terminal } from "@xterm/headless"
import * as Utf8 from "../Utf8.js"

/** The cells of an xterm row, as `BufferLine` keeps them: three words per cell, the first the content. */
export interface CellRow {
  readonly length: number
  readonly _data: Uint32Array
  /** Upper bound of the content's end (own property once set; `Infinity` on the prototype: unknown). */
  __end: number
}

/** A cell's content bits (code point or combined-string flag): zero for an empty cell. */
const HAS_CONTENT = 0x3fffff
/** A cell's content ends at most two columns after its start (a wide character). */
const WIDEST = 2

interface CellLike {
  readonly content: number
}

interface LineMethods {
  set(this: CellRow, index: number, value: unknown): void
  setCell(this: CellRow, index: number, cell: CellLike): void
  setCellFromCodepoint(this: CellRow, index: number, codePoint: number, width: number, attributes: unknown): void
  addCodepointToCell(this: CellRow, index: number, codePoint: number, width: number): void
  copyCellsFrom(
    this: CellRow,
    source: CellRow,
    sourceCol: number,
    destCol: number,
    length: number,
    applyInReverse: boolean
  ): void
  copyFrom(this: CellRow, line: CellRow): void
  clone(this: CellRow): CellRow
  __end: number
  __endInstalled?: boolean
}

const raise = (row: CellRow, end: number): void => {
  if (end > row.__end) row.__end = end
}

/**
 * Wrap the cell writers of xterm's `BufferLine` class (the class of `terminal`'s rows) to keep `__end`.
 * Idempotent.
 */
export const install = (terminal: Terminal): void => {
  const first = terminal.buffer.normal.getLine(0) as unknown as { readonly _line: object } | undefined
  if (first === undefined) return
  const proto = Object.getPrototypeOf(first._line) as LineMethods
  if (proto.__endInstalled === true) return
  const { addCodepointToCell, clone, copyCellsFrom, copyFrom, set, setCell, setCellFromCodepoint } = proto
  proto.__endInstalled = true
  proto.__end = Number.POSITIVE_INFINITY
  proto.setCell = function(index, cell) {
    setCell.call(this, index, cell)
    // the constructor fills a new row through setCell before it sets `length`: a row born known
    if (this.length === undefined && this.__end === Number.POSITIVE_INFINITY) this.__end = 0
    if ((cell.content & HAS_CONTENT) !== 0) raise(this, index + WIDEST)
  }
  proto.setCellFromCodepoint = function(index, codePoint, width, attributes) {
    setCellFromCodepoint.call(this, index, codePoint, width, attributes)
    if (codePoint !== 0) raise(this, index + WIDEST)
  }
  proto.set = function(index, value) {
    set.call(this, index, value)
    if ((this._data[3 * index]! & HAS_CONTENT) !== 0) raise(this, index + WIDEST)
  }
  proto.addCodepointToCell = function(index, codePoint, width) {
    addCodepointToCell.call(this, index, codePoint, width)
    raise(this, index + WIDEST)
  }
  proto.copyCellsFrom = function(source, sourceCol, destCol, length, applyInReverse) {
    copyCellsFrom.call(this, source, sourceCol, destCol, length, applyInReverse)
    if (length > 0) raise(this, destCol + length + WIDEST)
  }
  proto.copyFrom = function(line) {
    copyFrom.call(this, line)
    this.__end = line.__end
  }
  proto.clone = function() {
    const copy = clone.call(this)
    copy.__end = this.__end
    return copy
  }
}

/** The row's length without trailing empty cells: xterm's `getTrimmedLength`, scanned from the bound. */
export const trimmedLength = (row: CellRow): number => {
  const data = row._data
  for (let col = Math.min(row.length, row.__end) - 1; col >= 0; col--) {
    const content = data[3 * col]!
    if ((content & HAS_CONTENT) !== 0) return col + (content >> 22)
  }
  return 0
}

/** The content bits of a cell that hold a combined string (`_combined`) rather than a code point. */
const COMBINED = 0x200000
const CODE_POINT = 0x1fffff

/** Code units of a row's text, reused by every call (a row is at most a few hundred cells). */
let units = new Uint16Array(512)

/** A byte buffer with node's `latin1Slice`: one byte per character up to U+00FF, decoded in one native call. */
export type Latin1 = Uint8Array & { latin1Slice(start: number, end: number): string }

/** Whether `bytes` is node's `Buffer` (it decodes one byte a character with `latin1Slice`). */
export const isLatin1 = (bytes: Uint8Array | undefined): bytes is Latin1 =>
  typeof (bytes as Partial<Latin1> | undefined)?.latin1Slice === "function"

const latin1Of = (size: number): Latin1 | undefined => {
  const buffer = (globalThis as { Buffer?: { allocUnsafe(size: number): Uint8Array } }).Buffer?.allocUnsafe(size)
  return isLatin1(buffer) ? buffer : undefined
}

/**
 * The bytes of a row whose characters are all up to U+00FF (nearly every row a flood prints), reused by every
 * call; absent where there is no `Buffer` (a browser), where every row takes the code units.
 */
let latin1 = latin1Of(512)

/** Up to this many characters a row's text is made by `String.fromCharCode` with its arguments spelled out. */
const SHORT = 8

const fromCharCode = String.fromCharCode

/**
 * The text of a short row (`seq`'s numbers): a native call (`latin1Slice`) costs more than the characters
 * (~180 ns for 7 of them, against ~70 ns here and ~140 ns for one string concatenated per character).
 */
const shortString = (b: Uint8Array, n: number): string => {
  switch (n) {
    case 0:
      return ""
    case 1:
      return fromCharCode(b[0]!)
    case 2:
      return fromCharCode(b[0]!, b[1]!)
    case 3:
      return fromCharCode(b[0]!, b[1]!, b[2]!)
    case 4:
      return fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!)
    case 5:
      return fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!)
    case 6:
      return fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!)
    case 7:
      return fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!)
    default:
      return fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!)
  }
}

/**
 * What the last `rowText` call measured: the UTF-8 length of the text it returned, counted while the cells
 * were read (a row that scrolls off is logged with its byte count: no second pass over its text).
 */
export const lastRow: { bytes: number } = { bytes: 0 }

/**
 * The text of a row from `start` to `end`: exactly xterm's `translateToString(false, start, end)` (an empty
 * cell as a space, a wide character once, its second cell skipped), built from the cells at once instead of
 * one string concatenated per cell (~15 % of the emulator's time on 100-byte lines, and on `seq`'s short rows
 * a garbage string per cell). A row of characters up to U+00FF is made of one byte each, decoded by one native
 * call (`latin1Slice`: ~40 % less per 100-byte row than `String.fromCharCode` over its code units, which a row
 * takes from its first wider character on); a short one by `shortString`. Rows with a combined cell (a character with its combining marks)
 * are left to xterm's own. Its UTF-8 length is left in `lastRow.bytes`.
 */
export const rowText = (
  row: CellRow & { translateToString(trimRight?: boolean, startCol?: number, endCol?: number): string },
  start: number,
  end: number
): string => {
  const data = row._data
  let n = 0
  let col = start
  if (latin1 !== undefined) {
    if (latin1.length < end - start) latin1 = latin1Of(2 * (end - start))!
    const bytes = latin1
    let high = 0
    while (col < end) {
      const content = data[3 * col]!
      if ((content & COMBINED) !== 0) return combined(row, start, end)
      const code = content & CODE_POINT
      if (code > 0xff) break
      bytes[n++] = code === 0 ? 0x20 : code
      high += code >>> 7
      col += content >> 22 || 1
    }
    if (col >= end) {
      lastRow.bytes = n + high
      return n <= SHORT ? shortString(bytes, n) : bytes.latin1Slice(0, n)
    }
  }
  if (units.length < 2 * (end - start)) units = new Uint16Array(2 * (end - start))
  // the characters before the first wider one, as code units
  for (let i = 0; i < n; i++) units[i] = latin1![i]!
  while (col < end) {
    const content = data[3 * col]!
    if ((content & COMBINED) !== 0) return combined(row, start, end)
    const code = content & CODE_POINT
    if (code === 0) units[n++] = 0x20
    else if (code > 0xffff) {
      units[n++] = 0xd800 + ((code - 0x10000) >> 10)
      units[n++] = 0xdc00 + ((code - 0x10000) & 0x3ff)
    } else units[n++] = code
    col += content >> 22 || 1
  }
  const text = n === 0 ? "" : String.fromCharCode.apply(null, units.subarray(0, n) as unknown as Array<number>)
  lastRow.bytes = Utf8.byteLength(text)
  return text
}

/** A row with a combined cell: xterm's own text, measured. */
const combined = (
  row: { translateToString(trimRight?: boolean, startCol?: number, endCol?: number): string },
  start: number,
  end: number
): string => {
  const text = row.translateToString(false, start, end)
  lastRow.bytes = Utf8.byteLength(text)
  return text
}
