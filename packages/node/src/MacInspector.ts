/**
 * The macOS `ProcessInspector`: no `/proc`, so no exact `stdin_read` tier (`exact: false`, every probe a
 * `Miss`); the foreground group and the process tree come from `ps`. Also works wherever a POSIX `ps` with
 * `tpgid` and `lstart` exists (procps on Linux).
 *
 * @since 0.1.0
 */
import { ProcessInspector } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeWith } from "./internal/proc/macInspector.js"
import { runPs } from "./internal/proc/psTable.js"

/**
 * The inspector backed by the system `ps`.
 *
 * @since 0.1.0
 */
export const make: Effect.Effect<ProcessInspector.ProcessInspector["Type"]> = Effect.sync(() => makeWith(runPs))

/**
 * The `ps`-backed inspector as a layer.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<ProcessInspector.ProcessInspector> = Layer.effect(
  ProcessInspector.ProcessInspector,
  make
)
