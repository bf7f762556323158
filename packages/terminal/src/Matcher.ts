/**
 * Waiting for what matters in a stream of output: a literal text or a JavaScript regular expression,
 * looked for incrementally. Text that is final (it scrolled off the screen, or a line a pipe ended) is
 * appended once and scanned once; the live part (the rows still on the screen, a line still being written)
 * is scanned again on each check. Every scan is bounded: a regex never runs over more than `WINDOW_CHARS`
 * characters at a time — the text new since the previous scan and up to `OVERLAP_CHARS` before it — so a
 * flood of output costs linear time, and a match longer than `OVERLAP_CHARS` may be missed when it spans
 * two scans.
 *
 * Catastrophic backtracking is guarded against as far as JavaScript allows (its engine has no time limit):
 * patterns are at most `MAX_PATTERN_CHARS` long, a repetition nested in a repetition (`(a+)+`, `(\w*)*`,
 * `(?:x+){2,}`) is refused (`regexProblem`), and the text a regex runs over is bounded as above.
 *
 * @since 0.3.0
 */

/**
 * The most characters one regular-expression run sees: the new text and the overlap before it.
 *
 * @since 0.3.0
 */
export const WINDOW_CHARS = 32 * 1024

/**
 * Characters of already-scanned text kept before new text, so a match can span two scans.
 *
 * @since 0.3.0
 */
export const OVERLAP_CHARS = 2 * 1024

/**
 * The longest pattern (`text` or `regex` source) accepted.
 *
 * @since 0.3.0
 */
export const MAX_PATTERN_CHARS = 1024

/**
 * What a wait looks for: a literal text, or a regular expression (source and flags).
 *
 * @since 0.3.0
 */
export type Pattern =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Regex"; readonly regex: RegExp }

/**
 * What was found: the matched text, and a regex's groups (`undefined` for a group that did not take part).
 *
 * @since 0.3.0
 */
export interface Match {
  readonly text: string
  readonly groups?: ReadonlyArray<string | undefined>
  readonly named?: Readonly<Record<string, string | undefined>>
  /** The match reaches the end of the text seen so far (more output could still extend it). */
  readonly atEnd: boolean
}

/**
 * The flags a pattern may carry: `i` (ignore case), `m` (`^`/`$` at line ends), `s` (`.` matches a
 * newline), `u` (Unicode).
 *
 * @since 0.3.0
 */
export const ALLOWED_FLAGS = "imsu"

/** What follows a repeated item: `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`; unbounded when it can repeat without end. */
const quantifierAt = (source: string, at: number): { readonly length: number; readonly unbounded: boolean } => {
  const char = source[at]
  if (char === "*" || char === "+") return { length: 1 + (source[at + 1] === "?" ? 1 : 0), unbounded: true }
  if (char === "?") return { length: 1 + (source[at + 1] === "?" ? 1 : 0), unbounded: false }
  if (char === "{") {
    const braces = /^\{(\d+)(,(\d*))?\}\??/.exec(source.slice(at))
    if (braces !== null) {
      const upper = braces[2] === undefined ? Number(braces[1]) : braces[3] === "" ? Infinity : Number(braces[3])
      return { length: braces[0].length, unbounded: upper > 1 && !Number.isFinite(upper) }
    }
  }
  return { length: 0, unbounded: false }
}

/**
 * Why a regular expression is refused, or `undefined` when it is accepted: it does not compile, its flags
 * are not among `ALLOWED_FLAGS`, it is longer than `MAX_PATTERN_CHARS`, or it nests a repetition inside a
 * repetition (the shape whose backtracking can take exponential time). The reason never repeats the pattern.
 *
 * @since 0.3.0
 */
export const regexProblem = (source: string, flags = ""): string | undefined => {
  if (source.length === 0) return "is empty"
  if (source.length > MAX_PATTERN_CHARS) return `must be at most ${MAX_PATTERN_CHARS} characters`
  for (const flag of flags) {
    if (!ALLOWED_FLAGS.includes(flag)) return `flags may only be ${ALLOWED_FLAGS.split("").join(", ")}`
  }
  try {
    new RegExp(source, flags)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    // V8's message quotes the pattern ("Invalid regular expression: /…/: Unterminated group"): keep the why
    const why = message.slice(message.lastIndexOf(": ") + 2)
    return `is not a valid JavaScript regular expression (${why.slice(0, 80)})`
  }
  // Each open group: whether something inside it repeats without bound.
  const groups: Array<{ repeats: boolean }> = [{ repeats: false }]
  let inClass = false
  for (let at = 0; at < source.length; at++) {
    const char = source[at]!
    if (char === "\\") {
      at++
      const next = quantifierAt(source, at + 1)
      if (next.unbounded) groups[groups.length - 1]!.repeats = true
      at += next.length
      continue
    }
    if (inClass) {
      if (char === "]") {
        inClass = false
        const next = quantifierAt(source, at + 1)
        if (next.unbounded) groups[groups.length - 1]!.repeats = true
        at += next.length
      }
      continue
    }
    if (char === "[") {
      inClass = true
      continue
    }
    if (char === "(") {
      groups.push({ repeats: false })
      continue
    }
    if (char === ")") {
      const closed = groups.pop() ?? { repeats: false }
      if (groups.length === 0) groups.push({ repeats: false })
      const next = quantifierAt(source, at + 1)
      if (next.unbounded && closed.repeats) {
        return "repeats a group that itself repeats without bound (like (a+)+): such a pattern can take " +
          "exponential time; write the inner part without the repetition, or match less"
      }
      if (next.unbounded || closed.repeats) groups[groups.length - 1]!.repeats = true
      at += next.length
      continue
    }
    const next = quantifierAt(source, at + 1)
    if (next.unbounded) groups[groups.length - 1]!.repeats = true
    at += next.length
  }
  return undefined
}

