#!/usr/bin/env bash
# druid.sh start|stop|status|clean: a real Apache Druid on 127.0.0.1, for the
# tests and for trying the sidecar by hand. See README.md beside this file.
#
# start prints, on stdout and nothing else, lines to eval:
#   DRUID_VERSION=… DRUID_ROUTER=… DRUID_BROKER=… DRUID_OVERLORD=… DRUID_COORDINATOR=…
# Progress and errors go to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
pom_version=$(sed -n 's:.*<druid.version>\(.*\)</druid.version>.*:\1:p' "$here/pom.xml")
version=${DRUID_VERSION:-$pom_version}
state=${DRUID_HOME_DIR:-${TMPDIR:-/tmp}/sidecar-druid-$version}
cache=${DRUID_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sidecar-druid}
base=${DRUID_PORT_BASE:-28000}
java=${DRUID_JAVA:-java}

# Druid's own ports (8081, 8082, …) moved up by DRUID_PORT_BASE, away from a
# Druid or ZooKeeper that may already run on their usual ports.
declare -A port=(
  [zookeeper]=$((base + 181)) [derby]=$((base + 527))
  [coordinator]=$((base + 81)) [broker]=$((base + 82)) [historical]=$((base + 83))
  [indexer]=$((base + 91)) [router]=$((base + 888))
)
services=(coordinator broker historical indexer router)

# Heaps near Druid's nano-quickstart sizes (the Indexer, which runs the
# tasks as threads, gets what the nano MiddleManager's peons would have).
declare -A jvm=(
  [zookeeper]="-Xms64m -Xmx128m"
  [coordinator]="-Xms256m -Xmx256m"
  [broker]="-Xms384m -Xmx384m -XX:MaxDirectMemorySize=300m"
  [historical]="-Xms384m -Xmx384m -XX:MaxDirectMemorySize=300m"
  [indexer]="-Xms768m -Xmx768m -XX:MaxDirectMemorySize=400m"
  [router]="-Xms128m -Xmx128m"
)

say() { echo "druid.sh: $*" >&2; }

# classpath builds Druid's classpath with Maven once per pom.xml,
# settings.xml and version, and answers the file that holds it.
classpath() {
  local key file
  key=$( (cat "$here/pom.xml" "$here/settings.xml"; echo "$version") | sha256sum | cut -c1-16)
  file="$cache/classpath-$key.txt"
  if [ -s "$file" ] && tr ':' '\n' <"$file" | while read -r jar; do [ -f "$jar" ] || exit 1; done; then
    echo "$file"; return
  fi
  mkdir -p "$cache"
  say "resolving Druid $version with Maven (once; cached in $file)"
  local t0=$SECONDS
  if ! mvn -B -s "$here/settings.xml" -f "$here/pom.xml" -Ddruid.version="$version" dependency:build-classpath \
      -Dmdep.outputFile="$file.tmp" >"$cache/mvn.log" 2>&1; then
    say "Maven could not resolve Druid; the end of $cache/mvn.log:"
    grep -E 'ERROR|BUILD' "$cache/mvn.log" | head -20 >&2
    return 1
  fi
  mv "$file.tmp" "$file"
  say "resolved in $((SECONDS - t0))s"
  echo "$file"
}

pidfile() { echo "$state/run/$1.pid"; }

# alive answers whether a service's process runs. A process that has exited
# but is not yet reaped (a zombie: in a container whose init does not reap,
# it stays one) does not count.
alive() { # service
  local f stat; f=$(pidfile "$1")
  [ -f "$f" ] || return 1
  stat=$(ps -o stat= -p "$(cat "$f")" 2>/dev/null) || return 1
  [ -n "$stat" ] && [ "${stat#Z}" = "$stat" ]
}

url() { echo "http://127.0.0.1:${port[$1]}"; }

healthy() { # service
  [ "$(curl -s -m 2 "$(url "$1")/status/health" 2>/dev/null)" = true ]
}

fail() { # service message
  say "$1 $2; the end of $state/log/$1.log:"
  tail -n 40 "$state/log/$1.log" >&2 || true
  stop_all
  exit 1
}

