/**
 * The floor of `--help` for a program on @effect/cli, bundled as ours is: one command with one option, and
 * nothing else. What the CLI library itself costs a `--help`, beside what our options and commands add.
 */
import { Command, Options } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"

const command = Command.make("floor", { quiet: Options.boolean("quiet") }, () => Effect.void)

Command.run(command, { name: "floor", version: "0.0.0" })(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain
)
