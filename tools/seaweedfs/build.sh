#!/usr/bin/env bash
# Builds SeaweedFS's `weed` from this wrapper module, once: the binary is
# cached under the user cache directory, keyed by this module's go.sum, and
# later runs reuse it. Prints the binary's path on stdout.
#
#   weed=$(tools/seaweedfs/build.sh)
set -euo pipefail
cd "$(dirname "$0")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/druid-iceberg-sidecar"
key=$(cat go.mod go.sum | sha256sum | cut -c1-16)
bin="$cache/weed-$key"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  echo "building SeaweedFS into $bin (minutes on a fresh machine)" >&2
  start=$(date +%s)
  CGO_ENABLED=0 go build -trimpath -o "$bin.tmp.$$" github.com/seaweedfs/seaweedfs/weed
  mv "$bin.tmp.$$" "$bin"
  echo "built SeaweedFS in $(( $(date +%s) - start )) s" >&2
fi
echo "$bin"
