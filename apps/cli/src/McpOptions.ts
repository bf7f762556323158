/**
 * The options of `agent-terminal mcp` (and the settings and sandbox that `serve`, `console` and `demo` share),
 * each with an `AGENT_TERMINAL_*` environment fallback: declared apart from the commands, which are loaded
 * only when they run (`--help` loads these and nothing of the server).
 */
import { Sandbox, TerminalDefaults } from "@agent-terminal/core"
import { Options } from "@effect/cli"
import * as Config from "effect/Config"
import { integer, type Parsed, text } from "./CliOptions.js"
import * as HttpOptions from "./HttpOptions.js"

/**
 * The settings' defaults, the constants `TerminalConfig`'s Schema fills in: the help states each default where
 * the service sets it, never a second copy (and `--help` loads no Schema for it).
 */
export const defaults = TerminalDefaults.defaults

/** The server's name and version as announced in `initialize`. */
export const serverInfo = { name: "agent-terminal", version: "0.1.0" }

/**
 * The terminal settings (the README's table) a person or an MCP client configuration may change; every one is
 * optional, the defaults are the service's. Shared by `mcp` (both transports) and `console`.
 */
export const settingsOptions = {
  timeoutMs: integer(
    "timeout-ms",
    "AGENT_TERMINAL_TIMEOUT_MS",
    `Default deadline of a send (ms; default ${defaults.timeoutMs}).`
  ),
  idleSilenceMs: integer(
    "idle-silence-ms",
    "AGENT_TERMINAL_IDLE_SILENCE_MS",
    `Silence after which a send returns as inferred_idle (ms; default ${defaults.idleSilenceMs}).`
  ),
  openTimeoutMs: integer(
    "open-timeout-ms",
    "AGENT_TERMINAL_OPEN_TIMEOUT_MS",
    `How long an open waits for the first prompt (ms; default ${defaults.openTimeoutMs}).`
  ),
  disposeGraceMs: integer(
    "dispose-grace-ms",
    "AGENT_TERMINAL_DISPOSE_GRACE_MS",
    `Grace between TERM and KILL at close (ms; default ${defaults.disposeGraceMs}).`
  ),
  maxResultBytes: integer(
    "max-result-bytes",
    "AGENT_TERMINAL_MAX_RESULT_BYTES",
    `Bound of every tool result's text (bytes, at least 64; default ${defaults.maxResultBytes}).`
  ),
  maxInputBytes: integer(
    "max-input-bytes",
    "AGENT_TERMINAL_MAX_INPUT_BYTES",
    "Bound of one input: a send's text or paste, a task's input, an exec command " +
      `(bytes; default ${defaults.maxInputBytes}).`
  ),
  maxReadBytes: integer(
    "max-read-bytes",
    "AGENT_TERMINAL_MAX_READ_BYTES",
    `Bound of a terminal_read page (bytes; default ${defaults.maxReadBytes}).`
  ),
  scrollbackLines: integer(
    "scrollback-lines",
    "AGENT_TERMINAL_SCROLLBACK_LINES",
    `Transcript lines kept per session (default ${defaults.scrollbackLines}).`
  ),
  scrollbackMaxBytes: integer(
    "scrollback-max-bytes",
    "AGENT_TERMINAL_SCROLLBACK_MAX_BYTES",
    `Transcript bytes kept per session (default ${defaults.scrollbackMaxBytes}).`
  ),
  cols: integer("cols", "AGENT_TERMINAL_COLS", `Default terminal width (default ${defaults.cols}).`),
  rows: integer("rows", "AGENT_TERMINAL_ROWS", `Default terminal height (default ${defaults.rows}).`),
  shell: text(
    "shell",
    "AGENT_TERMINAL_SHELL",
    "The shell of shell sessions that name none: bash, zsh, fish or pwsh, or a path to one " +
      `(default ${defaults.shell}).`
  ),
  cwd: text("cwd", "AGENT_TERMINAL_CWD", "Working directory of new sessions (default: the current one)."),
  record: Options.boolean("record").pipe(
    Options.withDescription(
      "Record every session as asciicast v2 under $AGENT_TERMINAL_STATE_DIR/recordings (a session opened with " +
        "record: true is recorded anyway). Environment: AGENT_TERMINAL_RECORD."
    ),
    Options.withFallbackConfig(Config.boolean("AGENT_TERMINAL_RECORD"))
  ),
  recordInput: Options.boolean("record-input").pipe(
    Options.withDescription(
      "Recordings include input events; what a person types with echo off is recorded only as its length. " +
        "Environment: AGENT_TERMINAL_RECORD_INPUT."
    ),
    Options.withFallbackConfig(Config.boolean("AGENT_TERMINAL_RECORD_INPUT"))
  ),
  recordingMaxBytes: integer(
    "recording-max-bytes",
    "AGENT_TERMINAL_RECORDING_MAX_BYTES",
    `A recording stops (and says so) at this size (bytes; default ${defaults.recordingMaxBytes}).`
  ),
  controlIdleMs: integer(
    "control-idle-ms",
    "AGENT_TERMINAL_CONTROL_IDLE_MS",
    "A person's control of a terminal in the live view goes back to the agent after this long without input " +
      `(ms; default ${defaults.controlIdleMs}).`
  ),
  recordingsMaxBytes: integer(
    "recordings-max-bytes",
    "AGENT_TERMINAL_RECORDINGS_MAX_BYTES",
    `All recordings together take at most this much disk (bytes; default ${defaults.recordingsMaxBytes}): ` +
      "the oldest finished " +
      "ones are removed first, checked at start, before each recording and every 10 minutes."
  ),
  recordingsMaxAgeMs: integer(
    "recordings-max-age-ms",
    "AGENT_TERMINAL_RECORDINGS_MAX_AGE_MS",
    "A finished recording is removed once it is this old " +
      `(ms; default ${defaults.recordingsMaxAgeMs}, ${defaults.recordingsMaxAgeMs / 86_400_000} days).`
  ),
  maxTerminalsPerOwner: integer(
    "max-terminals-per-owner",
    "AGENT_TERMINAL_MAX_TERMINALS_PER_OWNER",
    `Open terminals one owner may hold (default ${defaults.maxTerminalsPerOwner}); one more is refused with ` +
      "LimitReached."
  ),
  maxTasksPerOwner: integer(
    "max-tasks-per-owner",
    "AGENT_TERMINAL_MAX_TASKS_PER_OWNER",
    `Live background tasks one owner may hold (default ${defaults.maxTasksPerOwner}); one more is refused ` +
      "with LimitReached."
  ),
  maxTerminals: integer(
    "max-terminals",
    "AGENT_TERMINAL_MAX_TERMINALS",
    `Open terminals of every owner together (default ${defaults.maxTerminals}; its last sixteenth kept for ` +
      "owners who hold none); " +
      "one more is refused with LimitReached naming this cap."
  ),
  maxTasks: integer(
    "max-tasks",
    "AGENT_TERMINAL_MAX_TASKS",
    `Live background tasks of every owner together (default ${defaults.maxTasks}); one more is refused with ` +
      "LimitReached."
  )
}

