#!/usr/bin/env bash
# Builds Iceberg's REST catalog server (this Maven project), once: the jar
# and every dependency jar are cached under the user cache directory, keyed
# by this folder's pom, settings and sources, and later runs reuse them.
# Prints the folder that holds them (run with `java -cp "DIR/*"`).
#
#   dir=$(tools/icebergrest/build.sh)
#   java -cp "$dir/*" sidecar.icebergrest.Main WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK
set -euo pipefail
cd "$(dirname "$0")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/druid-iceberg-sidecar"
key=$( (cat pom.xml settings.xml; find src -type f | LC_ALL=C sort | xargs cat) | sha256sum | cut -c1-16)
out="$cache/icebergrest-$key"
if [ ! -f "$out/icebergrest.jar" ]; then
  mkdir -p "$cache"
  echo "building Iceberg's REST catalog server into $out (on a cold machine Maven downloads about 70 MB, under a minute)" >&2
  start=$(date +%s)
  work=$(mktemp -d "$cache/icebergrest-build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cp -r pom.xml settings.xml src "$work/"
  mvn -q -B -s settings.xml -f "$work/pom.xml" package dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$work/target/lib" >&2
  cp "$work/target/icebergrest-0.jar" "$work/target/lib/icebergrest.jar"
  rm -rf "$out"
  mv "$work/target/lib" "$out" 2>/dev/null || test -f "$out/icebergrest.jar"
  echo "built Iceberg's REST catalog server in $(( $(date +%s) - start )) s" >&2
fi
echo "$out"
