/**
 * The Linux `ProcessInspector`: reads `/proc` to find the terminal's foreground group and whether one of its
 * threads is blocked reading this terminal (the exact `stdin_read` readiness tier). Every read is a tiny
 * synchronous procfs read; anything unreadable or undecodable is a `Miss`, never a guess.
 *
 * @since 0.1.0
 */
import { ProcessInspector } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeWith } from "./internal/proc/linuxInspector.js"
import { makeProcFs } from "./internal/proc/procFs.js"
import { archOf } from "./internal/proc/syscalls.js"

/**
 * The inspector of this host's `/proc`, for this process's architecture (x86-64 and arm64 are exact).
 *
 * @since 0.1.0
 */
export const make: Effect.Effect<ProcessInspector.ProcessInspector["Type"]> = Effect.sync(() =>
  makeWith({ procFs: makeProcFs(), arch: archOf(process.arch) })
)

/**
 * The Linux inspector as a layer.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<ProcessInspector.ProcessInspector> = Layer.effect(
  ProcessInspector.ProcessInspector,
  make
)