/** The settings options, as parsed. */
export type SettingsOptions = { readonly [K in keyof typeof settingsOptions]: Parsed<(typeof settingsOptions)[K]> }

/**
 * The sandbox of every session (docs/security.md): `--sandbox <read-only|workspace-write|danger-full-access>`
 * (default danger-full-access), `--workspace <dir>` (default: `--cwd`, else the current directory),
 * `--network <off|isolated|host>` (default off in the confined modes), `--network-tool`, `--deny-read`
 * (repeatable), and the resource limits of each session's cgroup (`--pids-max`, `--memory-max-bytes`).
 * Shared by `mcp`, `demo` and `console`.
 */
export const sandboxOptions = {
  sandbox: Options.choice("sandbox", Sandbox.modes).pipe(
    Options.withDescription(
      "Confine every session with bubblewrap: read-only, workspace-write, or danger-full-access (no sandbox, " +
        "the default). Environment: AGENT_TERMINAL_SANDBOX."
    ),
    Options.withFallbackConfig(Config.literal(...Sandbox.modes)("AGENT_TERMINAL_SANDBOX")),
    Options.optional
  ),
  workspace: text(
    "workspace",
    "AGENT_TERMINAL_WORKSPACE",
    "The sandbox's workspace root: writable in workspace-write, the default and the bound of a session's cwd " +
      "(default: --cwd, else the current directory)."
  ),
  network: Options.choice("network", Sandbox.networkModes).pipe(
    Options.withDescription(
      "The network of sandboxed sessions: off (the default), isolated (own namespace, outbound through pasta " +
        "or slirp4netns, the host's loopback unreachable), or host (the host's network, loopback services " +
        "included). Environment: AGENT_TERMINAL_NETWORK."
    ),
    Options.withFallbackConfig(Config.literal(...Sandbox.networkModes)("AGENT_TERMINAL_NETWORK")),
    Options.optional
  ),
  networkTool: text(
    "network-tool",
    "AGENT_TERMINAL_NETWORK_TOOL",
    "The user-mode network of --network isolated: pasta, slirp4netns, or a path (default: pasta, else slirp4netns)."
  ),
  denyRead: Options.text("deny-read").pipe(
    Options.repeated,
    Options.withDescription(
      "Mask one more path in the confined modes (repeatable; absolute, or ~/… for every home), on top of " +
        "~/.ssh, ~/.aws, ~/.config/gh, ~/.kube, ~/.npmrc and the rest of the default list. Environment: " +
        "AGENT_TERMINAL_DENY_READ (paths separated by ':')."
    )
  ),
  pidsMax: integer(
    "pids-max",
    "AGENT_TERMINAL_PIDS_MAX",
    "At most this many processes and threads per session, where the host delegates cgroup v2's pids " +
      `controller (default ${defaults.pidsMax}; 0: no limit).`
  ),
  memoryMaxBytes: integer(
    "memory-max-bytes",
    "AGENT_TERMINAL_MEMORY_MAX_BYTES",
    "At most this much memory per session, where the host delegates cgroup v2's memory controller " +
      "(default: half the host's memory; 0: no limit)."
  )
}

