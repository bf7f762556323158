/**
 * The checks of a one-shot request before anything is spawned: times within bounds, inputs within
 * `maxInputBytes`, a `waitFor` only where it can be told.
 */
import { Errors, type Exec, Session, type TerminalConfig } from "@agent-terminal/core"
import * as Effect from "effect/Effect"

/** A time in milliseconds, from 0 to the bound every request shares. */
export const checkMillis = (field: string, value: number | undefined) =>
  value === undefined || (Number.isSafeInteger(value) && value >= 0 && value <= Session.bounds.maxMillis)
    ? Effect.void
    : Effect.fail(
      new Errors.InvalidInput({
        field,
        reason: `must be an integer number of milliseconds from 0 to ${Session.bounds.maxMillis}`
      })
    )

/** An input (a command, a text, a paste) within `maxInputBytes`. */
export const checkSize = (config: TerminalConfig.TerminalConfig, field: string, value: string | undefined) =>
  value === undefined || (value.length <= config.maxInputBytes && Session.inputBytes(value) <= config.maxInputBytes)
    ? Effect.void
    : Effect.fail(
      new Errors.InvalidInput({
        field,
        reason: `must be at most ${config.maxInputBytes} bytes (UTF-8; maxInputBytes)`
      })
    )

/** A run's request as `exec` takes it; `canListen`: the platform can tell a listening socket. */
export const checkRequest = Effect.fnUntraced(function*(
  config: TerminalConfig.TerminalConfig,
  canListen: boolean,
  request: Exec.ExecRequest
) {
  yield* checkMillis("timeoutMs", request.timeoutMs)
  yield* checkMillis("noOutputTimeoutMs", request.noOutputTimeoutMs)
  yield* checkMillis("yieldMs", request.yieldMs)
  if (request.waitFor !== undefined && request.background !== true) {
    return yield* new Errors.InvalidInput({
      field: "waitFor",
      reason: "goes with background: true (a foreground run returns at its end or after yieldMs)"
    })
  }
  if (request.waitFor?.listening !== undefined && !canListen) {
    return yield* new Errors.InvalidInput({
      field: "waitFor.listening",
      reason: "cannot be told on this platform (it reads /proc: Linux only); wait for a text or regex instead"
    })
  }
  if (request.spawn._tag === "pty") yield* checkSize(config, "command", request.spawn.command)
  if (request.spawn._tag === "child" && request.spawn.argv.length === 0) {
    return yield* new Errors.InvalidInput({ field: "argv", reason: "is empty" })
  }
  if (request.spawn._tag === "pty" && request.spawn.command.trim() === "") {
    return yield* new Errors.InvalidInput({ field: "command", reason: "is empty" })
  }
})
