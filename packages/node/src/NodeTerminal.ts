/**
 * Everything a Node program on this host needs for terminal sessions, wired once: the service over the
 * node-pty backend, the platform's process inspector, the shell dialects, the host environment and the sandbox
 * (none by default; bubblewrap when configured).
 *
 * @since 0.1.0
 */
import {
  EnvPolicy,
  ProcessInspector,
  PtyService,
  Sandbox,
  type ShellDialect,
  ShellDialects,
  TaskRuntime,
  TerminalConfig
} from "@agent-terminal/core"
import * as Layer from "effect/Layer"
import * as Bubblewrap from "./Bubblewrap.js"
import * as LinuxInspector from "./LinuxInspector.js"
import * as NodeDialects from "./NodeDialects.js"
import * as NodeExec from "./NodeExec.js"
import * as NodePtyBackend from "./NodePtyBackend.js"
import * as Reaper from "./Reaper.js"

/**
 * The inspector of this platform: `/proc` on Linux; nothing elsewhere (prompts, silence and timeouts).
 *
 * @since 0.1.0
 */
export const inspectorLayer: Layer.Layer<ProcessInspector.ProcessInspector> = process.platform === "linux"
  ? LinuxInspector.layer
  : ProcessInspector.layerNoop

/**
 * The shells a session can run as its shell (`NodeDialects.dialects`).
 *
 * @since 0.2.0
 */
export const dialects: ReadonlyArray<ShellDialect.Dialect> = NodeDialects.dialects

/**
 * The registry of `dialects`.
 *
 * @since 0.2.0
 */
export const dialectsLayer: Layer.Layer<ShellDialects.ShellDialects> = NodeDialects.dialectsLayer

/**
 * The host's environment (this process's, unless another is given), with an optional trusted mapping from
 * the embedding application.
 *
 * @since 0.1.0
 */
export const hostEnvironmentLayer = (
  trusted: Readonly<Record<string, string>> = {},
  host: Readonly<Record<string, string | undefined>> = process.env
) => EnvPolicy.layer({ host, trusted, cwd: process.cwd() })

/**
 * The options of the bubblewrap sandbox.
 *
 * @since 0.1.0
 */
export type SandboxOptions = Bubblewrap.Options

/**
 * The sandbox: bubblewrap with `options` as every owner's default policy, or none (`danger-full-access`).
 *
 * @since 0.1.0
 */
export const sandboxLayer = (options?: Bubblewrap.Options) =>
  options === undefined ? Sandbox.layerNone : Bubblewrap.layer(options)

/**
 * How `layer` and `layerFromSettings` wire this host.
 *
 * @since 0.4.0
 */
export interface Options {
  readonly trustedEnv?: Readonly<Record<string, string>>
  /** The host environment sessions start from (default: this process's). */
  readonly hostEnv?: Readonly<Record<string, string | undefined>>
  /** Confine sessions with bubblewrap (default: no sandbox, `danger-full-access`). */
  readonly sandbox?: Bubblewrap.Options
  /** `sweep`: never a cgroup, always the identity-fenced sweep (default `auto`: a cgroup where possible). */
  readonly containment?: "auto" | "sweep"
  /**
   * Start a reaper process that kills every tree this process owns when it dies without running any
   * handler (SIGKILL, the OOM killer): `Reaper.layerHostExit`. Default `false` (the host-exit guard only).
   */
  readonly reaper?: boolean
  /**
   * `false`: leave SIGINT, SIGTERM and SIGHUP to the program, which closes its sessions gracefully itself
   * (the daemon does); trees are still killed at `exit` and, with `reaper`, when the process dies. Default `true`.
   */
  readonly killOnSignals?: boolean
}

/**
 * `PtyService`, `Exec` (one-shot runs), `ProcessInspector` and `TaskRuntime` for this host, over the settings
 * in context (`TerminalConfig.TerminalSettings`, validated once by whoever provides them): the service, the
 * task runtime and the exec supervisor all read that one value.
 *
 * @since 0.4.0
 */
export const layerFromSettings = (options: Options = {}) => {
  const host = Layer.mergeAll(
    dialectsLayer,
    hostEnvironmentLayer(options.trustedEnv, options.hostEnv),
    sandboxLayer(options.sandbox)
  )
  return options.reaper === true
    ? NodeExec.layerWithoutTeardown.pipe(
      Layer.provideMerge(PtyService.layer),
      Layer.provideMerge(inspectorLayer),
      Layer.provideMerge(TaskRuntime.layerFromSettings),
      Layer.provide(Layer.merge(NodePtyBackend.layerWithoutTeardown, host)),
      Layer.provide(Reaper.layerTeardown(options.containment ?? "auto", { signals: options.killOnSignals }))
    )
    : NodeExec.layer({ containment: options.containment }).pipe(
      Layer.provideMerge(PtyService.layer),
      Layer.provideMerge(inspectorLayer),
      Layer.provideMerge(TaskRuntime.layerFromSettings),
      Layer.provide(Layer.merge(
        options.containment === "sweep" ? NodePtyBackend.layerSweep : NodePtyBackend.layer,
        host
      ))
    )
}

/**
 * `PtyService`, `Exec` (one-shot runs), `ProcessInspector` and `TaskRuntime` for this host, with the settings
 * of `config` decoded and checked once (an invalid one fails the layer with `InvalidConfig` naming the field).
 *
 * @since 0.1.0
 */
export const layer = (config: TerminalConfig.TerminalConfigInput = {}, options: Options = {}) =>
  layerFromSettings(options).pipe(Layer.provide(TerminalConfig.layer(config)))