write_conf() {
  local c="$state/conf"
  mkdir -p "$c/_common" "$state/var/tmp" "$state/log" "$state/run" "$state/extensions"
  cat >"$c/_common/common.runtime.properties" <<EOF
druid.host=127.0.0.1
druid.bindOnHost=true
druid.extensions.directory=$state/extensions
druid.extensions.loadList=[]
druid.startup.logging.logProperties=false
druid.zk.service.host=127.0.0.1:${port[zookeeper]}
druid.zk.paths.base=/druid
druid.metadata.storage.type=derby
druid.metadata.storage.connector.connectURI=jdbc:derby://127.0.0.1:${port[derby]}/$state/var/metadata.db;create=true
druid.metadata.storage.connector.host=127.0.0.1
druid.metadata.storage.connector.port=${port[derby]}
druid.storage.type=local
druid.storage.storageDirectory=$state/var/segments
druid.indexer.logs.type=file
druid.indexer.logs.directory=$state/var/indexing-logs
druid.selectors.indexing.serviceName=druid/overlord
druid.selectors.coordinator.serviceName=druid/coordinator
druid.emitter=noop
druid.monitoring.monitors=[]
druid.indexing.doubleStorage=double
druid.sql.enable=true
druid.lookup.enableLookupSyncOnStartup=false
druid.expressions.useStrictBooleans=true
druid.generic.useDefaultValueForNull=false
druid.generic.useThreeValueLogicForNativeFilters=true
druid.global.http.eagerInitialization=false
druid.server.http.numThreads=12
druid.server.http.gracefulShutdownTimeout=PT1S
EOF
  cat >"$c/_common/log4j2.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8" ?>
<Configuration status="WARN">
  <Appenders>
    <Console name="Console" target="SYSTEM_OUT">
      <PatternLayout pattern="%d{ISO8601} %p [%t] %c - %m%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Root level="info"><AppenderRef ref="Console"/></Root>
    <Logger name="org.apache.zookeeper" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
    <Logger name="org.apache.curator" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
  </Loggers>
</Configuration>
EOF
  mkdir -p "$c/coordinator" "$c/broker" "$c/historical" "$c/indexer" "$c/router"
  cat >"$c/coordinator/runtime.properties" <<EOF
druid.service=druid/coordinator
druid.plaintextPort=${port[coordinator]}
druid.coordinator.startDelay=PT5S
druid.coordinator.period=PT5S
druid.manager.segments.pollDuration=PT5S
druid.coordinator.asOverlord.enabled=true
druid.coordinator.asOverlord.overlordService=druid/overlord
druid.indexer.queue.startDelay=PT1S
druid.indexer.storage.type=metadata
druid.indexer.runner.type=httpRemote
EOF
  cat >"$c/broker/runtime.properties" <<EOF
druid.service=druid/broker
druid.plaintextPort=${port[broker]}
druid.broker.http.numConnections=5
druid.broker.http.maxQueuedBytes=5MiB
druid.processing.buffer.sizeBytes=50MiB
druid.processing.numMergeBuffers=2
druid.processing.numThreads=1
druid.processing.tmpDir=$state/var/tmp/broker
druid.sql.planner.metadataRefreshPeriod=PT5S
EOF
  cat >"$c/historical/runtime.properties" <<EOF
druid.service=druid/historical
druid.plaintextPort=${port[historical]}
druid.processing.buffer.sizeBytes=50MiB
druid.processing.numMergeBuffers=2
druid.processing.numThreads=1
druid.processing.tmpDir=$state/var/tmp/historical
druid.segmentCache.locations=[{"path":"$state/var/segment-cache","maxSize":"10GiB"}]
druid.cache.type=caffeine
druid.cache.sizeInBytes=10MiB
EOF
  # The Indexer runs every task as a thread of its own JVM: 4 slots hold an
  # MSQ controller with its workers, or an index_parallel supervisor with its
  # subtasks.
  cat >"$c/indexer/runtime.properties" <<EOF
druid.service=druid/indexer
druid.plaintextPort=${port[indexer]}
druid.worker.capacity=4
druid.indexer.task.baseTaskDir=$state/var/task
druid.indexer.task.restoreTasksOnRestart=false
druid.processing.buffer.sizeBytes=25MiB
druid.processing.numMergeBuffers=2
druid.processing.numThreads=1
druid.processing.tmpDir=$state/var/tmp/indexer
EOF
  cat >"$c/router/runtime.properties" <<EOF
druid.service=druid/router
druid.plaintextPort=${port[router]}
druid.router.http.numConnections=25
druid.router.http.readTimeout=PT5M
druid.router.http.numMaxThreads=25
druid.router.defaultBrokerServiceName=druid/broker
druid.router.coordinatorServiceName=druid/coordinator
druid.router.managementProxy.enabled=true
EOF
  cat >"$c/zoo.cfg" <<EOF
dataDir=$state/var/zk
clientPort=${port[zookeeper]}
clientPortAddress=127.0.0.1
admin.enableServer=false
tickTime=2000
maxClientCnxns=0
EOF
}

# The flags Druid's start scripts give Java 17.
java_opens="--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
--add-opens=java.base/java.nio=ALL-UNNAMED
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED
--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
--add-opens=java.base/java.io=ALL-UNNAMED
--add-opens=java.base/java.lang=ALL-UNNAMED
--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED"

