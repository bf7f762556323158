/**
 * The output of a one-shot run on pipes (child mode): decoded text as the program wrote it, kept bounded
 * in three views — the whole run (a head and a tail with the middle counted), what is new since the
 * previous look, and pages of lines. A bare `\r` returns to the start of the line and what follows
 * overwrites it, as on a terminal (a progress bar ends as its final state); `\r\n` is a newline, also when
 * split across writes. Nothing else is interpreted.
 */
import { LineLog, Matcher, Paging, Utf8 } from "@agent-terminal/terminal"
import type * as Either from "effect/Either"

/** What a view returns: the text within the budget, and whether something was left out of it. */
export interface Bounded {
  readonly text: string
  readonly truncated: boolean
}

/** A point in the sealed stream (always its end when taken). */
interface Mark {
  readonly chars: number
  readonly bytes: number
  readonly breaks: number
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

const countBreaks = (s: string): number => {
  let count = 0
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) count++
  return count
}

const marker = (lines: number, bytes: number): string =>
  lines === 0
    ? `… [omitted ${bytes} bytes] …`
    : `… [omitted ${lines} ${lines === 1 ? "line" : "lines"}, ${bytes} bytes] …`

/** Move a head cut back to the end of a line when one is near. */
const headOnLine = (head: string): string => {
  const lastBreak = head.lastIndexOf("\n")
  return lastBreak >= 0 && head.length - lastBreak - 1 <= Math.max(64, head.length / 4)
    ? head.slice(0, lastBreak + 1)
    : head
}

/** Move a tail cut forward to the start of a line when one is near. */
const tailOnLine = (tail: string, whole: string): string => {
  if (tail.length === whole.length || whole.charCodeAt(whole.length - tail.length - 1) === 0x0a) return tail
  const firstBreak = tail.indexOf("\n")
  return firstBreak >= 0 && firstBreak < tail.length - 1 && firstBreak + 1 <= Math.max(64, tail.length / 4)
    ? tail.slice(firstBreak + 1)
    : tail
}

/**
 * `before`, a gap of `gapBytes` bytes holding `gapBreaks` line breaks, then `after`: fit into `budget`
 * bytes, keeping a head of `before` and a tail of `after` around one marker that counts everything left out.
 */
export const composeAroundGap = (
  before: string,
  after: string,
  gapBytes: number,
  gapBreaks: number,
  budget: number
): Bounded => {
  if (gapBytes <= 0) {
    const cut = Utf8.headTail(before + after, budget)
    return { text: cut.text, truncated: cut.truncated }
  }
  const beforeBytes = Utf8.byteLength(before)
  const afterBytes = Utf8.byteLength(after)
  const beforeBreaks = countBreaks(before)
  const afterBreaks = countBreaks(after)
  const reserve =
    Utf8.byteLength(marker(beforeBreaks + afterBreaks + gapBreaks + 2, beforeBytes + afterBytes + gapBytes)) +
    2
  const room = Math.max(0, budget - reserve)
  const head = beforeBytes <= room / 3 ? before : headOnLine(Utf8.cutHead(before, Math.floor(room / 3)))
  const headBytes = Utf8.byteLength(head)
  const tail = afterBytes <= room - headBytes ? after : tailOnLine(Utf8.cutTail(after, room - headBytes), after)
  const tailBytes = Utf8.byteLength(tail)
  const lines = gapBreaks + (beforeBreaks - countBreaks(head)) + (afterBreaks - countBreaks(tail))
  const bytes = gapBytes + (beforeBytes - headBytes) + (afterBytes - tailBytes)
  const text = `${head}${head === "" || head.endsWith("\n") ? "" : "\n"}${marker(lines, bytes)}${
    tail === "" ? "" : "\n"
  }${tail}`
  return { text: Utf8.byteLength(text) <= budget ? text : Utf8.cutTail(text, budget), truncated: true }
}

/**
 * The text of a run on pipes. `budget` bounds every view (and the head and tail kept of the whole run);
 * `maxLines`/`maxBytes` bound the lines kept for paging.
 */