/**
 * A pattern ready to look for. `regex` must have passed `regexProblem` (the tools and the service check it
 * at their entry).
 *
 * @since 0.3.0
 */
export const pattern = (
  condition: { readonly text: string } | { readonly regex: string; readonly flags?: string | undefined }
): Pattern =>
  "text" in condition
    ? { _tag: "Text", text: condition.text }
    : { _tag: "Regex", regex: new RegExp(condition.regex, condition.flags ?? "") }

const find = (target: Pattern, text: string): Match | undefined => {
  if (target._tag === "Text") {
    const at = text.indexOf(target.text)
    return at < 0 ? undefined : { text: target.text, atEnd: at + target.text.length === text.length }
  }
  target.regex.lastIndex = 0
  const found = target.regex.exec(text)
  if (found === null) return undefined
  return {
    text: found[0],
    ...(found.length > 1 ? { groups: found.slice(1) } : {}),
    ...(found.groups !== undefined ? { named: { ...found.groups } } : {}),
    atEnd: found.index + found[0].length === text.length
  }
}

/** Where a piece of text may be cut without splitting a surrogate pair. */
const safeCut = (text: string, at: number): number => {
  if (at <= 0 || at >= text.length) return Math.max(0, Math.min(at, text.length))
  const code = text.charCodeAt(at)
  return code >= 0xdc00 && code <= 0xdfff ? at - 1 : at
}

/**
 * Looks for a pattern in a stream: `append` what is final, `check` with what is live.
 *
 * @since 0.3.0
 */
export class Matcher {
  readonly #target: Pattern
  /** The end of the already-scanned final text (at most `OVERLAP_CHARS`). */
  #carry = ""
  /** Final text not scanned yet. */
  #pending: Array<string> = []
  #pendingChars = 0
  #found: Match | undefined

  constructor(target: Pattern) {
    this.#target = target
  }

  /** The first match found while appending (a flood is scanned as it arrives, in bounded windows). */
  get found(): Match | undefined {
    return this.#found
  }

  /** Text that will not change any more. */
  append(text: string): void {
    if (text.length === 0 || this.#found !== undefined) return
    this.#pending.push(text)
    this.#pendingChars += text.length
    // Scanned as it comes once it passes a window, so neither memory nor one scan grows with a flood.
    if (this.#pendingChars >= WINDOW_CHARS - OVERLAP_CHARS) this.#scanPending()
  }

  /**
   * Look for the pattern in the final text not scanned yet plus `live` (the part that may still change:
   * scanned again on every check). The first match, or `undefined`.
   */
  check(live = ""): Match | undefined {
    if (this.#found !== undefined) return this.#found
    this.#scanPending()
    if (this.#found !== undefined) return this.#found
    const room = WINDOW_CHARS - this.#carry.length
    if (live.length <= room) return this.#keep(find(this.#target, this.#carry + live), true)
    // A live part larger than a window (a huge screen): scanned in windows that overlap.
    let window = this.#carry
    for (let from = 0; from < live.length;) {
      const to = safeCut(live, Math.min(live.length, from + (WINDOW_CHARS - window.length)))
      const text = window + live.slice(from, to)
      const found = find(this.#target, text)
      if (found !== undefined) return this.#keep({ ...found, atEnd: found.atEnd && to === live.length }, true)
      window = text.slice(safeCut(text, text.length - OVERLAP_CHARS))
      from = to
    }
    return undefined
  }

  /** A match in the live part is reported, not kept: the live part may still change. */
  #keep(found: Match | undefined, live: boolean): Match | undefined {
    if (found !== undefined && !live) this.#found = found
    return found
  }

  #scanPending(): void {
    if (this.#pendingChars === 0) return
    const text = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join("")
    this.#pending = []
    this.#pendingChars = 0
    let window = this.#carry
    for (let from = 0; from < text.length;) {
      const to = safeCut(text, Math.min(text.length, from + (WINDOW_CHARS - window.length)))
      const scanned = window + text.slice(from, to)
      const found = find(this.#target, scanned)
      if (found !== undefined) {
        // final text: more output cannot change it, but a match at its very end could grow (`\d+`)
        this.#keep({ ...found, atEnd: false }, false)
        return
      }
      window = scanned.slice(safeCut(scanned, scanned.length - OVERLAP_CHARS))
      from = to
    }
    this.#carry = window
  }
}
