/**
 * The defaults of the service's settings, the values `TerminalConfig`'s Schema fills in for a field not given.
 * A module of constants with no imports, so that a command line can state each default in its help without
 * loading the Schema (and what the Schema's checks load).
 *
 * @since 0.4.0
 */

/**
 * Each setting's default, by the name of its field in `TerminalConfig`.
 *
 * @since 0.4.0
 * @category constants
 */
export const defaults = {
  pollIntervalMs: 50,
  exactProbeAfterMs: 150,
  idleSilenceMs: 3000,
  handoffGraceMs: 500,
  timeoutMs: 30_000,
  openTimeoutMs: 10_000,
  disposeGraceMs: 3000,
  scrollbackLines: 10_000,
  scrollbackMaxBytes: 4 * 1024 * 1024,
  maxReadBytes: 256 * 1024,
  maxResultBytes: 32 * 1024,
  maxInputBytes: 1024 * 1024,
  cols: 160,
  rows: 40,
  idleWhileRunning: false,
  shell: "bash",
  sessionIdPrefix: "s-",
  execTimeoutMs: 1_800_000,
  execNoOutputTimeoutMs: 600_000,
  execYieldMs: 30_000,
  maxTerminalsPerOwner: 32,
  maxTasksPerOwner: 64,
  maxTerminals: 256,
  maxTasks: 1024,
  pidsMax: 4096,
  controlIdleMs: 300_000,
  recordAll: false,
  recordInput: false,
  recordingMaxBytes: 64 * 1024 * 1024,
  recordingsMaxBytes: 1024 * 1024 * 1024,
  recordingsMaxAgeMs: 30 * 24 * 3600 * 1000
} as const
