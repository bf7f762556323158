/**
 * The shells a session can run as its shell, each with its dialect, and the rule that picks one: a
 * dialect's name, or a path whose basename names it (`zsh`, `/usr/bin/zsh`).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { InvalidInput } from "./Errors.js"
import type { Dialect } from "./ShellDialect.js"
import { ShellDialect } from "./ShellDialect.js"

/**
 * A shell resolved to its dialect: the dialect, and the program to start (as it was given: a name looked
 * up on `PATH`, or a path).
 *
 * @since 0.2.0
 */
export interface Resolved {
  readonly dialect: Dialect
  readonly file: string
}

/**
 * The registry of dialects.
 *
 * @since 0.2.0
 */
export class ShellDialects extends Context.Tag("@agent-terminal/core/ShellDialects")<
  ShellDialects,
  {
    readonly dialects: ReadonlyArray<Dialect>
    /** The dialect of `shell` (a name, or a path whose basename names a dialect); `InvalidInput` otherwise. */
    readonly resolve: (shell: string, field?: string) => Either.Either<Resolved, InvalidInput>
  }
>() {}

/**
 * The basename of a shell's program: the last path segment, without a Windows `.exe`.
 *
 * @since 0.2.0
 */
export const basename = (shell: string): string => {
  const last = shell.slice(Math.max(shell.lastIndexOf("/"), shell.lastIndexOf("\\")) + 1)
  return last.toLowerCase().endsWith(".exe") ? last.slice(0, -4) : last
}

/**
 * The names a registry answers to, for messages.
 *
 * @since 0.2.0
 */
export const names = (dialects: ReadonlyArray<Dialect>): ReadonlyArray<string> =>
  dialects.map((dialect) => dialect.name)

/**
 * Resolve `shell` against `dialects`. A shell with no dialect is refused, naming the supported ones and
 * the way to run it anyway: as a `command` session, where only `stdin_read`, silence and the timeout can
 * tell when it is ready.
 *
 * @since 0.2.0
 */
export const resolve = (
  dialects: ReadonlyArray<Dialect>,
  shell: string,
  field = "shell"
): Either.Either<Resolved, InvalidInput> => {
  const name = basename(shell.trim())
  if (name === "") return Either.left(new InvalidInput({ field, reason: "names no shell" }))
  const dialect = dialects.find((candidate) => candidate.name === name || candidate.aliases?.includes(name) === true)
  if (dialect !== undefined) return Either.right({ dialect, file: shell.trim() })
  return Either.left(
    new InvalidInput({
      field,
      reason: `no shell dialect for ${JSON.stringify(shell)} (supported: ${names(dialects).join(", ")}); ` +
        `to run it without prompt integration, open a session of type "command" with argv ` +
        `${JSON.stringify([shell, "-i"])}: its sends then end by stdin_read, silence (inferred_idle) or the ` +
        `timeout, never by prompt, and report no exit codes`
    })
  )
}

/**
 * A registry of `dialects` (the first is not special: the default shell is a setting, `shell`).
 *
 * @since 0.2.0
 */
export const make = (dialects: ReadonlyArray<Dialect>): ShellDialects["Type"] => ({
  dialects,
  resolve: (shell, field) => resolve(dialects, shell, field)
})

/**
 * The registry of `dialects`.
 *
 * @since 0.2.0
 */
export const layer = (dialects: ReadonlyArray<Dialect>): Layer.Layer<ShellDialects> =>
  Layer.succeed(ShellDialects, make(dialects))

/**
 * A registry of the one `ShellDialect` in the context (a service with a single shell).
 *
 * @since 0.2.0
 */
export const layerFromDialect: Layer.Layer<ShellDialects, never, ShellDialect> = Layer.effect(
  ShellDialects,
  Effect.map(ShellDialect, (dialect) => make([dialect]))
)
