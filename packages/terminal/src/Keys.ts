/**
 * Named keys for `terminal_send` `keys`, encoded as xterm sends them: `Enter`, `Tab`, arrows (following the
 * application-cursor mode the program set), F-keys, and the modifiers `C-` (Ctrl), `M-` (Alt/Meta, alias
 * `A-`) and `S-` (Shift), e.g. `C-c`, `M-x`, `S-Tab`, `C-Up`.
 *
 * Names and modifier letters are case-insensitive (`enter`, `ENTER`, `c-c`); a single character keeps its
 * case (`M-x` is `ESC x`, `M-X` is `ESC X`), except under Ctrl where, as on a terminal, `C-c` and `C-C` are
 * both `0x03`. Text (as opposed to keys) is sent as its exact UTF-8 bytes, and bytes given as a `Uint8Array`
 * are sent unchanged, including bytes ≥ 0x80 that are not valid UTF-8: see {@link toBytes}.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"

/**
 * The terminal modes that change what a key sends (DECCKM, set by the program with `CSI ? 1 h`).
 *
 * @since 0.1.0
 */
export interface Modes {
  readonly applicationCursor: boolean
}

/**
 * The forms {@link encodeKey} accepts, for error messages and tool descriptions.
 *
 * @since 0.1.0
 */
export const validForms = "Enter, Tab, Escape (Esc), Backspace, Delete, Insert, Space, Up, Down, Left, Right, " +
  "Home, End, PageUp, PageDown, F1-F12, or one printable character (q, :); modifiers C- (Ctrl), M- (Alt), " +
  "S- (Shift) combine: C-c, M-x, S-Tab, C-Up, C-M-Left"

/**
 * A key name that cannot be encoded: the name as given and why.
 *
 * @since 0.1.0
 */
export class KeyError extends Data.TaggedError("KeyError")<{
  readonly key: string
  readonly reason: string
}> {
  override get message(): string {
    return `key ${JSON.stringify(this.key)}: ${this.reason} (valid keys: ${validForms})`
  }
}

interface Modifiers {
  readonly ctrl: boolean
  readonly alt: boolean
  readonly shift: boolean
}

type Named =
  | { readonly _tag: "Cursor"; readonly final: string }
  | { readonly _tag: "Function"; readonly final: string }
  | { readonly _tag: "Tilde"; readonly code: number }
  | { readonly _tag: "Enter" }
  | { readonly _tag: "Tab" }
  | { readonly _tag: "Escape" }
  | { readonly _tag: "Backspace" }
  | { readonly _tag: "Space" }

const ESC = "\x1b"

const cursor = (final: string): Named => ({ _tag: "Cursor", final })
const tilde = (code: number): Named => ({ _tag: "Tilde", code })
const fn = (final: string): Named => ({ _tag: "Function", final })

const named: ReadonlyMap<string, Named> = new Map<string, Named>([
  ["enter", { _tag: "Enter" }],
  ["return", { _tag: "Enter" }],
  ["tab", { _tag: "Tab" }],
  ["escape", { _tag: "Escape" }],
  ["esc", { _tag: "Escape" }],
  ["backspace", { _tag: "Backspace" }],
  ["bspace", { _tag: "Backspace" }],
  ["space", { _tag: "Space" }],
  ["up", cursor("A")],
  ["down", cursor("B")],
  ["right", cursor("C")],
  ["left", cursor("D")],
  ["home", cursor("H")],
  ["end", cursor("F")],
  ["insert", tilde(2)],
  ["ins", tilde(2)],
  ["delete", tilde(3)],
  ["del", tilde(3)],
  ["pageup", tilde(5)],
  ["pgup", tilde(5)],
  ["pagedown", tilde(6)],
  ["pgdn", tilde(6)],
  ["f1", fn("P")],
  ["f2", fn("Q")],
  ["f3", fn("R")],
  ["f4", fn("S")],
  ["f5", tilde(15)],
  ["f6", tilde(17)],
  ["f7", tilde(18)],
  ["f8", tilde(19)],
  ["f9", tilde(20)],
  ["f10", tilde(21)],
  ["f11", tilde(23)],
  ["f12", tilde(24)]
])

const ctrlSymbols: ReadonlyMap<string, string> = new Map([
  ["@", "\x00"],
  [" ", "\x00"],
  ["[", "\x1b"],
  ["\\", "\x1c"],
  ["]", "\x1d"],
  ["^", "\x1e"],
  ["_", "\x1f"],
  ["/", "\x1f"],
  ["?", "\x7f"]
])

const modifierParameter = (mods: Modifiers): number =>
  1 + (mods.shift ? 1 : 0) + (mods.alt ? 2 : 0) + (mods.ctrl ? 4 : 0)

const noEncoding = (key: string, modifier: string): Either.Either<string, KeyError> =>
  Either.left(new KeyError({ key, reason: `${modifier} has no distinct encoding for this key in a terminal` }))

