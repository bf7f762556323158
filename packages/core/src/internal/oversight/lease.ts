/**
 * A person's control lease on a session: take it (the agent's input refused from then on, what the terminal
 * shows captured), type (the bytes to the pty as they come; counted, audited a line at a time, and — while the
 * terminal has echo off, but for the shell's own line editor — audited and recorded only as their length), and
 * hand it back (by hand, after the idle timeout, or at close): the note for the agent's next result, the
 * pending requests answered.
 */
import { Utf8 } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Audit from "../../Audit.js"
import { HumanInControl, type SessionExited } from "../../Errors.js"
import { holderText, NotInControl } from "../../Oversight.js"
import type { ControlState } from "../../Oversight.js"
import { isSecretInput } from "../../ProcessInspector.js"
import { type HumanNote, humanNoteText } from "../../Session.js"
import type { Deps } from "../session/registry.js"
import { exitedError, type SessionRuntime } from "../session/runtime.js"
import { record } from "./audit.js"
import type { Holding } from "./control.js"

/** Audit a person's input at the latest once this much of it is pending. */
const AUDIT_CHUNK_BYTES = 1024

/** The lease as a person sees it. */
export const stateOf = (deps: Deps, holding: Holding): ControlState => ({
  holder: holding.holder,
  holderId: holding.holderId,
  since: holding.since,
  lastInputAt: holding.lastInputAt,
  idleMs: deps.config.controlIdleMs,
  linesTyped: holding.linesTyped
})

/** The redacted form of input typed with echo off. */
export const redacted = (bytes: number) => `[human typed ${bytes} bytes with echo off]`

const flush = (deps: Deps, runtime: SessionRuntime, holding: Holding) =>
  Effect.suspend(() => {
    const pending = holding.pending
    holding.pending = undefined
    if (pending === undefined) return Effect.void
    return record(
      deps,
      runtime,
      holding.holder,
      "input",
      pending.secret ? redacted(pending.bytes) : Audit.printable(pending.text)
    )
  })

const changed = (deps: Deps) => Effect.sync(() => deps.changes.unsafeOffer(undefined))

/** End the lease (whoever holds it): the note for the agent, the requests answered, the change audited. */
export const release = (deps: Deps, runtime: SessionRuntime, endedBy: HumanNote["endedBy"]) =>
  Effect.suspend((): Effect.Effect<HumanNote | undefined> => {
    const holding = runtime.control.holding
    if (holding === undefined) return Effect.succeed(undefined)
    holding.cancelTimer()
    runtime.control.holding = undefined
    const captured = runtime.emulator.finish(holding.capture)
    const note: HumanNote = {
      holder: holding.holder,
      heldMs: Math.max(0, deps.timers.now() - holding.since),
      linesTyped: holding.linesTyped,
      bytesTyped: holding.bytesTyped,
      echoOffBytes: holding.echoOffBytes,
      endedBy
    }
    runtime.control.note = { note, output: captured.text }
    const requests = [...runtime.control.requests.values()]
    runtime.watchers.recording?.marker(`${endedBy}: ${holding.holder} ${humanNoteText(note)}`)
    // the lease is already gone: what follows (the audit, the waiting requests ended, the list told) runs
    // whole, or an interrupted hand-back would leave every request waiting for a lease that no longer exists
    return flush(deps, runtime, holding).pipe(
      Effect.zipRight(record(deps, runtime, holding.holder, endedBy, humanNoteText(note))),
      Effect.zipRight(Effect.forEach(requests, (request) => Deferred.succeed(request.done, note), { discard: true })),
      Effect.zipRight(changed(deps)),
      Effect.as(note),
      Effect.uninterruptible
    )
  })

