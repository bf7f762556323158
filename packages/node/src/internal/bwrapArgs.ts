/**
 * The bubblewrap command line of a confined session: pure, so the exact flags of every mode are unit-tested
 * and documented from one place.
 */
import type { Sandbox } from "@agent-terminal/core"

/** A confined mode (everything but `danger-full-access`). */
export type ConfinedMode = Exclude<Sandbox.Mode, "danger-full-access">

/**
 * Namespaces, capabilities and the process model, common to every confined mode:
 *
 * - `--unshare-pid`: a pid namespace; its init is bwrap's child, and killing it ends every process inside.
 * - `--die-with-parent`: the sandbox dies with the process that launched it (the host).
 * - `--unshare-ipc`: no SysV IPC or POSIX message queues shared with the host.
 * - `--cap-drop ALL`: run as root, bwrap would otherwise keep every capability inside (root could remount
 *   `/` read-write); unprivileged it has none anyway.
 * - no `--new-session`: the sandboxed shell keeps the session's terminal as its controlling tty, so job
 *   control works and Ctrl-C reaches only the foreground job, not the whole sandbox.
 */
export const processArgs = (network: boolean): ReadonlyArray<string> => [
  "--die-with-parent",
  "--unshare-pid",
  "--unshare-ipc",
  ...(network ? [] : ["--unshare-net"]),
  "--cap-drop",
  "ALL"
]

/**
 * Directories a confined session gets a private, empty copy of: `/tmp` always (the host's temporary files
 * and the sockets in it — a tmux server, an X display — stay out of reach), `/run` when the network is off
 * (the host's service sockets: systemd, D-Bus, Docker, databases).
 */
export const hiddenDirs = (network: boolean): ReadonlyArray<string> => network ? ["/tmp"] : ["/tmp", "/run"]

/**
 * The filesystem of a mode, in bwrap's order (a later mount covers an earlier one):
 *
 * 1. the host's root, read-only;
 * 2. a private `/dev` (`null`, `zero`, `random`, `tty`, the session's terminal as `/dev/console`, a new devpts)
 *    and the namespace's own `/proc`, with `/proc/sys` and `/proc/sysrq-trigger` read-only (bwrap run as root
 *    leaves them writable, and root needs no capability to write a sysctl);
 * 3. the private `hiddenDirs`;
 * 4. the workspace: read-write in `workspace-write`; in `read-only` bound again only when it lies under a
 *    hidden directory;
 * 5. in `read-only`, the private directories made read-only too (device nodes still work), so every write
 *    fails.
 */
export const filesystemArgs = (mode: ConfinedMode, network: boolean, workspace: string): ReadonlyArray<string> => {
  const hidden = hiddenDirs(network)
  const underHidden = hidden.some((dir) => isWithin(dir, workspace))
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    ...hidden.flatMap((dir) => ["--tmpfs", dir]),
    ...(mode === "workspace-write"
      ? ["--bind", workspace, workspace]
      : underHidden
      ? ["--ro-bind", workspace, workspace]
      : []),
    ...(mode === "read-only" ? ["/dev", ...hidden].flatMap((dir) => ["--remount-ro", dir]) : [])
  ]
}

/** The whole argv after `bwrap`: flags, the working directory inside, then `--` and the program. */
export const bwrapArgs = (options: {
  readonly mode: ConfinedMode
  readonly network: boolean
  readonly workspace: string
  readonly cwd: string
  readonly file: string
  readonly args: ReadonlyArray<string>
}): ReadonlyArray<string> => [
  ...processArgs(options.network),
  ...filesystemArgs(options.mode, options.network, options.workspace),
  "--chdir",
  options.cwd,
  "--",
  options.file,
  ...options.args
]

/** Whether `candidate` is `root` or below it (both real, absolute paths). */
export const isWithin = (root: string, candidate: string): boolean =>
  candidate === root || candidate.startsWith(root.endsWith("/") ? root : `${root}/`)
