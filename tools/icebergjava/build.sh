#!/usr/bin/env bash
# Builds the Iceberg Java history writer (this Maven project) once, cached
# (tools/javabuild.sh), and prints the folder of its jars.
#
#   dir=$(tools/icebergjava/build.sh)
#   java -cp "$dir/*" sidecar.icebergjava.Main OUT FIRST_SEED COUNT
exec "$(dirname "$0")/../javabuild.sh" icebergjava "the Iceberg Java history writer" "about 130 MB, under a minute"
