/**
 * The one-shot supervisor (`Exec`) on this host. `child` mode runs argv with pipes through
 * `node:child_process` (no shell, no terminal), `pty` mode runs a shell command on its own
 * pseudo-terminal through the `PtyBackend`; both under the owner's sandbox policy, the shared environment
 * policy, and their own containment (a cgroup per run where cgroup v2 is writable, the identity-fenced
 * sweep otherwise), so a timeout, the watchdog, a kill or the end of the run ends the whole process tree.
 * Each run is a task of kind `"exec"` of the `TaskRuntime`; tasks live in memory and do not survive a
 * restart.
 *
 * @since 0.1.0
 */
import { type Errors, Exec, TerminalConfig } from "@agent-terminal/core"
import * as Layer from "effect/Layer"
import * as service from "./internal/exec/service.js"
import * as Teardown from "./Teardown.js"

/**
 * Build the supervisor in a scope; closing the scope kills every run still going.
 *
 * @since 0.1.0
 */
export const make = service.make

/**
 * What the supervisor runs on: the pty backend (pty mode), the inspector (waiting for input), the sandbox
 * and the environment policy, the task runtime, and `Sandbox.OwnerPolicies` (each owner's sandbox policy, which
 * `PtyService.layer` provides).
 *
 * @since 0.1.0
 */
export type Requirements = service.Requirements

/**
 * The supervisor over whatever containment services are provided (child mode's cgroups and host-exit guard).
 *
 * @since 0.1.0
 */
export const layerWithoutTeardown: Layer.Layer<Exec.Exec, never, Requirements | Teardown.Cgroups | Teardown.HostExit> =
  Layer.scoped(Exec.Exec, make)

/**
 * The supervisor with its own containment: a cgroup per child-mode run where possible (`sweep`: never).
 *
 * @since 0.1.0
 */
export const layer = (
  options: { readonly containment?: "auto" | "sweep" | undefined } = {}
): Layer.Layer<Exec.Exec, never, Requirements> =>
  layerWithoutTeardown.pipe(
    Layer.provide(
      options.containment === "sweep"
        ? Layer.merge(Teardown.layerCgroupsDisabled, Teardown.layerHostExit)
        : Teardown.layer
    )
  )

/**
 * The supervisor with its settings validated from `config` (fails with `InvalidConfig`).
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: TerminalConfig.TerminalConfigInput,
  options: { readonly containment?: "auto" | "sweep" | undefined } = {}
): Layer.Layer<Exec.Exec, Errors.InvalidConfig, Exclude<Requirements, TerminalConfig.TerminalSettings>> =>
  layer(options).pipe(Layer.provide(TerminalConfig.layer(config)))
