/**
 * The regular expressions of `waitFor`, on a linear-time engine: `re2js`, a port of RE2 (no backtracking:
 * the time of a match grows with the text times the size of the compiled program, whatever the pattern).
 * JavaScript syntax is taken (named groups `(?<name>…)`, `\u` escapes: translated by the engine), and what
 * RE2 cannot do without backtracking is refused by name: backreferences, lookahead, lookbehind.
 *
 * A run asks the engine's DFA first (whether the text holds a match: a few nanoseconds a character) and
 * only then its NFA for the match and its groups (slower, once per match). Programs are bounded
 * (`MAX_PROGRAM_SIZE`), so one run over a window costs at most a bounded multiple of the window's length.
 */
import { createRequire } from "node:module"
import type { RE2JS } from "re2js"

/** The largest compiled program accepted (RE2's instructions; `port (\d+)` is 11, `(a+){20}$` 83). */
export const MAX_PROGRAM_SIZE = 128

/**
 * The most steps (characters times instructions) one run may take: the window a pattern runs over is this
 * divided by its program's size. At the engine's slowest measured step (~110 ns: a capturing NFA with many
 * groups) a run stays under ~60 ms.
 */
export const STEPS_PER_RUN = 512 * 1024

/** A compiled regular expression. */
export interface Regex {
  readonly source: string
  readonly flags: string
  /** The compiled program's size (instructions). */
  readonly size: number
  /** Whether `text` holds a match (the DFA). */
  readonly test: (text: string) => boolean
  /** The first match in `text` (the NFA), as `RegExp.exec` gives it. */
  readonly exec: (text: string) => RegExpExecArray | null
}

/**
 * The engine, loaded when the first pattern is compiled (synchronously: a request's pattern is checked inside its
 * Schema), from this package's own dependencies. Most servers never see a pattern, and the engine's module
 * (~190 KB of source, its tables built as it loads) held ~0.6 MiB of every server's heap.
 */
let engine: typeof RE2JS | undefined
const re2 = (): typeof RE2JS =>
  engine ??= (createRequire(import.meta.url)("re2js") as { readonly RE2JS: typeof RE2JS }).RE2JS

const flagBits = (flags: string): number => {
  const { CASE_INSENSITIVE, DOTALL, MULTILINE } = re2()
  let bits = 0
  for (const flag of flags) {
    // RE2 always reads code points: `u` changes nothing
    bits |= flag === "i" ? CASE_INSENSITIVE : flag === "m" ? MULTILINE : flag === "s" ? DOTALL : 0
  }
  return bits
}

/** A construct of JavaScript's regular expressions that needs backtracking, named; `undefined` if none. */
export const unsupportedFeature = (source: string): string | undefined => {
  let inClass = false
  for (let at = 0; at < source.length; at++) {
    const char = source[at]!
    if (char === "\\") {
      const next = source[at + 1]
      if (!inClass && next !== undefined && next >= "1" && next <= "9") return `a backreference (\\${next})`
      if (!inClass && next === "k" && source[at + 2] === "<") return "a named backreference (\\k<…>)"
      at++
      continue
    }
    if (inClass) {
      if (char === "]") inClass = false
      continue
    }
    if (char === "[") {
      inClass = true
      continue
    }
    if (char === "(" && source[at + 1] === "?") {
      const rest = source.slice(at + 2, at + 4)
      if (rest.startsWith("=")) return "a lookahead ((?=…))"
      if (rest.startsWith("!")) return "a negative lookahead ((?!…))"
      if (rest === "<=") return "a lookbehind ((?<=…))"
      if (rest === "<!") return "a negative lookbehind ((?<!…))"
      if (rest.startsWith(">")) return "an atomic group ((?>…))"
    }
  }
  return undefined
}

const reasonOf = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  // "error parsing regexp: missing closing ): `(unclosed`" — keep the why, never the pattern
  const why = message.replace(/^error parsing regexp: /, "").replace(/:\s*`[\s\S]*`\s*$/, "")
  return why.slice(0, 80)
}

/** The pattern compiled, or why it is refused (never repeating the pattern). */
export const compile = (source: string, flags: string): Regex | string => {
  const feature = unsupportedFeature(source)
  if (feature !== undefined) {
    return `uses ${feature}, which the linear-time regular expression engine (RE2) does not support`
  }
  let compiled: RE2JS
  try {
    const RE2 = re2()
    compiled = RE2.compile(RE2.translateRegExp(source), flagBits(flags))
  } catch (error) {
    return `is not a valid regular expression for RE2 (${reasonOf(error)})`
  }
  const size = compiled.programSize()
  if (size > MAX_PROGRAM_SIZE) {
    return `is too large once compiled (${size} instructions, at most ${MAX_PROGRAM_SIZE}): ` +
      "repeat less (a{100} is 100 instructions) or match less"
  }
  return {
    source,
    flags,
    size,
    test: (text) => compiled.test(text),
    exec: (text) => compiled.exec(text) as RegExpExecArray | null
  }
}

const cache = new Map<string, Regex | string>()
const CACHE_ENTRIES = 64

/** `compile`, remembering the last few patterns (a request's pattern is checked, then compiled again). */
export const compileCached = (source: string, flags: string): Regex | string => {
  const key = `${flags}/${source}`
  const known = cache.get(key)
  if (known !== undefined) return known
  const compiled = compile(source, flags)
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
  cache.set(key, compiled)
  return compiled
}