const withAlt = (mods: Modifiers, bytes: string): string => mods.alt ? ESC + bytes : bytes

const encodeNamed = (
  key: string,
  target: Named,
  mods: Modifiers,
  modes: Modes
): Either.Either<string, KeyError> => {
  const parameter = modifierParameter(mods)
  switch (target._tag) {
    case "Cursor":
      return Either.right(
        parameter > 1
          ? `${ESC}[1;${parameter}${target.final}`
          : `${ESC}${modes.applicationCursor ? "O" : "["}${target.final}`
      )
    case "Function":
      return Either.right(parameter > 1 ? `${ESC}[1;${parameter}${target.final}` : `${ESC}O${target.final}`)
    case "Tilde":
      return Either.right(parameter > 1 ? `${ESC}[${target.code};${parameter}~` : `${ESC}[${target.code}~`)
    case "Enter":
      if (mods.ctrl) return noEncoding(key, "C-")
      if (mods.shift) return noEncoding(key, "S-")
      return Either.right(withAlt(mods, "\r"))
    case "Tab":
      if (mods.ctrl) return noEncoding(key, "C-")
      return Either.right(withAlt(mods, mods.shift ? `${ESC}[Z` : "\t"))
    case "Escape":
      if (mods.ctrl) return noEncoding(key, "C-")
      if (mods.shift) return noEncoding(key, "S-")
      return Either.right(withAlt(mods, ESC))
    case "Backspace":
      if (mods.shift) return noEncoding(key, "S-")
      return Either.right(withAlt(mods, mods.ctrl ? "\x08" : "\x7f"))
    case "Space":
      return Either.right(withAlt(mods, mods.ctrl ? "\x00" : " "))
  }
}

const isControl = (codePoint: number): boolean => codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0)

const encodeCharacter = (key: string, char: string, mods: Modifiers): Either.Either<string, KeyError> => {
  if (isControl(char.codePointAt(0) ?? 0)) {
    return Either.left(new KeyError({ key, reason: "not a printable character; name the key instead" }))
  }
  let typed = char
  if (mods.shift) {
    const upper = char.toUpperCase()
    if (upper === char.toLowerCase() || Array.from(upper).length !== 1) {
      return Either.left(
        new KeyError({ key, reason: "S- applies to letters and named keys; give the shifted character itself" })
      )
    }
    typed = upper
  }
  if (mods.ctrl) {
    const code = typed.charCodeAt(0)
    const isAsciiLetter = typed.length === 1 && ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a))
    const control = isAsciiLetter ? String.fromCharCode(code & 0x1f) : ctrlSymbols.get(typed)
    if (control === undefined) {
      return Either.left(new KeyError({ key, reason: "C- applies to letters, Space and @ [ \\ ] ^ _ / ?" }))
    }
    typed = control
  }
  return Either.right(withAlt(mods, typed))
}

const modifierPrefix = /^([CcMmAaSs])-(.+)$/su

/**
 * Encodes one named key (with optional modifiers) as the bytes a terminal sends for it.
 *
 * @since 0.1.0
 */
export const encodeKey = (name: string, modes: Modes): Either.Either<string, KeyError> => {
  let ctrl = false
  let alt = false
  let shift = false
  let rest = name
  for (let match = modifierPrefix.exec(rest); match !== null; match = modifierPrefix.exec(rest)) {
    const letter = match[1].toUpperCase()
    const already = letter === "C" ? ctrl : letter === "S" ? shift : alt
    if (already) return Either.left(new KeyError({ key: name, reason: `modifier ${letter}- given twice` }))
    if (letter === "C") ctrl = true
    else if (letter === "S") shift = true
    else alt = true
    rest = match[2]
  }
  const mods: Modifiers = { ctrl, alt, shift }
  if (Array.from(rest).length === 1) return encodeCharacter(name, rest, mods)
  const target = named.get(rest.toLowerCase())
  if (target === undefined) return Either.left(new KeyError({ key: name, reason: "unknown key" }))
  return encodeNamed(name, target, mods, modes)
}

/**
 * Encodes a sequence of named keys into one string; the first key that cannot be encoded fails the whole.
 *
 * @since 0.1.0
 */
export const encodeKeys = (names: Iterable<string>, modes: Modes): Either.Either<string, KeyError> => {
  let out = ""
  for (const name of names) {
    const encoded = encodeKey(name, modes)
    if (Either.isLeft(encoded)) return encoded
    out += encoded.right
  }
  return Either.right(out)
}

/**
 * The bytes to write for input: a string as its exact UTF-8 encoding (a lone surrogate becomes U+FFFD, the
 * only change), a `Uint8Array` as it is, so raw bytes ≥ 0x80 pass unchanged.
 *
 * @since 0.1.0
 */
export const toBytes = (input: string | Uint8Array): Uint8Array =>
  typeof input === "string" ? new TextEncoder().encode(input) : input
