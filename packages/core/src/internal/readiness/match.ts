/**
 * The `matched` tier: the output since the send began shows what `waitFor` asked for — a text, a regular
 * expression (the watch over the emulator's rows: `OutputWatch`, fed once per row that scrolls off, the
 * screen's rows looked at again on each change), or a screen that stopped changing: woken by output, never
 * polling. Or a process of the session listens on a socket (`listening.ts`: `/proc`, looked at every
 * 100 ms and on output).
 */
import { type Emulator, Matcher, type OutputWatch } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import type { Match, SendRequest, WaitFor } from "../../Session.js"
import { afterPoll, type Timers } from "../clock/wake.js"
import { type InputKind, promptComesNext } from "../send/input.js"
import type { SessionRuntime } from "../session/runtime.js"
import { commandStart } from "../session/shellState.js"
import { awaitListening } from "./listening.js"
import type { Decisive, Watch } from "./settled.js"

/** A match as the result reports it (`null` for a group that took no part). */
export const matchOf = (found: Matcher.Match): Match => ({
  text: found.text,
  ...(found.groups !== undefined ? { groups: found.groups.map((group) => group ?? null) } : {}),
  ...(found.named !== undefined
    ? { named: Object.fromEntries(Object.entries(found.named).map(([key, value]) => [key, value ?? null])) }
    : {})
})

/**
 * Wait until `output` finds its pattern. A match that reaches the end of what arrived (`port (\d+)` with
 * only `port 80` in yet) is looked at again once output pauses for an event-loop turn, and taken then, so it
 * is not cut short.
 */
export const awaitMatch = (session: SessionRuntime, output: OutputWatch.OutputWatch): Effect.Effect<Match> =>
  Effect.gen(function*() {
    const { activity } = session
    // the version after which output paused for a turn: a match at the end, found then, is taken
    let quiet = -1
    while (true) {
      const changed = activity.version
      const found = output.check()
      if (found !== undefined) {
        if (!found.atEnd || changed === quiet) return matchOf(found)
        // looked at again only once output pauses, not on each piece of a stream (one regex run, not one per chunk)
        do {
          quiet = activity.version
          yield* afterPoll
        } while (activity.version !== quiet)
        continue
      }
      yield* activity.change(changed)
    }
  })

/** What the screen shows now, as one string (rows and cursor). */
const screenSignature = (emulator: Emulator.Emulator): string => {
  const screen = emulator.screen()
  return `${screen.cursor.row},${screen.cursor.col}\n${screen.rows.join("\n")}`
}

/**
 * Wait until the screen has not changed for `ms`, counted from its first change after `from` (the write;
 * for a shell's command line, its command-start marker after `baseline`), so a program that is slow to
 * start is not taken as drawn.
 */
export const awaitStableScreen = (
  session: SessionRuntime,
  timers: Timers,
  ms: number,
  hold: { readonly baseline: number } | undefined
): Effect.Effect<Match> =>
  Effect.gen(function*() {
    const { activity, emulator } = session
    while (hold !== undefined && commandStart(session.shell.since(hold.baseline)) === undefined) {
      yield* activity.change(activity.version)
    }
    let seen = screenSignature(emulator)
    let changedAt: number | undefined
    while (true) {
      const version = activity.version
      const now = screenSignature(emulator)
      if (now !== seen) {
        seen = now
        changedAt = timers.now()
      }
      if (changedAt !== undefined && timers.now() - changedAt >= ms) return { text: "" }
      yield* changedAt === undefined
        ? activity.change(version)
        : activity.changeOrSleep(version, ms - (timers.now() - changedAt))
    }
  })

/** The `matched` tier of a send's race, or `undefined` when the send waits for nothing in particular. */
export const matchTier = (watch: Watch, waitFor: WaitFor): Effect.Effect<Decisive> | undefined => {
  const { session } = watch
  const settled = (match: Match): Decisive => ({ _tag: "Matched", end: session.emulator.cursor(), match })
  if (watch.output !== undefined) return Effect.map(awaitMatch(session, watch.output), settled)
  if (waitFor.screenStableMs !== undefined) {
    const hold = watch.output === undefined && holdsForCommandStart(watch) ? { baseline: watch.baseline } : undefined
    return Effect.map(awaitStableScreen(session, watch.timers, waitFor.screenStableMs, hold), settled)
  }
  if (waitFor.listening !== undefined) {
    const pause = (ms: number) => session.activity.changeOrSleep(session.activity.version, ms)
    return Effect.map(
      awaitListening(
        watch.inspector,
        session.terminal.shellPid,
        waitFor.listening,
        watch.listenersBefore ?? new Set(),
        pause
      ),
      settled
    )
  }
  return undefined
}

/** Input that a shell at its prompt takes as a command line: its output begins at the command-start marker. */
export const holdsForCommandStart = (watch: Pick<Watch, "session" | "kind">): boolean =>
  watch.session.nonce !== undefined && promptComesNext(watch.kind)

/** What a `text` or `regex` wait looks for. */
export const patternOf = (waitFor: WaitFor) =>
  Matcher.pattern(
    waitFor.text !== undefined ? { text: waitFor.text } : { regex: waitFor.regex!, flags: waitFor.flags }
  )

/**
 * The watch of a `text` or `regex` wait, opened at `start` (where the send's capture opens): held until the
 * command-start marker for a shell's command line (the first after marker `baseline`: by default, now,
 * just before the write), otherwise leaving out the echo of the typed line.
 */
export const openWatch = (
  session: SessionRuntime,
  start: Emulator.Position,
  kind: InputKind,
  request: Pick<SendRequest, "text" | "paste" | "submit" | "waitFor">,
  baseline: number = session.shell.seq
): OutputWatch.OutputWatch | undefined => {
  const waitFor = request.waitFor
  if (waitFor === undefined || (waitFor.text === undefined && waitFor.regex === undefined)) return undefined
  const target = patternOf(waitFor)
  const held = holdsForCommandStart({ session, kind })
  const typed = request.text ?? request.paste
  const submitted = request.text !== undefined ? request.submit !== false : request.submit === true
  const echo = !held && typed !== undefined && submitted ? typed.split(/\r?\n|\r/)[0] ?? "" : undefined
  // the output begins at the command-start marker after the write (`baseline`: the marker sequence number then)
  const hold = held ? () => commandStart(session.shell.since(baseline))?.at : undefined
  return session.emulator.watch(start, target, { hold, echo })
}
