/**
 * Where a signal for a session goes: the terminal's foreground process group, resolved now — never a guessed
 * pid, and never the shell itself for `SIGKILL` (closing the session is how a shell ends). Shared by
 * `PtyService.signal` and a send of a `signal` (which waits for readiness after it).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SignalRefused } from "../../Errors.js"
import type { SignalName } from "../../Session.js"
import type { Deps } from "./registry.js"
import type { SessionRuntime } from "./runtime.js"

/** The process group a signal for the session goes to now, or why it cannot go anywhere. */
export const signalTarget = (
  deps: Deps,
  runtime: SessionRuntime,
  name: SignalName
): Effect.Effect<number, SignalRefused> =>
  Effect.flatMap(deps.inspector.foregroundGroup(runtime.terminal), (group) => {
    if (Option.isNone(group)) {
      return Effect.fail(
        new SignalRefused({
          sessionId: runtime.id,
          signal: name,
          reason: "the terminal's foreground process group cannot be resolved here; no pid is guessed"
        })
      )
    }
    if (name === "SIGKILL" && group.value === runtime.process.pid) {
      return Effect.fail(
        new SignalRefused({
          sessionId: runtime.id,
          signal: name,
          reason: "SIGKILL would kill the session's shell itself; close the session instead"
        })
      )
    }
    return Effect.succeed(group.value)
  })
