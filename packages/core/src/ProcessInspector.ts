/**
 * What the operating system knows about a session's processes: the terminal's foreground process group,
 * whether it is blocked reading this terminal (the `stdin_read` readiness tier), and the process tree
 * (for signals and teardown). A Tag so the readiness engine can be tested against scripted facts.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Listener, ProcessActivity } from "./internal/send/activity.js"

export type {
  /** @since 0.4.0 */
  Listener,
  /** @since 0.4.0 */
  ProcessActivity
}

/**
 * The terminal a session owns: the pid of the program on it (the shell) and the identity of its pty
 * slave, so a wait on any fd that is *this terminal* can be recognised.
 *
 * @since 0.1.0
 */
export interface TerminalRef {
  readonly shellPid: number
  /** The pty slave path, e.g. `/dev/pts/3`, when known. */
  readonly ttyPath: string | undefined
}

/**
 * One process as the kernel reports it.
 *
 * @since 0.1.0
 */
export interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  readonly sid: number
  /** The controlling terminal's device number (`tty_nr`), 0 for none. */
  readonly ttyNr: number
  /** Start time since boot in clock ticks: with the pid, the process's identity (pids are reused). */
  readonly startTime: number
  /** One-letter state (`R`, `S`, `D`, `Z`, `T`…). */
  readonly state: string
  readonly comm: string
}

/**
 * A look at the terminal's foreground group at one instant.
 *
 * @since 0.1.0
 */
export interface GroupSnapshot {
  readonly _tag: "Snapshot"
  /** The foreground process group of the terminal. */
  readonly pgid: number
  /** Its live (non-zombie) member pids. */
  readonly members: ReadonlyArray<number>
  /** Some thread of the group is blocked in a read/select/poll/epoll that includes this terminal. */
  readonly waitingOnTerminal: boolean
  /** Sum of the members' read syscalls (`syscr` in `/proc/<pid>/io`); undefined when unreadable. */
  readonly readCalls: number | undefined
  /**
   * Sum of the bytes the members have read (`rchar` in `/proc/<pid>/io`); undefined when unreadable (or
   * not provided). With it, a wait counts only once the group has read at least what was written.
   */
  readonly readBytes?: number | undefined
}

/**
 * The probe could not tell (unreadable `/proc`, a vanished pid, an unknown syscall): never a guess.
 *
 * @since 0.1.0
 */
export interface ProbeMiss {
  readonly _tag: "Miss"
  readonly reason: string
}

/**
 * The outcome of one probe.
 *
 * @since 0.1.0
 */
export type Probe = GroupSnapshot | ProbeMiss

/**
 * The terminal's line discipline as its programs set it (termios): whether the kernel echoes input, and
 * whether it collects lines (canonical mode). Echo off is a password or PIN prompt (`read -s`, `read -s -n`,
 * getpass, ssh-keygen), or a program that echoes for itself (the shell's line editor, a REPL, an editor).
 *
 * @since 0.2.0
 */
export interface TerminalModes {
  readonly echo: boolean
  readonly canonical: boolean
}

/**
 * Whether what is typed now is a secret: the terminal has echo off — in canonical mode (`read -s`, `getpass`,
 * `ssh-keygen`, `sudo -S`) or not (`read -s -n 8`: a PIN read a key at a time) — or its modes cannot be read
 * (then nothing typed is taken as visible). One exception: at the shell's own prompt (`atShellPrompt`, from
 * its integration's markers) the line editor turns echo and canonical mode off to echo the line itself, so
 * what is typed there is on the screen and not a secret. Any other program with echo off (a REPL, an editor)
 * is typed into as a secret: what it shows is recorded, what was typed only as its length.
 *
 * @since 0.2.0
 */
export const isSecretInput = (modes: Option.Option<TerminalModes>, atShellPrompt = false): boolean =>
  Option.match(modes, { onNone: () => true, onSome: (known) => !known.echo && (known.canonical || !atShellPrompt) })

/**
 * @since 0.1.0
 */
