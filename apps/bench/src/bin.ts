#!/usr/bin/env node
/**
 * `pnpm bench` = `pnpm build && node apps/bench/dist/bin.js [--group …] [--quick] [--markdown]`: the benchmark,
 * an app of its own (the published CLI does not carry it). It measures the CLI's bundle, `apps/cli/dist/bin.js`.
 */
import { Command } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as BenchCommand from "./BenchCommand.js"

Command.run(BenchCommand.command, { name: "agent-terminal-bench", version: "0.1.0" })(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
