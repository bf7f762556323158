/**
 * What a confined session actually spawns: a `/bin/sh -c` launcher that opens the file descriptors bwrap
 * reads and then execs bwrap, so the pty's child is bwrap itself (its pid namespace's init is its child, the
 * program its grandchild) and everything the launcher starts lives in the session's tree and cgroup.
 *
 * - Always: fd 3 is the seccomp program (`--seccomp 3`), read from a file bwrap closes once loaded.
 * - `--network isolated`: bwrap creates the network namespace (`--unshare-net`) and reports its init's pid on
 *   `--info-fd 4`; a helper started before the exec reads it, waits until bwrap dropped its privileges (the
 *   kernel lets another process enter a namespace only then), connects the namespace to the outside with
 *   `pasta` (or `slirp4netns`), and only then writes one byte to `--block-fd 5`: the program never runs
 *   before its network is up, and never without it (if the tool fails, the helper kills bwrap and its
 *   still-blocked child — which would otherwise wait on the block fd forever — before the program starts, and
 *   says why on the terminal). The helper then waits for the end of `--sync-fd 6`,
 *   which bwrap's monitor and init hold open as long as the sandbox lives, and ends the tool. The three
 *   descriptors are FIFOs in a private directory, removed as soon as everyone has opened them.
 *
 * The helper ignores the terminal's signals (a Ctrl-C to a command session's foreground group must not end
 * the network); if bwrap died meanwhile (the terminal hung up: the server is gone), the child it releases sees
 * its parent gone and exits without running the program (tested); a TERM at teardown ends it and its tool, and the session's cgroup (or the sweep) ends
 * whatever is left.
 */

/** `$0`: the seccomp file; `$@`: bwrap and its arguments. */
export const PLAIN_SCRIPT = "exec 3<\"$0\" && exec \"$@\""

/** The network tool that connects an isolated namespace. */
export interface NetworkTool {
  readonly kind: "pasta" | "slirp4netns"
  readonly path: string
}

/**
 * `$0`: the seccomp file, `$1`: the tool's kind, `$2`: its path, `$3`: `root` when run as uid 0, then bwrap
 * and its arguments. As root, pasta joins the namespace by path and keeps uid 0 (`--runas 0`): dropping to
 * `nobody` would lose the right to enter it. Every port forwarding is off (`-t/-u/-T/-U none`) and the
 * gateway is not mapped to the host (`--no-map-gw`): nothing in the namespace reaches the host's loopback.
 * slirp4netns gets `--disable-host-loopback` for the same reason.
 */
export const ISOLATED_SCRIPT = `f=$0 kind=$1 tool=$2 who=$3
shift 3
d=$(PATH=/usr/bin:/bin mktemp -d "\${TMPDIR:-/tmp}/agent-terminal-net.XXXXXX") || exit 125
if ! PATH=/usr/bin:/bin mkfifo -m 600 "$d/info" "$d/block" "$d/sync" ||
  ! exec 3<"$f" 4<>"$d/info" 5<>"$d/block" 6<>"$d/sync"; then
  PATH=/usr/bin:/bin rm -rf "$d"
  exit 125
fi
(
  PATH=/usr/sbin:/usr/bin:/sbin:/bin
  trap '' HUP INT QUIT TSTP
  exec 7<"$d/info" 8<"$d/sync" 3<&- 4>&- 6>&- >/dev/null
  n=
  stop() { [ -n "$n" ] && { kill "$n" 2>/dev/null; wait "$n" 2>/dev/null; }; n=; }
  fail() {
    echo "agent-terminal: the isolated network did not start: $1" >&2
    [ -s "$d/log" ] && sed 's/^/  /' "$d/log" >&2
    stop
    rm -rf "$d"
    kill -KILL "$pid" $$
    exit 1
  }
  trap 'stop; rm -rf "$d"; exit 0' TERM
  pid=
  while IFS= read -r line <&7; do
    case $line in *'"child-pid"'*) pid=\${line##*: }; pid=\${pid%,}; break ;; esac
  done
  exec 7<&-
  case $pid in ''|*[!0-9]*) rm -rf "$d"; exit 0 ;; esac
  dropped() {
    while read -r key value; do
      [ "$key" = CapPrm: ] && { [ -z "\${value#\${value%%[!0]*}}" ]; return; }
    done <"/proc/$pid/status"
    return 1
  }
  i=0
  until dropped 2>/dev/null; do
    [ -e "/proc/$pid" ] || { rm -rf "$d"; exit 0; }
    i=$((i + 1)); [ "$i" -gt 2000 ] && fail "the sandbox did not finish its setup"
    sleep 0.001
  done
  tries=0
  while :; do
    case $kind in
      pasta)
        if [ "$who" = root ]; then set -- --runas 0 --netns "/proc/$pid/ns/net"; else set -- "$pid"; fi
        "$tool" -f -q --config-net -t none -u none -T none -U none --no-map-gw -P "$d/ready" "$@" \\
          </dev/null >"$d/log" 2>&1 &
        ;;
      *)
        if [ "$who" = root ]; then set -- "$pid" tap0; else set -- --userns-path="/proc/$pid/ns/user" "$pid" tap0; fi
        "$tool" --configure --mtu=65520 --disable-host-loopback --ready-fd 9 --exit-fd 8 "$@" \\
          9>"$d/ready" </dev/null >"$d/log" 2>&1 &
        ;;
    esac
    n=$!
    i=0
    while [ ! -s "$d/ready" ] && kill -0 "$n" 2>/dev/null; do
      i=$((i + 1)); [ "$i" -gt 2000 ] && fail "$kind did not become ready"
      sleep 0.002
    done
    [ -s "$d/ready" ] && break
    wait "$n"; status=$?; n=
    tries=$((tries + 1)); [ "$tries" -ge 20 ] && fail "$kind exited with status $status"
    sleep 0.005
  done
  printf x >&5
  exec 5>&- 2>/dev/null
  rm -rf "$d"
  while read -r _ <&8; do :; done
  stop
) </dev/null &
exec "$@"`

/**
 * The spawn of a confined session: `/bin/sh -c <launcher>` with the seccomp file, the network tool when
 * isolated, then bwrap and its arguments.
 */
export const launch = (options: {
  readonly bwrap: string
  readonly bwrapArgs: ReadonlyArray<string>
  readonly seccompFile: string
  readonly tool?: NetworkTool | undefined
  readonly root: boolean
}): { readonly file: string; readonly args: ReadonlyArray<string> } =>
  options.tool === undefined
    ? { file: "/bin/sh", args: ["-c", PLAIN_SCRIPT, options.seccompFile, options.bwrap, ...options.bwrapArgs] }
    : {
      file: "/bin/sh",
      args: [
        "-c",
        ISOLATED_SCRIPT,
        options.seccompFile,
        options.tool.kind,
        options.tool.path,
        options.root ? "root" : "user",
        options.bwrap,
        ...options.bwrapArgs
      ]
    }
