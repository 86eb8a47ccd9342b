#!/usr/bin/env bash
# Where Docker Hub is out of reach (this project's CI hosts), pushes stand-ins for the images E2B's
# template tests build from (ubuntu:22.04, ubuntu:24.04, node:24) to a registry given as
# SANDPIT_DOCKER_HUB_MIRROR to the server. They are NOT those images: each is the root file system
# of Sandpit's own base template (Debian), under Docker Hub's names, so the builds have a shell,
# tar and coreutils to run their steps on. Say so wherever numbers from such a run are reported.
#
#   scripts/e2b-stand-in-images.sh 127.0.0.1:5000 [base template root, default: the newest built]
set -euo pipefail
registry="${1:?registry host:port (plain HTTP, as for SANDPIT_INSECURE_REGISTRIES)}"
root="${2:-$(ls -dt /var/lib/sandpit/images/templates/platform-base/*/rootfs 2>/dev/null | head -1)}"
[ -d "$root" ] || { echo "no base template root found: run ./sandpit up once, or name one" >&2; exit 2; }
work=$(mktemp -d /tmp/e2b-stand-ins.XXXXXX)
trap 'rm -rf "$work"' EXIT
umoci init --layout "$work/layout"
umoci new --image "$work/layout:stand-in"
umoci unpack --image "$work/layout:stand-in" "$work/bundle"
cp -a "$root/." "$work/bundle/rootfs/"
umoci repack --image "$work/layout:stand-in" "$work/bundle"
umoci config --image "$work/layout:stand-in" --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.cmd /bin/bash
for name in library/ubuntu:22.04 library/ubuntu:24.04 library/node:24; do
	skopeo --insecure-policy copy --dest-tls-verify=false "oci:$work/layout:stand-in" "docker://$registry/$name" >/dev/null
	echo "pushed $registry/$name (stand-in: Sandpit's base template root)"
done