export class TextTranscript {
  readonly #budget: number
  readonly #log: LineLog.LineLog
  #logLineOpen = false
  #head = ""
  #headBytes = 0
  #headBreaks = 0
  #headFull = false
  #tail = ""
  #tailBytes = 0
  #chars = 0
  #bytes = 0
  #breaks = 0
  /** The line being written: a bare `\r` redraws it, so it is not final until its newline. */
  #open = ""
  /** Where the next text goes in the open line (a bare `\r` sets it to 0). */
  #column = 0
  #pendingCr = false
  #pendingHigh = ""
  #cursor: Mark = { chars: 0, bytes: 0, breaks: 0 }
  #openSeen = ""

  constructor(options: { readonly budget: number; readonly maxLines: number; readonly maxBytes: number }) {
    this.#budget = Math.max(64, Math.floor(options.budget))
    this.#log = LineLog.make({ maxLines: options.maxLines, maxBytes: options.maxBytes })
  }

  /** Bytes of output seen so far (after decoding). */
  get bytes(): number {
    return this.#bytes + Utf8.byteLength(this.#open)
  }

  readonly #searches = new Set<(text: string) => void>()

  /**
   * Look for `target` in the output: the whole output so far (bounded: its head and tail), then each piece
   * as it is written, its complete lines once and the line still open on every check.
   */
  watch(target: Matcher.Pattern): { readonly check: () => Matcher.Match | undefined; readonly close: () => void } {
    const matcher = new Matcher.Matcher(target)
    const soFar = this.full().text
    const lastBreak = soFar.lastIndexOf("\n")
    matcher.append(soFar.slice(0, lastBreak + 1))
    let open = soFar.slice(lastBreak + 1)
    const onText = (text: string) => {
      const joined = open + text.replace(/\r\n/g, "\n")
      const cut = joined.lastIndexOf("\n")
      if (cut < 0) {
        open = joined
        return
      }
      matcher.append(joined.slice(0, cut + 1))
      open = joined.slice(cut + 1)
    }
    this.#searches.add(onText)
    return { check: () => matcher.check(open), close: () => this.#searches.delete(onText) }
  }

  /** Add decoded text as the program wrote it. */
  write(input: string): void {
    for (const search of this.#searches) search(input)
    let text = `${this.#pendingCr ? "\r" : ""}${this.#pendingHigh}${input}`
    this.#pendingCr = false
    this.#pendingHigh = ""
    if (text.endsWith("\r")) {
      this.#pendingCr = true
      text = text.slice(0, -1)
    } else if (isHighSurrogate(text.charCodeAt(text.length - 1))) {
      // half a code point: it is placed (and overwrites) only once whole
      this.#pendingHigh = text.slice(-1)
      text = text.slice(0, -1)
    }
    let from = 0
    const newline = /\r\n|\n|\r/g
    for (let match = newline.exec(text); match !== null; match = newline.exec(text)) {
      this.#put(text.slice(from, match.index))
      if (match[0] === "\r") this.#column = 0
      else this.#sealOpen("\n")
      from = match.index + match[0].length
    }
    this.#put(text.slice(from))
    if (this.#open.length * 3 > this.#budget && Utf8.byteLength(this.#open) > this.#budget) {
      // one endless line (no newline): its beginning is final, only its end can still be redrawn
      const keep = Utf8.cutTail(this.#open, Math.floor(this.#budget / 2))
      this.#seal(this.#open.slice(0, this.#open.length - keep.length))
      this.#column = Math.max(0, this.#column - (this.#open.length - keep.length))
      this.#open = keep
    }
  }

  /** The whole run so far, bounded (head and tail, the middle counted). */
  full(): Bounded {
    return this.#since({ chars: 0, bytes: 0, breaks: 0 }, "")
  }

  /** What is new since the previous call, bounded; a line still being written is returned again once complete. */
  takeNew(): Bounded {
    const view = this.#since(this.#cursor, this.#openSeen)
    this.#cursor = { chars: this.#chars, bytes: this.#bytes, breaks: this.#breaks }
    this.#openSeen = this.#open
    return view
  }

  /** A page of lines (`offset` back from the newest, `count`), like a terminal's transcript. */
  page(request: Paging.PageRequest): Either.Either<Paging.PageResult, Paging.PageError> {
    const log = this.#log
    const first = log.firstIndex
    const open = this.#open
    const joinsLast = this.#logLineOpen && log.endIndex > first
    const extra = open !== "" && !joinsLast ? 1 : 0
    const total = log.endIndex - first + extra
    const line = (index: number): string => {
      if (index < log.endIndex) {
        const text = log.get(index) ?? ""
        return joinsLast && index === log.endIndex - 1 ? text + open : text
      }
      return open
    }
    return Paging.page({ first, total, line }, request)
  }

  /** Text at the column: appended at the end of the line, overwriting after a `\r` (as a terminal does). */
  #put(text: string): void {
    if (text === "") return
    const open = this.#open
    if (this.#column >= open.length) {
      this.#open = open + text
    } else {
      let rest = open.slice(this.#column + text.length)
      // The second half of a code point whose first half was just overwritten: a blank in its place (what a
      // terminal shows of half a wide character), not a deletion, which would move every later column and
      // make the result depend on where the output was split.
      if (isLowSurrogate(rest.charCodeAt(0))) rest = ` ${rest.slice(1)}`
      this.#open = open.slice(0, this.#column) + text + rest
    }
    this.#column += text.length
  }

  #sealOpen(ending: string): void {
    const line = this.#open + ending
    this.#open = ""
    this.#column = 0
    this.#seal(line)
  }

  #seal(text: string): void {
    if (text === "") return
    this.#feedLog(text)
    const bytes = Utf8.byteLength(text)
    const breaks = countBreaks(text)
    let rest = text
    if (!this.#headFull) {
      const fit = Utf8.cutHead(rest, this.#budget - this.#headBytes)
      this.#head += fit
      this.#headBytes += Utf8.byteLength(fit)
      this.#headBreaks += countBreaks(fit)
      rest = rest.slice(fit.length)
      if (rest !== "") this.#headFull = true
    }
    if (rest !== "") {
      this.#tail += rest
      this.#tailBytes += Utf8.byteLength(rest)
      if (this.#tailBytes > 2 * this.#budget) {
        this.#tail = Utf8.cutTail(this.#tail, this.#budget)
        this.#tailBytes = Utf8.byteLength(this.#tail)
      }
    }
    this.#chars += text.length
    this.#bytes += bytes
    this.#breaks += breaks
  }

  #feedLog(text: string): void {
    const pieces = text.split("\n")
    pieces.forEach((piece, index) => {
      if (index > 0) this.#logLineOpen = false
      if (piece === "" && (index > 0 || !this.#logLineOpen)) return
      if (this.#logLineOpen) this.#log.extendLast(piece)
      else this.#log.append(piece)
      this.#logLineOpen = true
    })
  }

  /** The sealed text from `mark` on, then the open line (minus `openSeen` when it only grew). */
  #since(mark: Mark, openSeen: string): Bounded {
    const headChars = this.#head.length
    const tailStart = this.#chars - this.#tail.length
    const before = mark.chars < headChars ? this.#head.slice(mark.chars) : ""
    const gapFrom = mark.chars < headChars
      ? { bytes: this.#headBytes, breaks: this.#headBreaks, chars: headChars }
      : mark
    const gapChars = tailStart - gapFrom.chars
    const tailFrom = Math.max(mark.chars, tailStart) - tailStart
    const after = this.#tail.slice(tailFrom)
    let open = this.#open
    if (gapChars <= 0) {
      let sealed = before + after
      if (openSeen !== "") {
        if (sealed.startsWith(openSeen)) sealed = sealed.slice(openSeen.length)
        else if (sealed === "" && open.startsWith(openSeen)) open = open.slice(openSeen.length)
      }
      return composeAroundGap(sealed + open, "", 0, 0, this.#budget)
    }
    const gapBytes = this.#bytes - this.#tailBytes - gapFrom.bytes
    const gapBreaks = this.#breaks - countBreaks(this.#tail) - gapFrom.breaks
    return composeAroundGap(before, after + open, gapBytes, gapBreaks, this.#budget)
  }
}
