#!/usr/bin/env bash
# Builds the Iceberg Java history writer (this Maven project), once: the jar
# and every dependency jar are cached under the user cache directory, keyed
# by this folder's pom, settings and sources, and later runs reuse them.
# Prints the folder that holds them (run with `java -cp "DIR/*"`).
#
#   dir=$(tools/icebergjava/build.sh)
#   java -cp "$dir/*" sidecar.icebergjava.Main OUT FIRST_SEED COUNT
set -euo pipefail
cd "$(dirname "$0")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/druid-iceberg-sidecar"
key=$( (cat pom.xml settings.xml; find src -type f | LC_ALL=C sort | xargs cat) | sha256sum | cut -c1-16)
out="$cache/icebergjava-$key"
if [ ! -f "$out/icebergjava.jar" ]; then
  mkdir -p "$cache"
  echo "building the Iceberg Java history writer into $out (on a cold machine Maven downloads about 130 MB, under a minute)" >&2
  start=$(date +%s)
  work=$(mktemp -d "$cache/icebergjava-build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cp -r pom.xml settings.xml src "$work/"
  mvn -q -B -s settings.xml -f "$work/pom.xml" package dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$work/target/lib" >&2
  cp "$work/target/icebergjava-0.jar" "$work/target/lib/icebergjava.jar"
  rm -rf "$out"
  mv "$work/target/lib" "$out" 2>/dev/null || test -f "$out/icebergjava.jar"
  echo "built the Iceberg Java history writer in $(( $(date +%s) - start )) s" >&2
fi
echo "$out"
