/**
 * `agent-terminal replay FILE`: play an asciicast v2 recording (what the live view records) in this
 * terminal — its output events, timed (`--speed`, pauses capped by `--max-idle-ms`), resizes and markers
 * ignored. What a recorded program printed could act outside the screen once it reaches this terminal (OSC 52
 * sets the clipboard, OSC 0/2 the title, OSC 8 makes links, DCS, queries and window operations): those are
 * left out (`SafeReplay`) and counted on stderr, unless `--raw`, which plays the bytes as recorded and says so.
 */
import { SafeReplay } from "@agent-terminal/terminal"
import { Args, Command, Options } from "@effect/cli"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"

/** The output events of a cast, as `[seconds, text]`; `undefined` when it is not asciicast v2. */
export const outputEvents = (cast: string): ReadonlyArray<readonly [number, string]> | undefined => {
  const lines = cast.split("\n").filter((line) => line.trim() !== "")
  try {
    const header = JSON.parse(lines[0] ?? "")
    if (header?.version !== 2) return undefined
  } catch {
    return undefined
  }
  return lines.slice(1).flatMap((line): Array<readonly [number, string]> => {
    try {
      const event = JSON.parse(line)
      return Array.isArray(event) && event[1] === "o" && typeof event[0] === "number" && typeof event[2] === "string"
        ? [[event[0], event[2]]]
        : []
    } catch {
      return []
    }
  })
}

const play = (file: string, speed: number, maxIdleMs: number, raw: boolean) =>
  Effect.gen(function*() {
    const cast = yield* Effect.try(() => fs.readFileSync(file, "utf8")).pipe(
      Effect.catchAll((error) => Effect.fail(`cannot read ${file}: ${String(error)}`))
    )
    const events = outputEvents(cast)
    if (events === undefined) return yield* Effect.fail(`${file} is not an asciicast v2 recording`)
    if (raw) {
      yield* Console.error(
        "agent-terminal replay: --raw: the recording's bytes as recorded, escapes that act outside the screen " +
          "(clipboard, title, links, queries) included"
      )
    }
    const safe = new SafeReplay.Filter()
    let last = 0
    for (const [at, text] of events) {
      const pause = Math.min(Math.max(0, (at - last) * 1000) / speed, maxIdleMs)
      last = at
      if (pause > 0) yield* Effect.sleep(pause)
      process.stdout.write(raw ? text : safe.push(text))
    }
    if (safe.dropped > 0) {
      yield* Console.error(
        `agent-terminal replay: left out ${safe.dropped} escape sequence${safe.dropped === 1 ? "" : "s"} that act ` +
          "outside the screen (clipboard, title, links, DCS, queries); --raw plays them"
      )
    }
  }).pipe(
    Effect.catchAll((message) =>
      Console.error(`agent-terminal replay: ${message}`).pipe(
        Effect.zipRight(Effect.sync(() => {
          process.exitCode = 1
        }))
      )
    )
  )

/** The command. */
export const command = Command.make(
  "replay",
  {
    file: Args.file({ name: "FILE", exists: "yes" }),
    speed: Options.float("speed").pipe(Options.withDescription("Play this many times faster."), Options.withDefault(1)),
    maxIdleMs: Options.integer("max-idle-ms").pipe(
      Options.withDescription("Cap every pause at this long (ms)."),
      Options.withDefault(2000)
    ),
    raw: Options.boolean("raw").pipe(
      Options.withDescription(
        "Play the bytes as recorded: escapes that set the clipboard or title, make links or query this terminal " +
          "are played too (by default they are left out)."
      )
    )
  },
  ({ file, maxIdleMs, raw, speed }) =>
    speed > 0 ? play(file, speed, maxIdleMs, raw) : Console.error("agent-terminal replay: --speed must be positive")
).pipe(Command.withDescription("Play a recording (asciicast v2, as the live view records) in this terminal."))
