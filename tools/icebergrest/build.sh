#!/usr/bin/env bash
# Builds Iceberg's REST catalog server (this Maven project) once, cached
# (tools/javabuild.sh), and prints the folder of its jars.
#
#   dir=$(tools/icebergrest/build.sh)
#   java -cp "$dir/*" sidecar.icebergrest.Main WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK
exec "$(dirname "$0")/../javabuild.sh" icebergrest "Iceberg's REST catalog server" "about 90 MB, under a minute"