export class ProcessInspector extends Context.Tag("@agent-terminal/core/ProcessInspector")<
  ProcessInspector,
  {
    /** Whether `probe` can report terminal waits here (the exact `stdin_read` tier). */
    readonly exact: boolean
    /** The terminal's foreground process group, if it can be resolved. */
    readonly foregroundGroup: (terminal: TerminalRef) => Effect.Effect<Option.Option<number>>
    /** The foreground group and whether it waits for this terminal. */
    readonly probe: (terminal: TerminalRef) => Effect.Effect<Probe>
    /** `rootPid` and all its descendants, each with its identity (pid + start time). */
    readonly processTree: (rootPid: number) => Effect.Effect<ReadonlyArray<ProcessInfo>>
    /** A process's current working directory, where the platform can tell (optional). */
    readonly cwd?: ((pid: number) => Effect.Effect<Option.Option<string>>) | undefined
    /**
     * Forget what the inspector keeps open for this terminal (optional): the service calls it once the
     * session has ended.
     */
    readonly release?: ((terminal: TerminalRef) => Effect.Effect<void>) | undefined
    /** The terminal's termios modes now, where the platform can read them (optional). */
    readonly terminalModes?: ((terminal: TerminalRef) => Effect.Effect<Option.Option<TerminalModes>>) | undefined
    /**
     * What the terminal's foreground program is doing (optional): of its foreground group, the process doing
     * the work (on a CPU; else the newest one not merely waiting for a child) and its state.
     */
    readonly activity?: ((terminal: TerminalRef) => Effect.Effect<Option.Option<ProcessActivity>>) | undefined
    /**
     * The sockets `rootPid` and its descendants listen on (optional; Linux reads each process's descriptors
     * and the `/proc/<pid>/net` tables of its network namespace, so a sandboxed server is seen too).
     */
    readonly listening?: ((rootPid: number) => Effect.Effect<ReadonlyArray<Listener>>) | undefined
  }
>() {}

/**
 * An inspector that knows nothing: readiness falls back to prompts, silence and timeouts.
 *
 * @since 0.1.0
 */
export const layerNoop: Layer.Layer<ProcessInspector> = Layer.succeed(
  ProcessInspector,
  ProcessInspector.of({
    exact: false,
    foregroundGroup: () => Effect.succeed(Option.none()),
    probe: () => Effect.succeed({ _tag: "Miss", reason: "no process inspector" }),
    processTree: () => Effect.succeed([])
  })
)

/**
 * Scripted facts, for unit tests of the readiness engine: each `probe` call takes the next scripted
 * result (the last one repeats). A fact may be a function of the terminal asked about, read at each call
 * (a test changes what it returns as its scenario goes on); `foregroundGroup` absent: none resolvable.
 *
 * @since 0.1.0
 */
export const layerTest = (script: {
  readonly foregroundGroup?: number | ((terminal: TerminalRef) => number | undefined)
  readonly probes: ReadonlyArray<Probe | ((terminal: TerminalRef) => Probe)>
  readonly tree?: ReadonlyArray<ProcessInfo>
  readonly modes?: () => TerminalModes | undefined
  /** What the foreground program is doing, read at each call. */
  readonly activity?: (terminal: TerminalRef) => ProcessActivity | undefined
  /** The sockets a tree listens on, read at each call. */
  readonly listening?: (rootPid: number) => ReadonlyArray<Listener>
}): Layer.Layer<ProcessInspector> =>
  Layer.sync(ProcessInspector, () => {
    let index = 0
    const next = (terminal: TerminalRef): Probe => {
      const probe = script.probes[Math.min(index, script.probes.length - 1)] ?? { _tag: "Miss", reason: "empty script" }
      index++
      return typeof probe === "function" ? probe(terminal) : probe
    }
    const { foregroundGroup } = script
    return ProcessInspector.of({
      exact: true,
      foregroundGroup: (terminal) =>
        Effect.sync(() =>
          Option.fromNullable(typeof foregroundGroup === "function" ? foregroundGroup(terminal) : foregroundGroup)
        ),
      probe: (terminal) => Effect.sync(() => next(terminal)),
      processTree: () => Effect.succeed(script.tree ?? []),
      ...(script.modes !== undefined
        ? { terminalModes: () => Effect.sync(() => Option.fromNullable(script.modes!())) }
        : {}),
      ...(script.activity !== undefined
        ? { activity: (terminal) => Effect.sync(() => Option.fromNullable(script.activity!(terminal))) }
        : {}),
      ...(script.listening !== undefined ? { listening: (pid) => Effect.sync(() => script.listening!(pid)) } : {})
    })
  })
