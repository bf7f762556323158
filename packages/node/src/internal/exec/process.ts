/**
 * What the supervisor of a one-shot run needs from the started program, whichever way it runs (pipes or
 * a pseudo-terminal).
 */
import type { Errors, Exec, PtyBackend } from "@agent-terminal/core"
import type { Matcher, Paging } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type { Activity } from "./deadline.js"
import type { Bounded } from "./text.js"

/** The views of a run's output. */
export interface Transcript {
  /** The whole output so far, bounded. */
  readonly full: () => Bounded
  /** What is new since the previous call, bounded. */
  readonly takeNew: () => Bounded
  /** A page of lines. */
  readonly page: (request: Paging.PageRequest) => Either.Either<Paging.PageResult, Paging.PageError>
  /** Free what the views hold (after the run is forgotten). */
  readonly dispose: () => void
  /**
   * Look for `target` in the output: what came so far (bounded: the whole output's head and tail) and
   * what comes next, scanned once as it arrives; `close` when done.
   */
  readonly watch: (target: Matcher.Pattern) => OutputSearch
}

/** A search of a run's output (`Transcript.watch`). */
export interface OutputSearch {
  readonly check: () => Matcher.Match | undefined
  readonly close: () => void
}

/** A started program under supervision. */
export interface Started {
  readonly mode: Exec.Mode
  readonly pid: number
  readonly transcript: Transcript
  readonly activity: Activity
  /** Completes once the program exited and its output was read (a lingering descendant bounds the wait). */
  readonly ended: Effect.Effect<PtyBackend.ExitStatus>
  /** After `terminate`: wait (bounded) until the last output was read. */
  readonly drained: Effect.Effect<void>
  /** Write input; the number of bytes written. */
  readonly input: (input: Exec.ExecInput) => Effect.Effect<number, Errors.InvalidInput>
  /**
   * Take what the program printed up to now (what is readable already is read first), then no more: the
   * output of a run that is being killed ends where the decision was made, not with what its dying tree
   * prints while it is torn down.
   */
  readonly freeze: Effect.Effect<void>
  /** End the whole process tree (children first); idempotent. Survivors are reported, never thrown. */
  readonly terminate: Effect.Effect<PtyBackend.TeardownReport>
  /** Blocked reading its terminal right now (pty mode on an exact inspector; always false on pipes). */
  readonly waitingForInput: () => boolean
}

/** Exactly one of text, keys or paste — or nothing at all with `submit` or `eof` alone. */
export const inputPayload = (
  input: Exec.ExecInput
):
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "keys"; readonly keys: ReadonlyArray<string> }
  | { readonly _tag: "paste"; readonly text: string }
  | { readonly _tag: "none" }
  | { readonly _tag: "invalid"; readonly reason: string } =>
{
  const given = [input.text, input.keys, input.paste].filter((value) => value !== undefined).length
  if (given > 1) return { _tag: "invalid", reason: "give only one of text, keys or paste" }
  if (input.text !== undefined) return { _tag: "text", text: input.text }
  if (input.paste !== undefined) return { _tag: "paste", text: input.paste }
  if (input.keys !== undefined) {
    return input.keys.length === 0 ? { _tag: "invalid", reason: "keys is empty" } : { _tag: "keys", keys: input.keys }
  }
  return input.submit === true || input.eof === true
    ? { _tag: "none" }
    : { _tag: "invalid", reason: "give text, keys or paste (or submit / eof alone)" }
}

/** A few turns of the event loop (and of the fiber scheduler): output that is readable now has been read after it. */
export const readPending: Effect.Effect<void> = Effect.gen(function*() {
  for (let turn = 0; turn < 3; turn++) {
    yield* Effect.async<void>((resume) => {
      setImmediate(() => resume(Effect.void))
    })
    yield* Effect.yieldNow()
  }
})

/**
 * Wait for `effect` at most `ms`, then go on either way. Made interruptible so that the timeout can end
 * it inside a finalizer too, where the wait would otherwise be uninterruptible and never time out.
 */
export const waitAtMost = (ms: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  effect.pipe(Effect.interruptible, Effect.timeout(ms), Effect.ignore)
