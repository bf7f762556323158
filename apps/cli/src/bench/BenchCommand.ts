/**
 * The `bench` subcommand as `--help` shows it: its options and the names of its groups, without the groups
 * themselves (`Bench`, loaded when a run starts).
 */
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"

/** The groups' names, in the order a full run takes them (`Bench.groups`, held to it by a test). */
export const groupNames: ReadonlyArray<string> = [
  "open",
  "roundtrip",
  "repl",
  "probe",
  "ingest",
  "memory",
  "close",
  "concurrency",
  "idle",
  "transcript",
  "contract",
  "waitfor",
  "mcp",
  "sandbox",
  "daemon",
  "live",
  "fleet",
  "lean"
]

/** The `bench` subcommand. */
export const command = Command.make("bench", {
  group: Options.text("group").pipe(
    Options.repeated,
    Options.withDescription(
      `Run only these groups (repeat or comma-separate): ${groupNames.join(", ")}.`
    )
  ),
  quick: Options.boolean("quick").pipe(
    Options.withDescription("Fewer iterations and smaller payloads; every metric still runs.")
  ),
  markdown: Options.boolean("markdown").pipe(Options.withDescription("Print the table as Markdown."))
}, ({ group, markdown, quick }) =>
  Effect.flatMap(
    Effect.promise(() => import("./Bench.js")),
    (Bench) => Bench.run({ groups: group, quick, markdown })
  )).pipe(
    Command.withDescription(
      "Measure speed and memory against the raw node-pty floor and the peers, in one run; writes bench-results.json."
    )
  )
