/**
 * Everything a Node program on this host needs for terminal sessions, wired once: the service over the
 * node-pty backend, the platform's process inspector, the bash dialect and the host environment.
 *
 * @since 0.1.0
 */
import { EnvPolicy, ProcessInspector, PtyService, TerminalConfig } from "@agent-terminal/core"
import * as Layer from "effect/Layer"
import * as BashDialect from "./BashDialect.js"
import * as LinuxInspector from "./LinuxInspector.js"
import * as NodePtyBackend from "./NodePtyBackend.js"

/**
 * The inspector of this platform: `/proc` on Linux; nothing elsewhere (prompts, silence and timeouts).
 *
 * @since 0.1.0
 */
export const inspectorLayer: Layer.Layer<ProcessInspector.ProcessInspector> = process.platform === "linux"
  ? LinuxInspector.layer
  : ProcessInspector.layerNoop

/**
 * The host's environment, with an optional trusted mapping from the embedding application.
 *
 * @since 0.1.0
 */
export const hostEnvironmentLayer = (trusted: Readonly<Record<string, string>> = {}) =>
  EnvPolicy.layer({ host: process.env, trusted, cwd: process.cwd() })

/**
 * `PtyService` and `ProcessInspector` for this host, with validated settings.
 *
 * @since 0.1.0
 */
export const layer = (
  config: TerminalConfig.TerminalConfigInput = {},
  options: { readonly trustedEnv?: Readonly<Record<string, string>> } = {}
) =>
  PtyService.layerConfig(config).pipe(
    Layer.provideMerge(inspectorLayer),
    Layer.provide(Layer.mergeAll(NodePtyBackend.layer, BashDialect.layer, hostEnvironmentLayer(options.trustedEnv)))
  )
