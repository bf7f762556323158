/**
 * The shape every `AGENT_TERMINAL_*` option of the CLI shares: a flag, its environment fallback named in
 * its help, and optional (the settings' own defaults apply when neither is given).
 */
import { Options } from "@effect/cli"
import * as Config from "effect/Config"
import * as Option from "effect/Option"

/** An optional integer option with an environment fallback. */
export const integer = (flag: string, env: string, description: string) =>
  Options.integer(flag).pipe(
    Options.withDescription(`${description} Environment: ${env}.`),
    Options.withFallbackConfig(Config.integer(env)),
    Options.optional
  )

/** An optional text option with an environment fallback. */
export const text = (flag: string, env: string, description: string) =>
  Options.text(flag).pipe(
    Options.withDescription(`${description} Environment: ${env}.`),
    Options.withFallbackConfig(Config.string(env)),
    Options.optional,
    // an empty value (AGENT_TERMINAL_SOCKET="") means the default, not the empty path
    Options.map(Option.filter((value) => value !== ""))
  )

/** What an option parses to. */
export type Parsed<O> = O extends Options.Options<infer A> ? A : never
