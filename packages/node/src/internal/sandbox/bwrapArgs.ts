/**
 * The bubblewrap command line of a confined session: pure, so the exact flags of every mode are unit-tested
 * and documented from one place. What it binds from the host (the masks of the deny-read list, the git
 * metadata made read-only, the name-resolution files under `/run`) is found on the host first
 * (`hostPaths.ts`) and handed in.
 */
import type { Sandbox } from "@agent-terminal/core"

/** A confined mode (everything but `danger-full-access`). */
export type ConfinedMode = Exclude<Sandbox.Mode, "danger-full-access">

/** A path of the deny-read list as found on the host: a directory or a file, masked by an empty one. */
export interface Mask {
  readonly path: string
  readonly kind: "dir" | "file"
}

/**
 * A bind of the workspace's git metadata: `mountpoint` binds the path onto itself writable (so the directory
 * itself cannot be renamed or removed and replaced), `read-only` binds it read-only, `empty-read-only`
 * puts an empty read-only directory where none exists yet (hooks that could otherwise be created).
 */
export interface GitBind {
  readonly path: string
  readonly kind: "mountpoint" | "read-only" | "empty-read-only"
}

/** Where the launcher hands bwrap its file descriptors (see `launcher.ts`). */
export const fds = { seccomp: 3, info: 4, block: 5, sync: 6 } as const

/** Everything the command line depends on. */
export interface Spec {
  readonly mode: ConfinedMode
  readonly network: Sandbox.NetworkMode
  /** The server runs as uid 0 (bwrap then makes no user namespace). */
  readonly asRoot: boolean
  readonly workspace: string
  readonly cwd: string
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly masks?: ReadonlyArray<Mask> | undefined
  readonly git?: ReadonlyArray<GitBind> | undefined
  /** Files under `/run` that name resolution reads (the target of an `/etc/resolv.conf` symlink). */
  readonly nameResolution?: ReadonlyArray<string> | undefined
  /** An empty regular file to mask files with (`/dev/null` would not open: bwrap binds with `nodev`). */
  readonly emptyFile: string
}

/**
 * Namespaces, capabilities and the process model, common to every confined mode:
 *
 * - `--unshare-pid`: a pid namespace; its init is bwrap's child, and killing it ends every process inside.
 * - `--die-with-parent`: the sandbox dies with the process that launched it (the host).
 * - `--unshare-ipc`, `--unshare-uts`, `--unshare-cgroup-try`: no SysV IPC or POSIX message queues shared
 *   with the host, a hostname of its own, and its own view of the cgroup tree.
 * - `--unshare-net` unless the network is the host's: in `isolated` the launcher connects the new namespace
 *   to the outside (pasta or slirp4netns).
 * - `--cap-drop ALL`: run as root, bwrap would otherwise keep every capability inside (root could remount
 *   `/` read-write); unprivileged it has none anyway.
 * - `isolated` as an unprivileged user: `--unshare-user --uid 0 --gid 0`. bwrap otherwise maps the user to 0
 *   for its own setup (mounting the devpts) and then moves into a second, nested user namespace with the
 *   user's uid — leaving the network namespace owned by the first one, which nothing outside can name, so
 *   no network tool could enter it. With uid 0 asked for, there is one user namespace; the shell runs as its
 *   root (the user's own uid outside, no capabilities).
 * - no `--new-session`: the sandboxed shell keeps the session's terminal as its controlling tty, so job
 *   control works and Ctrl-C reaches only the foreground job, not the whole sandbox (the seccomp filter
 *   stops TIOCSTI, the risk `--new-session` exists for).
 */
export const processArgs = (network: Sandbox.NetworkMode, asRoot: boolean): ReadonlyArray<string> => [
  ...(network === "isolated" && !asRoot ? ["--unshare-user", "--uid", "0", "--gid", "0"] : []),
  "--die-with-parent",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-cgroup-try",
  ...(network === "host" ? [] : ["--unshare-net"]),
  "--cap-drop",
  "ALL"
]

