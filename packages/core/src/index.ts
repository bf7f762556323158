/**
 * Who wrote what to each terminal, and every change of control (the live view).
 *
 * @since 0.2.0
 */
export * as Audit from "./Audit.js"
/**
 * @since 0.1.0
 */
export * as EnvPolicy from "./EnvPolicy.js"
/**
 * @since 0.1.0
 */
export * as Errors from "./Errors.js"
/**
 * @since 0.1.0
 */
export * as Exec from "./Exec.js"
/**
 * @since 0.1.0
 */
export * as Ids from "./Ids.js"
/**
 * One declaration per operation, and what is derived from it (the service types, their entry checks).
 *
 * @since 0.4.0
 */
export * as Operation from "./Operation.js"
/**
 * People in the loop: every session of every owner, watched, taken over and handed back (the live view).
 *
 * @since 0.2.0
 */
export * as Oversight from "./Oversight.js"
/**
 * @since 0.1.0
 */
export * as ProcessInspector from "./ProcessInspector.js"
/**
 * @since 0.1.0
 */
export * as PtyBackend from "./PtyBackend.js"
/**
 * @since 0.1.0
 */
export * as PtyService from "./PtyService.js"
/**
 * Recordings of terminals as asciicast v2, and where they are kept.
 *
 * @since 0.2.0
 */
export * as Recording from "./Recording.js"
/**
 * An owner-scoped registry of live entries with bounded tombstones and fresh ids.
 *
 * @since 0.2.0
 */
export * as Registry from "./Registry.js"
/**
 * @since 0.1.0
 */
export * as Sandbox from "./Sandbox.js"
/**
 * @since 0.1.0
 */
export * as Session from "./Session.js"
/**
 * @since 0.1.0
 */
export * as ScriptedShell from "./ScriptedShell.js"
/**
 * @since 0.1.0
 */
export * as ShellDialect from "./ShellDialect.js"
/**
 * @since 0.2.0
 */
export * as ShellDialects from "./ShellDialects.js"
/**
 * @since 0.1.0
 */
export * as StdinEvidence from "./StdinEvidence.js"
/**
 * @since 0.1.0
 */
export * as TaskRuntime from "./TaskRuntime.js"
/**
 * @since 0.1.0
 */
export * as TerminalConfig from "./TerminalConfig.js"

/**
 * The defaults of the service's settings, as constants (no Schema loaded).
 *
 * @since 0.4.0
 */
export * as TerminalDefaults from "./TerminalDefaults.js"

/**
 * @since 0.2.0
 */
export * as Validation from "./Validation.js"

/**
 * @since 0.2.0
 */
export * as Watch from "./Watch.js"

/**
 * @since 0.3.0
 */
export * as Placement from "./Placement.js"
/**
 * The operations of `Oversight`, declared once (what the fleet's oversight RPCs are derived from).
 *
 * @since 0.4.0
 */
export * as OversightOperations from "./OversightOperations.js"
