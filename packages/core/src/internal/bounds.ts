/**
 * The bounds of a request's fields and the Schemas that enforce them, re-exported by `Session` (their
 * public home): a value outside them is `InvalidInput` naming the field, the same for the tools and the
 * service.
 */
import { Utf8 } from "@agent-terminal/terminal"
import * as Schema from "effect/Schema"

/**
 * The bounds of a request's fields, the same for the tools and the service (docs/tools.md): a value outside
 * them is `InvalidInput` naming the field, before anything runs.
 *
 * @since 0.2.0
 */
export const bounds = {
  /** Terminal width in columns. */
  cols: { min: 20, max: 1000 },
  /** Terminal height in rows. */
  rows: { min: 5, max: 500 },
  /** Every duration in milliseconds (`timeoutMs`, `idleMs`, `yieldMs`, the exec timeouts): 0 to 24 hours. */
  maxMillis: 86_400_000,
  /** A session's name, in characters. */
  nameLength: 128,
  /** An id given back to the service (`sessionId`, `taskId`), in characters. */
  idLength: 64,
  /** A path (`cwd`), in characters. */
  pathLength: 4096,
  /** Named keys in one send, and the length of one key's name. */
  keys: 1024,
  keyLength: 32,
  /** Arguments of a command, and the bytes of one (the kernel's own bound of an argument). */
  args: 4096,
  argBytes: 128 * 1024,
  /** Lines of a transcript page (`offset`, `count`). */
  lines: 100_000_000
} as const

const controlCharacter = /[\p{Cc}]/u

/**
 * The room a program's output gets in a result of `maxResultBytes`: the rest is kept for the facts a
 * transport puts before it (`[wait: prompt] [exit: 0] …`, `[exec: exited] …`), so the output's own cut (its
 * head and tail, the middle counted) is the only one.
 *
 * @since 0.4.0
 */
export const outputRoom = (maxResultBytes: number): number =>
  maxResultBytes - (maxResultBytes < 4096 ? 0 : Math.min(512, Math.floor(maxResultBytes / 8)))

/**
 * An integer in `[min, max]`; the failure says the range, never the value given.
 *
 * @since 0.2.0
 */
export const integerBetween = (min: number, max: number, unit = "") =>
  Schema.Number.pipe(
    Schema.int(),
    Schema.between(min, max),
    Schema.annotations({ message: () => `must be an integer${unit} from ${min} to ${max}` })
  )

/**
 * Milliseconds: an integer from 0 to `bounds.maxMillis`.
 *
 * @since 0.2.0
 */
export const Millis = integerBetween(0, bounds.maxMillis, " number of milliseconds")

/**
 * A terminal width in columns.
 *
 * @since 0.2.0
 */
export const Columns = integerBetween(bounds.cols.min, bounds.cols.max)

/**
 * A terminal height in rows.
 *
 * @since 0.2.0
 */
export const Rows = integerBetween(bounds.rows.min, bounds.rows.max)

/**
 * A session's name: 1 to 128 characters, none of them a control character.
 *
 * @since 0.2.0
 */
export const Name = Schema.String.pipe(
  Schema.filter((name) => name.length >= 1 && name.length <= bounds.nameLength && !controlCharacter.test(name), {
    message: () => `must be a string of 1 to ${bounds.nameLength} characters without control characters`,
    jsonSchema: { minLength: 1, maxLength: bounds.nameLength }
  })
)

/**
 * An id handed back to the service: at most `bounds.idLength` characters.
 *
 * @since 0.2.0
 */
export const IdString = Schema.String.pipe(
  Schema.maxLength(bounds.idLength),
  Schema.annotations({ message: () => `must be an id (a string of at most ${bounds.idLength} characters)` })
)

/**
 * A path: at most `bounds.pathLength` characters, without a NUL.
 *
 * @since 0.2.0
 */
export const Path = Schema.String.pipe(
  Schema.filter((path) => path.length <= bounds.pathLength && !path.includes("\u0000"), {
    message: () => `must be a path (a string of at most ${bounds.pathLength} characters without NUL)`,
    jsonSchema: { maxLength: bounds.pathLength }
  })
)

/**
 * A command's arguments: at most `bounds.args` of them, each at most `bounds.argBytes` bytes without a NUL.
 *
 * @since 0.2.0
 */
export const Argv = Schema.Array(
  Schema.String.pipe(
    Schema.filter((arg) => !arg.includes("\u0000") && Utf8.byteLength(arg) <= bounds.argBytes, {
      message: () => `must be a string of at most ${bounds.argBytes} bytes without NUL`
    })
  )
).pipe(
  Schema.maxItems(bounds.args),
  Schema.annotations({ message: () => `must be an array of at most ${bounds.args} arguments` })
)

/**
 * Named keys: at most `bounds.keys` of them, each at most `bounds.keyLength` characters.
 *
 * @since 0.2.0
 */
export const KeyNames = Schema.Array(
  Schema.String.pipe(
    Schema.maxLength(bounds.keyLength),
    Schema.annotations({ message: () => `must be a key name (a string of at most ${bounds.keyLength} characters)` })
  )
).pipe(
  Schema.maxItems(bounds.keys),
  Schema.annotations({ message: () => `must be an array of at most ${bounds.keys} key names` })
)

/**
 * A count of transcript lines (`offset`, `count`): an integer from 0.
 *
 * @since 0.2.0
 */
export const LineCount = integerBetween(0, bounds.lines)

/**
 * The size of `text` in UTF-8 bytes, as the input bound (`maxInputBytes`) counts it.
 *
 * @since 0.2.0
 */
export const inputBytes = Utf8.byteLength
