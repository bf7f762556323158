/**
 * Waiting for what matters in a stream of output: a literal text or a regular expression (JavaScript's
 * syntax, run by a linear-time RE2 engine: `internal/regex.ts`), looked for incrementally. Text that is
 * final (it scrolled off the screen, or a line a pipe ended) is appended once and scanned once; the live
 * part (the rows still on the screen, a line still being written) is scanned again on each check. Every
 * scan is bounded: a search never runs over more than `WINDOW_CHARS` characters at a time (fewer for a
 * regex whose compiled program is large: `windowOf`) — the text new since the previous scan and up to
 * `OVERLAP_CHARS` before it — so a flood of output costs linear time, and a match longer than
 * `OVERLAP_CHARS` may be missed when it spans two scans.
 *
 * No pattern can backtrack: the engine is RE2's (no backreferences, no lookaround: refused by name), its
 * compiled program is bounded (`regexProblem`), and the text one run sees is bounded as above, so one run
 * takes at most `STEPS_PER_RUN` steps of the engine — `(a|a)+$`, `(a+){20}$` and `a*a*a*$` included.
 *
 * @since 0.3.0
 */
import * as Regex from "./internal/regex.js"

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
  | { readonly _tag: "Regex"; readonly regex: Regex.Regex }

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

/**
 * Why a regular expression is refused, or `undefined` when it is accepted: its flags are not among
 * `ALLOWED_FLAGS`, it is longer than `MAX_PATTERN_CHARS`, it uses what the linear-time engine cannot do
 * (a backreference, a lookahead or lookbehind: named in the reason), it does not compile, or its compiled
 * program is larger than the engine's bound. The reason never repeats the pattern.
 *
 * @since 0.3.0
 */
export const regexProblem = (source: string, flags = ""): string | undefined => {
  if (source.length === 0) return "is empty"
  if (source.length > MAX_PATTERN_CHARS) return `must be at most ${MAX_PATTERN_CHARS} characters`
  for (const flag of flags) {
    if (!ALLOWED_FLAGS.includes(flag)) return `flags may only be ${ALLOWED_FLAGS.split("").join(", ")}`
  }
  const compiled = Regex.compileCached(source, flags)
  return typeof compiled === "string" ? compiled : undefined
}

/**
 * A pattern ready to look for. `regex` must have passed `regexProblem` (the tools and the service check it
 * at their entry).
 *
 * @since 0.3.0
 */
export const pattern = (
  condition: { readonly text: string } | { readonly regex: string; readonly flags?: string | undefined }
): Pattern => {
  if ("text" in condition) return { _tag: "Text", text: condition.text }
  const compiled = Regex.compileCached(condition.regex, condition.flags ?? "")
  if (typeof compiled === "string") throw new TypeError(`waitFor.regex ${compiled}`)
  return { _tag: "Regex", regex: compiled }
}

const find = (target: Pattern, text: string): Match | undefined => {
  if (target._tag === "Text") {
    const at = text.indexOf(target.text)
    return at < 0 ? undefined : { text: target.text, atEnd: at + target.text.length === text.length }
  }
  // the DFA first: most looks find nothing, and it answers that at a few nanoseconds a character
  if (!target.regex.test(text)) return undefined
  const found = target.regex.exec(text)
  if (found === null) return undefined
  return {
    text: found[0],
    ...(found.length > 1 ? { groups: found.slice(1) } : {}),
    ...(found.groups !== undefined ? { named: { ...found.groups } } : {}),
    atEnd: found.index + found[0].length === text.length
  }
}

/**
 * The window of a pattern: `WINDOW_CHARS` for a text; for a regex, as many characters as keep one run within
 * the engine's step bound (`Regex.STEPS_PER_RUN` over its program's size), never less than twice the overlap.
 *
 * @since 0.3.0
 */
export const windowOf = (target: Pattern): number =>
  target._tag === "Text"
    ? WINDOW_CHARS
    : Math.max(2 * OVERLAP_CHARS, Math.min(WINDOW_CHARS, Math.floor(Regex.STEPS_PER_RUN / target.regex.size)))

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
  /** The most characters one scan sees: `WINDOW_CHARS`, less for a regex whose program is large. */
  readonly #window: number
  /** The end of the already-scanned final text (at most `OVERLAP_CHARS`). */
  #carry = ""
  /** Final text not scanned yet. */
  #pending: Array<string> = []
  #pendingChars = 0
  #found: Match | undefined

  constructor(target: Pattern) {
    this.#target = target
    this.#window = windowOf(target)
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
    if (this.#pendingChars >= this.#window - OVERLAP_CHARS) this.#scanPending()
  }

  /**
   * Look for the pattern in the final text not scanned yet plus `live` (the part that may still change:
   * scanned again on every check). The first match, or `undefined`.
   */
  check(live = ""): Match | undefined {
    if (this.#found !== undefined) return this.#found
    this.#scanPending()
    if (this.#found !== undefined) return this.#found
    const room = this.#window - this.#carry.length
    if (live.length <= room) return this.#keep(find(this.#target, this.#carry + live), true)
    // A live part larger than a window (a huge screen): scanned in windows that overlap.
    let window = this.#carry
    for (let from = 0; from < live.length;) {
      const to = safeCut(live, Math.min(live.length, from + (this.#window - window.length)))
      const text = window + live.slice(from, to)
      const found = find(this.#target, text)
      if (found !== undefined && (to === live.length || !this.#atCut(found))) {
        return this.#keep({ ...found, atEnd: found.atEnd && to === live.length }, true)
      }
      window = text.slice(safeCut(text, text.length - OVERLAP_CHARS))
      from = to
    }
    return undefined
  }

  /**
   * A regex's match that reaches the end of a window is not taken there: `$` and `\b` see the cut as the end
   * of the text, and a greedy match stops at it. The next window begins with the overlap and looks again (and
   * at the end of the final text, the next check does, with what follows).
   */
  #atCut(found: Match): boolean {
    return found.atEnd && this.#target._tag === "Regex"
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
      const to = safeCut(text, Math.min(text.length, from + (this.#window - window.length)))
      const scanned = window + text.slice(from, to)
      const found = find(this.#target, scanned)
      if (found !== undefined && !this.#atCut(found)) {
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
