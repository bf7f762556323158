/**
 * @since 0.1.0
 */
export * as BashDialect from "./BashDialect.js"
/**
 * @since 0.1.0
 */
export * as Bubblewrap from "./Bubblewrap.js"
/**
 * @since 0.2.0
 */
export * as FishDialect from "./FishDialect.js"
/**
 * Recordings (asciicast v2) kept as files under a directory.
 *
 * @since 0.2.0
 */
export * as FileRecordings from "./FileRecordings.js"
/**
 * @since 0.1.0
 */
export * as LinuxInspector from "./LinuxInspector.js"
/**
 * @since 0.1.0
 */
export * as MacInspector from "./MacInspector.js"
/**
 * @since 0.3.0
 */
export * as NodeDialects from "./NodeDialects.js"
/**
 * @since 0.1.0
 */
export * as NodeExec from "./NodeExec.js"
/**
 * @since 0.1.0
 */
export * as NodePtyBackend from "./NodePtyBackend.js"
/**
 * @since 0.1.0
 */
export * as NodeTerminal from "./NodeTerminal.js"
/**
 * @since 0.2.0
 */
export * as PowerShellDialect from "./PowerShellDialect.js"
/**
 * @since 0.2.0
 */
export * as Reaper from "./Reaper.js"
/**
 * @since 0.3.0
 */
export * as SandboxOptions from "./SandboxOptions.js"
/**
 * @since 0.1.0
 */
export * as Signals from "./Signals.js"
/**
 * @since 0.3.0
 */
export * as StateFiles from "./StateFiles.js"
/**
 * @since 0.1.0
 */
export * as Teardown from "./Teardown.js"
/**
 * @since 0.2.0
 */
export * as Doctor from "./Doctor.js"
export * as ZshDialect from "./ZshDialect.js"
