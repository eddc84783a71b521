#!/usr/bin/env bash
# Builds one of the test-only Maven projects under tools/ (icebergjava,
# icebergrest) once: its jar and every dependency jar are cached under the
# user cache directory, keyed by the project's pom, settings and sources,
# and later runs reuse them. Prints the folder that holds them (run with
# `java -cp "DIR/*"`). Each project's build.sh calls it:
#
#   tools/javabuild.sh NAME "what it is" "what a cold machine downloads"
set -euo pipefail
name=$1 what=$2 cold=$3
cd "$(dirname "$0")/$name"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/druid-iceberg-sidecar"
key=$( (cat pom.xml settings.xml; find src -type f | LC_ALL=C sort | xargs cat) | sha256sum | cut -c1-16)
out="$cache/$name-$key"
if [ ! -f "$out/$name.jar" ]; then
  mkdir -p "$cache"
  echo "building $what into $out (on a cold machine Maven downloads $cold)" >&2
  start=$(date +%s)
  work=$(mktemp -d "$cache/$name-build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cp -r pom.xml settings.xml src "$work/"
  mvn -q -B -s settings.xml -f "$work/pom.xml" package dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$work/target/lib" >&2
  cp "$work/target/$name-0.jar" "$work/target/lib/$name.jar"
  rm -rf "$out"
  mv "$work/target/lib" "$out" 2>/dev/null || test -f "$out/$name.jar"
  echo "built $what in $(( $(date +%s) - start )) s" >&2
fi
echo "$out"