/** The file descriptors bwrap reads from the launcher: the seccomp program, and the network hand-off. */
export const launcherFdArgs = (network: Sandbox.NetworkMode): ReadonlyArray<string> => [
  "--seccomp",
  String(fds.seccomp),
  ...(network === "isolated"
    ? ["--info-fd", String(fds.info), "--block-fd", String(fds.block), "--sync-fd", String(fds.sync)]
    : [])
]

/**
 * Directories a confined session gets a private, empty copy of, in every network mode: `/tmp` and
 * `/var/tmp` (the host's temporary files and the sockets in them — a tmux server, an X display), `/run`
 * (the host's service sockets: systemd, D-Bus, Docker, databases; a read-only bind would not stop
 * `connect()`).
 */
export const hiddenDirs: ReadonlyArray<string> = ["/tmp", "/var/tmp", "/run"]

/** Parts of `/proc` bound read-only over the namespace's own: bwrap run as root leaves them writable. */
export const procReadOnly: ReadonlyArray<string> = [
  "/proc/sys",
  "/proc/sysrq-trigger",
  "/proc/irq",
  "/proc/bus",
  "/proc/fs"
]

const gitArgs = (bind: GitBind): ReadonlyArray<string> => {
  switch (bind.kind) {
    case "mountpoint":
      return ["--bind", bind.path, bind.path]
    case "read-only":
      return ["--ro-bind", bind.path, bind.path]
    case "empty-read-only":
      return ["--tmpfs", bind.path, "--remount-ro", bind.path]
  }
}

const maskArgs = (emptyFile: string) => (mask: Mask): ReadonlyArray<string> =>
  mask.kind === "dir"
    ? ["--tmpfs", mask.path, "--remount-ro", mask.path]
    : ["--ro-bind", emptyFile, mask.path]

/**
 * The filesystem of a mode, in bwrap's order (a later mount covers an earlier one):
 *
 * 1. the host's root, read-only;
 * 2. a private `/dev` (`null`, `zero`, `random`, `tty`, the session's terminal as `/dev/console`, a new devpts)
 *    and the namespace's own `/proc`, with `procReadOnly` bound read-only (root needs no capability to write a
 *    sysctl);
 * 3. the private `hiddenDirs`, then the name-resolution files under `/run`, read-only;
 * 4. the workspace: read-write in `workspace-write`; in `read-only` bound again only when it lies under a
 *    hidden directory;
 * 5. in `workspace-write`, the git metadata: `.git` a mount point, its `config` and `hooks` read-only;
 * 6. the masks of the deny-read list: an empty read-only directory or an empty file over each;
 * 7. in `read-only`, the private directories made read-only too (device nodes still work), so every write
 *    fails.
 */
export const filesystemArgs = (spec: Spec): ReadonlyArray<string> => {
  const underHidden = hiddenDirs.some((dir) => isWithin(dir, spec.workspace))
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    ...procReadOnly.flatMap((dir) => ["--ro-bind-try", dir, dir]),
    ...hiddenDirs.flatMap((dir) => ["--tmpfs", dir]),
    ...(spec.nameResolution ?? []).flatMap((file) => ["--ro-bind-try", file, file]),
    ...(spec.mode === "workspace-write"
      ? ["--bind", spec.workspace, spec.workspace]
      : underHidden
      ? ["--ro-bind", spec.workspace, spec.workspace]
      : []),
    ...(spec.mode === "workspace-write" ? (spec.git ?? []).flatMap(gitArgs) : []),
    ...(spec.masks ?? []).flatMap(maskArgs(spec.emptyFile)),
    ...(spec.mode === "read-only" ? ["/dev", ...hiddenDirs].flatMap((dir) => ["--remount-ro", dir]) : [])
  ]
}

/** The whole argv after `bwrap`: flags, the launcher's descriptors, the working directory, `--`, the program. */
export const bwrapArgs = (spec: Spec): ReadonlyArray<string> => [
  ...processArgs(spec.network, spec.asRoot),
  ...filesystemArgs(spec),
  ...launcherFdArgs(spec.network),
  "--chdir",
  spec.cwd,
  "--",
  spec.file,
  ...spec.args
]

/** Whether `candidate` is `root` or below it (both real, absolute paths). */
export const isWithin = (root: string, candidate: string): boolean =>
  candidate === root || candidate.startsWith(root.endsWith("/") ? root : `${root}/`)