launch() { # service main-class args...
  local svc=$1; shift
  local cp="$state/conf/_common"
  [ -d "$state/conf/$svc" ] && cp="$cp:$state/conf/$svc"
  # shellcheck disable=SC2086 # the flag lists split on purpose
  setsid "$java" ${jvm[$svc]} $java_opens -XX:+ExitOnOutOfMemoryError -XX:+UseSerialGC \
    -XX:TieredStopAtLevel=1 -Duser.timezone=UTC -Dfile.encoding=UTF-8 \
    -Djava.io.tmpdir="$state/var/tmp" \
    -Djava.util.logging.manager=org.apache.logging.log4j.jul.LogManager \
    -Dlog4j.configurationFile="$state/conf/_common/log4j2.xml" \
    -Dderby.stream.error.file="$state/log/derby.log" \
    -cp "$cp:$(cat "$cpfile")" "$@" </dev/null >"$state/log/$svc.log" 2>&1 &
  echo $! >"$(pidfile "$svc")"
}

wait_for() { # service seconds check-command...
  local svc=$1 limit=$2; shift 2
  local t0=$SECONDS
  until "$@"; do
    alive "$svc" || fail "$svc" "exited while starting"
    [ $((SECONDS - t0)) -lt "$limit" ] || fail "$svc" "did not become ready within ${limit}s"
    sleep 1
  done
}

zk_up() { (exec 3<>"/dev/tcp/127.0.0.1/${port[zookeeper]}") 2>/dev/null; }
leader() { curl -sf -m 2 "$(url coordinator)/druid/indexer/v1/leader" >/dev/null 2>&1; }
worker() { curl -sf -m 2 "$(url coordinator)/druid/indexer/v1/workers" 2>/dev/null | grep -q '"worker"'; }

all_healthy() {
  local svc
  for svc in "${services[@]}"; do healthy "$svc" || return 1; done
}

print_env() {
  local v
  v=$(curl -s -m 2 "$(url coordinator)/status" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')
  echo "DRUID_VERSION=$v"
  echo "DRUID_ROUTER=$(url router)"
  echo "DRUID_BROKER=$(url broker)"
  echo "DRUID_OVERLORD=$(url coordinator)"
  echo "DRUID_COORDINATOR=$(url coordinator)"
}

start() {
  local running=0 svc
  for svc in zookeeper "${services[@]}"; do alive "$svc" && running=$((running + 1)); done
  if [ "$running" -gt 0 ]; then
    if [ "$running" -eq 6 ] && all_healthy; then
      say "already running under $state"; print_env; return
    fi
    say "some services of $state run and some do not: run '$0 stop' first"; exit 1
  fi
  command -v "$java" >/dev/null || { say "no $java on PATH (Druid $version needs Java 17)"; exit 1; }
  cpfile=$(classpath)
  write_conf
  local t0=$SECONDS
  say "starting Druid $version under $state (logs in $state/log)"
  launch zookeeper org.apache.zookeeper.server.ZooKeeperServerMain "$state/conf/zoo.cfg"
  wait_for zookeeper 60 zk_up
  # The Coordinator runs the Overlord and the Derby server the others need.
  launch coordinator org.apache.druid.cli.Main server coordinator
  wait_for coordinator 180 healthy coordinator
  for svc in broker historical indexer router; do
    launch "$svc" org.apache.druid.cli.Main server "$svc"
  done
  for svc in broker historical indexer router; do
    wait_for "$svc" 180 healthy "$svc"
  done
  wait_for coordinator 60 leader
  wait_for indexer 60 worker
  say "ready in $((SECONDS - t0))s"
  print_env
}

# stop_all ends the Druid services at once, and ZooKeeper after them. Stopped
# one by one, a service waits for the others' long polls (Jetty's stop timeout
# of 30s); stopped after ZooKeeper, it retries its unannouncements. Whatever
# still runs after 30s is killed.
stop_all() {
  local svc t0=$SECONDS
  for svc in router indexer broker historical coordinator; do
    if alive "$svc"; then kill "$(cat "$(pidfile "$svc")")" 2>/dev/null || true; fi
  done
  for svc in router indexer broker historical coordinator zookeeper; do
    if [ "$svc" = zookeeper ] && alive zookeeper; then
      kill "$(cat "$(pidfile zookeeper)")" 2>/dev/null || true
    fi
    while alive "$svc" && [ $((SECONDS - t0)) -lt 30 ]; do sleep 0.2; done
    if alive "$svc"; then
      say "$svc ($(cat "$(pidfile "$svc")")) still runs after 30s: killing it"
      kill -9 "$(cat "$(pidfile "$svc")")" 2>/dev/null || true
    fi
    rm -f "$(pidfile "$svc")"
  done
}

case "${1:-}" in
start) start ;;
stop) stop_all; say "stopped" ;;
status)
  for svc in zookeeper "${services[@]}"; do
    if alive "$svc"; then echo "$svc: running ($(cat "$(pidfile "$svc")"))"; else echo "$svc: stopped"; fi
  done ;;
clean)
  for svc in zookeeper "${services[@]}"; do
    alive "$svc" && { say "$svc still runs: run '$0 stop' first"; exit 1; }
  done
  rm -rf "$state"; say "removed $state" ;;
*) echo "usage: $0 start|stop|status|clean" >&2; exit 2 ;;
esac
