/**
 * UTF-8 byte budgets for JavaScript strings: measure, cut on code-point boundaries, and shorten long output
 * to its head and tail with an omission marker. Byte counts follow `TextEncoder`: a lone surrogate counts as
 * the 3 bytes of the U+FFFD it is encoded as. Cuts never split a code point (a surrogate pair stays whole);
 * grapheme clusters (emoji with modifiers, combining marks) may be split between their code points.
 *
 * @since 0.1.0
 */

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

const unitBytes = (code: number): number => code < 0x80 ? 1 : code < 0x800 ? 2 : 3

/**
 * The UTF-8 encoded length of `s` in bytes.
 *
 * @since 0.1.0
 */
export const byteLength = (s: string): number => nativeByteLength === undefined ? countBytes(s) : nativeByteLength(s)

/**
 * Node's own count, where there is one: the same numbers (a lone surrogate is the 3 bytes of U+FFFD there
 * too; `Utf8.test.ts` holds the two to each other), ~6 times faster on the 100-byte rows a flood logs.
 */
const nativeByteLength: ((s: string) => number) | undefined = (() => {
  const buffer = (globalThis as { Buffer?: { byteLength(s: string, encoding: "utf8"): number } }).Buffer
  return buffer === undefined ? undefined : (s: string) => buffer.byteLength(s, "utf8")
})()

/**
 * The UTF-8 encoded length of `s` in bytes, counted here.
 *
 * @since 0.3.0
 */
export const countBytes = (s: string): number => {
  let bytes = 0
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i)
    if (isHighSurrogate(code) && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      bytes += 4
      i++
    } else {
      bytes += unitBytes(code)
    }
  }
  return bytes
}

/**
 * The longest prefix of `s` whose UTF-8 encoding fits `maxBytes`, never splitting a code point. A budget of
 * zero, a negative one or `NaN` gives `""`.
 *
 * @since 0.1.0
 */
export const cutHead = (s: string, maxBytes: number): string => {
  if (!(maxBytes > 0)) return ""
  if (s.length * 3 <= maxBytes) return s
  let bytes = 0
  let i = 0
  while (i < s.length) {
    const code = s.charCodeAt(i)
    const pair = isHighSurrogate(code) && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))
    const width = pair ? 4 : unitBytes(code)
    if (bytes + width > maxBytes) break
    bytes += width
    i += pair ? 2 : 1
  }
  return i === s.length ? s : s.slice(0, i)
}

/**
 * The longest suffix of `s` whose UTF-8 encoding fits `maxBytes`, never splitting a code point. A budget of
 * zero, a negative one or `NaN` gives `""`.
 *
 * @since 0.1.0
 */
export const cutTail = (s: string, maxBytes: number): string => {
  if (!(maxBytes > 0)) return ""
  if (s.length * 3 <= maxBytes) return s
  let bytes = 0
  let i = s.length
  while (i > 0) {
    const code = s.charCodeAt(i - 1)
    const pair = isLowSurrogate(code) && i - 2 >= 0 && isHighSurrogate(s.charCodeAt(i - 2))
    const width = pair ? 4 : unitBytes(code)
    if (bytes + width > maxBytes) break
    bytes += width
    i -= pair ? 2 : 1
  }
  return i === 0 ? s : s.slice(i)
}

/**
 * The outcome of {@link headTail}: the text to show and what was left out of it.
 *
 * @since 0.1.0
 */
export interface HeadTail {
  readonly text: string
  readonly truncated: boolean
  /** Line breaks inside the omitted span: the whole lines omitted when both cuts fall on line boundaries. */
  readonly omittedLines: number
  readonly omittedBytes: number
}

const countLineBreaks = (s: string): number => {
  let count = 0
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) count++
  return count
}

/**
 * The line that stands for an omitted middle: `… [omitted N lines, M bytes] …` (bytes only when no line
 * break was omitted).
 *
 * @since 0.1.0
 */
export const omissionMarker = (lines: number, bytes: number): string =>
  lines === 0
    ? `… [omitted ${bytes} bytes] …`
    : `… [omitted ${lines} ${lines === 1 ? "line" : "lines"}, ${bytes} bytes] …`

const lineSlack = (share: number): number => Math.min(Math.floor(share / 4), 4096)

const headOnLine = (text: string, head: string, share: number): string => {
  if (head.length === 0 || head.endsWith("\n")) return head
  if (text.charCodeAt(head.length) === 0x0a) return text.slice(0, head.length + 1)
  const lastBreak = head.lastIndexOf("\n")
  if (lastBreak === -1) return head
  return byteLength(head.slice(lastBreak + 1)) <= lineSlack(share) ? head.slice(0, lastBreak + 1) : head
}

