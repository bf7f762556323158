/**
 * The shape every `AGENT_TERMINAL_*` option of the CLI shares: a flag, its environment fallback named in
 * its help, and optional (the settings' own defaults apply when neither is given).
 */
import { Options } from "@effect/cli"
import * as Config from "effect/Config"

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
    Options.optional
  )

/** What an option parses to. */
export type Parsed<O> = O extends Options.Options<infer A> ? A : never
