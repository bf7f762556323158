/**
 * Pages of lines for `terminal_read`: a window counted back from the newest line, cut to a byte cap on
 * whole lines, code points always intact.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Utf8 from "./Utf8.js"

/**
 * Lines to page over, numbered `first` (default 0) to `first + total - 1`; `line(i)` is asked only for the
 * lines a page may return, so a source backed by a large scrollback costs only the page.
 *
 * @since 0.1.0
 */
export interface Source {
  readonly first?: number | undefined
  readonly total: number
  readonly line: (index: number) => string
}

/**
 * `offset`: lines back from the newest (0, the default, ends the page at the newest line). `count`: lines in
 * the window (default: as many as fit `maxBytes`). `maxBytes`: the cap on the page's text.
 *
 * @since 0.1.0
 */
export interface PageRequest {
  readonly offset?: number | undefined
  readonly count?: number | undefined
  readonly maxBytes: number
}

/**
 * A page: `text` holds the lines `[lineBegin, lineEnd)` (in the source's numbering) joined by `\n`.
 * `truncated` says the byte cap left out lines of the requested window, or cut the page's only line.
 * `totalLines` counts the lines kept; `firstLine` is the number of the oldest one kept — the lines before it
 * were dropped by the retention bound — so the source's numbering ends at `firstLine + totalLines`.
 *
 * @since 0.1.0
 */
export interface PageResult {
  readonly text: string
  readonly totalLines: number
  readonly lineBegin: number
  readonly lineEnd: number
  readonly truncated: boolean
  readonly firstLine: number
}

/**
 * A request the pager refuses: which field, the value given, and why.
 *
 * @since 0.1.0
 */
export class PageError extends Data.TaggedError("PageError")<{
  readonly field: "offset" | "count" | "maxBytes"
  readonly value: number
  readonly reason: string
}> {
  override get message(): string {
    return `invalid ${this.field} ${this.value}: ${this.reason}`
  }
}

const checkInteger = (
  field: PageError["field"],
  value: number,
  min: number
): Either.Either<number, PageError> =>
  !Number.isSafeInteger(value)
    ? Either.left(new PageError({ field, value, reason: "must be an integer" }))
    : value < min
    ? Either.left(
      new PageError({ field, value, reason: min === 0 ? "must not be negative" : `must be at least ${min}` })
    )
    : Either.right(value)

/**
 * Reads the page that `request` asks for from `source`.
 *
 * The window is anchored at the newest end: it ends `offset` lines before the newest line and reaches back
 * `count` lines (or to the oldest line). When the window's lines do not all fit `maxBytes`, the newest lines
 * are kept and the oldest ones dropped, whole; `lineBegin` then tells where the next, older page ends, and
 * `truncated` is set. Only when the newest line of the window alone exceeds `maxBytes` is a line cut: it
 * keeps its last `maxBytes` bytes on a code-point boundary. An `offset` at or past the oldest line gives an
 * empty page; a negative `offset`, a `count` below 1, a `maxBytes` below 1 or a non-integer gives a
 * `PageError`.
 *
 * @since 0.1.0
 */
export const page = (source: Source, request: PageRequest): Either.Either<PageResult, PageError> =>
  Either.gen(function*() {
    const maxBytes = yield* checkInteger("maxBytes", request.maxBytes, 1)
    const offset = yield* checkInteger("offset", request.offset ?? 0, 0)
    const count = request.count === undefined ? undefined : yield* checkInteger("count", request.count, 1)
    const first = source.first ?? 0
    const total = Math.max(0, source.total)
    const windowEnd = offset >= total ? first : first + total - offset
    const windowBegin = count === undefined ? first : Math.max(first, windowEnd - count)
    const taken: Array<string> = []
    let used = 0
    let index = windowEnd - 1
    let overflow = ""
    for (; index >= windowBegin; index--) {
      const line = source.line(index)
      const cost = Utf8.byteLength(line) + (taken.length > 0 ? 1 : 0)
      if (used + cost > maxBytes) {
        overflow = line
        break
      }
      taken.push(line)
      used += cost
    }
    if (taken.length === 0 && index >= windowBegin) {
      const cut = Utf8.cutTail(overflow, maxBytes)
      return cut.length === 0
        ? { text: "", totalLines: total, lineBegin: windowEnd, lineEnd: windowEnd, truncated: true, firstLine: first }
        : { text: cut, totalLines: total, lineBegin: index, lineEnd: windowEnd, truncated: true, firstLine: first }
    }
    return {
      text: taken.reverse().join("\n"),
      totalLines: total,
      lineBegin: index + 1,
      lineEnd: windowEnd,
      truncated: index >= windowBegin,
      firstLine: first
    }
  })