/** The sandbox options, as parsed. */
export type SandboxOptions = { readonly [K in keyof typeof sandboxOptions]: Parsed<(typeof sandboxOptions)[K]> }

/**
 * What the server exposes (`Deployment`): `--tools terminal,tasks,exec` (an allow-list of tool groups) and
 * `--no-background` (no run_in_background, no exec background), each with an environment fallback.
 */
export const deploymentOptions = {
  tools: text(
    "tools",
    "AGENT_TERMINAL_TOOLS",
    "The tool groups served, comma-separated: terminal (terminal_*), tasks (task_output, task_kill), exec " +
      "(exec, process), or all (the default)."
  ),
  noBackground: Options.boolean("no-background").pipe(
    Options.withDescription(
      "Offer no background work: run_in_background (terminal_send) and background (exec) leave the tools' " +
        "schemas and are refused. Environment: AGENT_TERMINAL_NO_BACKGROUND=1."
    ),
    Options.withFallbackConfig(Config.boolean("AGENT_TERMINAL_NO_BACKGROUND")),
    Options.withDefault(false)
  ),
  progressIntervalMs: integer(
    "progress-interval-ms",
    "AGENT_TERMINAL_PROGRESS_INTERVAL_MS",
    "How often a tool call that asked for progress (a progressToken) reports it while it waits (ms; default 5000)."
  )
}

/** The deployment options, as parsed. */
export type DeploymentOptions = {
  readonly [K in keyof typeof deploymentOptions]: Parsed<(typeof deploymentOptions)[K]>
}

/** Every option of `agent-terminal mcp`. */
export const mcpOptions = {
  ...settingsOptions,
  ...sandboxOptions,
  ...HttpOptions.httpOptions,
  ...deploymentOptions
}

/** The options of `agent-terminal mcp`, as parsed. */
export type McpOptions = SettingsOptions & SandboxOptions & HttpOptions.HttpOptions & DeploymentOptions