const tailOnLine = (text: string, tail: string, share: number): string => {
  if (tail.length === 0 || tail.length === text.length || text.charCodeAt(text.length - tail.length - 1) === 0x0a) {
    return tail
  }
  const firstBreak = tail.indexOf("\n")
  if (firstBreak === -1 || firstBreak === tail.length - 1) return tail
  return byteLength(tail.slice(0, firstBreak + 1)) <= lineSlack(share) ? tail.slice(firstBreak + 1) : tail
}

/**
 * Fits `text` into `maxBytes` by keeping its head (a third of the room) and its tail (two thirds: a failing
 * build's last lines matter most) around a marker line `… [omitted N lines, M bytes] …`. Cuts move back to a
 * line boundary when one is near. The result, marker included, never exceeds `maxBytes`; when even the marker
 * does not fit, the result is the longest tail that does (possibly `""`), and the counts still say what was
 * left out.
 *
 * @since 0.1.0
 */
export const headTail = (text: string, maxBytes: number): HeadTail => {
  const total = byteLength(text)
  if (total <= maxBytes) return { text, truncated: false, omittedLines: 0, omittedBytes: 0 }
  const limit = maxBytes > 0 ? Math.floor(maxBytes) : 0
  const reserve = byteLength(omissionMarker(Math.max(2, countLineBreaks(text)), total)) + 2
  if (reserve > limit) {
    const tail = cutTail(text, limit)
    return {
      text: tail,
      truncated: true,
      omittedLines: countLineBreaks(text.slice(0, text.length - tail.length)),
      omittedBytes: total - byteLength(tail)
    }
  }
  const budget = limit - reserve
  const headShare = Math.floor(budget / 3)
  const tailShare = budget - headShare
  const head = headOnLine(text, cutHead(text, headShare), headShare)
  const tail = tailOnLine(text, cutTail(text, tailShare), tailShare)
  const omitted = text.slice(head.length, text.length - tail.length)
  const omittedLines = countLineBreaks(omitted)
  const omittedBytes = byteLength(omitted)
  const before = head.length === 0 || head.endsWith("\n") ? "" : "\n"
  const after = tail.length === 0 ? "" : "\n"
  return {
    text: `${head}${before}${omissionMarker(omittedLines, omittedBytes)}${after}${tail}`,
    truncated: true,
    omittedLines,
    omittedBytes
  }
}

/**
 * Like {@link headTail}, for a text whose middle is already left out: `head` and `tail` around a gap of
 * `gap.lines` lines and `gap.bytes` bytes (a capture that kept only the first and the last of a long
 * output). The result has one marker line with the total omitted, and never exceeds `maxBytes`.
 *
 * @since 0.1.0
 */
export const headGapTail = (
  head: string,
  gap: { readonly lines: number; readonly bytes: number },
  tail: string,
  maxBytes: number
): HeadTail => {
  const limit = maxBytes > 0 ? Math.floor(maxBytes) : 0
  const render = (h: string, lines: number, bytes: number, t: string) =>
    `${h}${h === "" || h.endsWith("\n") ? "" : "\n"}${omissionMarker(lines, bytes)}${t === "" ? "" : "\n"}${t}`
  const whole = render(head, gap.lines, gap.bytes, tail)
  if (byteLength(whole) <= limit) {
    return { text: whole, truncated: true, omittedLines: gap.lines, omittedBytes: gap.bytes }
  }
  const headBytes = byteLength(head)
  const tailBytes = byteLength(tail)
  const omittedWith = (h: string, t: string) => {
    const droppedHead = head.slice(h.length)
    const droppedTail = tail.slice(0, tail.length - t.length)
    const headPart = droppedHead === "" ? 0 : byteLength(droppedHead) + 1
    return {
      lines: gap.lines + (droppedHead === "" ? 0 : countLineBreaks(droppedHead) + 1) + countLineBreaks(droppedTail),
      bytes: gap.bytes + headPart + byteLength(droppedTail)
    }
  }
  const most = omittedWith("", "")
  const reserve = byteLength(omissionMarker(most.lines, most.bytes)) + 2
  if (reserve > limit) {
    const t = cutTail(tail, limit)
    const omitted = omittedWith("", t)
    return { text: t, truncated: true, omittedLines: omitted.lines, omittedBytes: omitted.bytes }
  }
  const budget = limit - reserve
  let headRoom = Math.floor(budget / 3)
  let tailRoom = budget - headRoom
  if (headBytes < headRoom) {
    tailRoom += headRoom - headBytes
    headRoom = headBytes
  } else if (tailBytes < tailRoom) {
    headRoom += tailRoom - tailBytes
    tailRoom = tailBytes
  }
  const h = headBytes <= headRoom ? head : headOnLine(head, cutHead(head, headRoom), headRoom)
  const t = tailBytes <= tailRoom ? tail : tailOnLine(tail, cutTail(tail, tailRoom), tailRoom)
  const omitted = omittedWith(h, t)
  return {
    text: render(h, omitted.lines, omitted.bytes, t),
    truncated: true,
    omittedLines: omitted.lines,
    omittedBytes: omitted.bytes
  }
}