/** Arm (or re-arm) the lease's idle timer: it ends the lease after `controlIdleMs` without input. */
const arm = (deps: Deps, runtime: SessionRuntime, holding: Holding): void => {
  holding.cancelTimer()
  const idleMs = deps.config.controlIdleMs
  const remaining = Math.max(0, holding.lastInputAt + idleMs - deps.timers.now())
  holding.cancelTimer = deps.timers.after(remaining, () =>
    deps.runFork(Effect.suspend(() => {
      if (runtime.control.holding !== holding) return Effect.void
      if (deps.timers.now() - holding.lastInputAt < idleMs) {
        arm(deps, runtime, holding)
        return Effect.void
      }
      return release(deps, runtime, "idle-timeout")
    })))
}

/** Take the lease (or renew one's own): `person` is the credential, `name` how they are shown. */
export const take = (deps: Deps, runtime: SessionRuntime, person: string, name?: string) =>
  Effect.suspend((): Effect.Effect<ControlState, SessionExited | HumanInControl> => {
    if (runtime.exit !== undefined) return Effect.fail(exitedError(runtime))
    const current = runtime.control.holding
    if (current !== undefined) {
      if (current.holderId !== person) return Effect.fail(runtime.control.refusal(runtime.id)!)
      current.lastInputAt = deps.timers.now()
      arm(deps, runtime, current)
      return Effect.succeed(stateOf(deps, current))
    }
    const now = deps.timers.now()
    const holding: Holding = {
      holderId: person,
      holder: holderText(person, name),
      since: now,
      lastInputAt: now,
      linesTyped: 0,
      bytesTyped: 0,
      echoOffBytes: 0,
      capture: runtime.emulator.capture(runtime.emulator.cursor(), deps.config.maxResultBytes),
      cancelTimer: () => {},
      pending: undefined
    }
    runtime.control.holding = holding
    // a note not yet reported is replaced: the next one covers the new hold
    runtime.control.note = undefined
    arm(deps, runtime, holding)
    runtime.watchers.recording?.marker(`take: ${holding.holder}`)
    // the lease is already held: its audit and the list's change run whole
    return record(deps, runtime, holding.holder, "take").pipe(
      Effect.zipRight(changed(deps)),
      Effect.as(stateOf(deps, holding)),
      Effect.uninterruptible
    )
  })

/** The holder of the lease, or `NotInControl`. */
export const held = (runtime: SessionRuntime, person: string): Holding | NotInControl => {
  const holding = runtime.control.holding
  return holding !== undefined && holding.holderId === person
    ? holding
    : new NotInControl({ sessionId: runtime.id, person })
}

const countLines = (data: string): number => {
  let lines = 0
  for (let i = 0; i < data.length; i++) if (data.charCodeAt(i) === 13) lines++
  return lines
}

/** A person's keys to the pty: counted, audited and recorded (a secret as its length only). */
export const input = (deps: Deps, runtime: SessionRuntime, person: string, data: string) =>
  Effect.gen(function*() {
    const holding = held(runtime, person)
    if (holding instanceof NotInControl) return yield* holding
    if (runtime.exit !== undefined) return yield* exitedError(runtime)
    const modes = deps.inspector.terminalModes === undefined
      ? Option.none()
      : yield* deps.inspector.terminalModes(runtime.terminal)
    // the shell's state read after the modes (a command's start marker, parsed meanwhile, is counted)
    const secret = isSecretInput(modes, runtime.shell.state === "prompt" || runtime.shell.state === "continuation")
    yield* runtime.process.write(data)
    const bytes = Utf8.byteLength(data)
    holding.bytesTyped += bytes
    holding.linesTyped += countLines(data)
    if (secret) holding.echoOffBytes += bytes
    holding.lastInputAt = deps.timers.now()
    runtime.watchers.recording?.input(data, secret)
    if (holding.pending !== undefined && holding.pending.secret !== secret) yield* flush(deps, runtime, holding)
    const pending = holding.pending ??= { text: "", secret, bytes: 0 }
    pending.text = secret ? "" : pending.text + data
    pending.bytes += bytes
    if (/[\r\n]/.test(data) || pending.bytes >= AUDIT_CHUNK_BYTES) yield* flush(deps, runtime, holding)
  })
