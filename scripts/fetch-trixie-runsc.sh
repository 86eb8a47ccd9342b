#!/usr/bin/env bash
# Fetches Debian 13 (trixie)'s runsc into DIR (DIR/usr/bin/runsc) without installing it or touching
# the host's apt configuration: a private source list and state under DIR. For bench/runsc-versions.bench.ts.
set -euo pipefail
dir=${1:?usage: scripts/fetch-trixie-runsc.sh DIR}
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' >"$dir/apt/sources.list"
opts=(-o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$dir/apt/lists"
  -o "Dir::Cache=$dir/apt/cache" -o Dir::State::status=/dev/null -o APT::Sandbox::User=root)
apt-get "${opts[@]}" update -qq
(cd "$dir" && apt-get "${opts[@]}" download -qq runsc)
dpkg-deb -x "$dir"/runsc_*.deb "$dir"
"$dir/usr/bin/runsc" --version | head -1
