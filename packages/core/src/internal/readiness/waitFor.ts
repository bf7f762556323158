/**
 * What a send waits for besides readiness (`waitFor`) and what it found (`Match`); re-exported by `Session`.
 */
import { Matcher } from "@agent-terminal/terminal"
import * as Schema from "effect/Schema"
import { bounds, integerBetween } from "../bounds.js"
import { Listener } from "../send/activity.js"

/**
 * What a send (or a look at a task) waits for besides readiness: exactly one of `text` (a literal text in the
 * output), `regex` (JavaScript's syntax on a linear-time RE2 engine, with optional `flags` among `i`, `m`, `s`,
 * `u`; refused when it does not compile, needs backtracking — a backreference, a lookaround — or is too
 * large), `screenStableMs` (no change on the screen for that long: a full-screen program has drawn) or
 * `listening` (a process of the session listens on that TCP port, or on any socket with `true`: a server is
 * up, read from `/proc`, no banner needed). The output looked at is what appeared since the send began (for a
 * task: since the previous look), the echo of the typed line left out.
 *
 * @since 0.3.0
 */
export const WaitFor = Schema.Struct({
  text: Schema.optional(Schema.String.pipe(
    Schema.filter((text) => text.length >= 1 && text.length <= Matcher.MAX_PATTERN_CHARS, {
      message: () => `must be a string of 1 to ${Matcher.MAX_PATTERN_CHARS} characters`,
      jsonSchema: { minLength: 1, maxLength: Matcher.MAX_PATTERN_CHARS }
    })
  )),
  regex: Schema.optional(Schema.String.pipe(
    Schema.filter((source) => Matcher.regexProblem(source) === undefined, {
      message: (issue) => Matcher.regexProblem(String(issue.actual)) ?? "must be a regular expression",
      jsonSchema: { minLength: 1, maxLength: Matcher.MAX_PATTERN_CHARS }
    })
  )),
  flags: Schema.optional(Schema.String.pipe(
    Schema.filter((flags) => /^[imsu]{0,4}$/.test(flags) && new Set(flags).size === flags.length, {
      message: () => "must be some of the flags i, m, s, u (each at most once)",
      jsonSchema: { pattern: "^[imsu]{0,4}$" }
    })
  )),
  screenStableMs: Schema.optional(integerBetween(1, bounds.maxMillis, " number of milliseconds")),
  listening: Schema.optional(Schema.Union(Schema.Literal(true), integerBetween(1, 65535)))
}).pipe(
  Schema.filter((condition) => {
    const given = (condition.text !== undefined ? 1 : 0) + (condition.regex !== undefined ? 1 : 0) +
      (condition.screenStableMs !== undefined ? 1 : 0) + (condition.listening !== undefined ? 1 : 0)
    if (given !== 1) return "give exactly one of text, regex, screenStableMs or listening"
    if (condition.flags !== undefined && condition.regex === undefined) return "flags go with regex only"
    if (condition.regex !== undefined && condition.flags !== undefined) {
      return Matcher.regexProblem(condition.regex, condition.flags)
    }
    return undefined
  }, { jsonSchema: {} })
)
/** @since 0.3.0 */
export type WaitFor = typeof WaitFor.Type

/**
 * What `waitFor` found: the matched text (empty for `screenStableMs` and `listening`) and a regex's groups
 * (`null` for one that took no part), numbered from 1 in `groups`, by name in `named`; for `listening`, the
 * process and the socket it listens on.
 *
 * @since 0.3.0
 */
export const Match = Schema.Struct({
  text: Schema.String,
  groups: Schema.optional(Schema.Array(Schema.NullOr(Schema.String))),
  named: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) })),
  listening: Schema.optional(Listener)
})
/** @since 0.3.0 */
export type Match = typeof Match.Type
