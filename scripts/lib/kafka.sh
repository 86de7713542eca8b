# shellcheck shell=bash
# The Kafka service for scripts/services: Apache Kafka's own jars from Maven
# Central (scripts/kafka/pom.xml), run as KRaft nodes (broker and controller in
# one JVM each) on 127.0.0.1 with small heaps:
#
#   single       one node: 127.0.0.1:19092 (controller 19093), for most tests
#   cluster-1..3 three nodes: 127.0.0.1:19192/19292/19392 (controllers
#                19193/19293/19393), for the seed's replicated topics
#
# Topics, as in the seed (Huawei DMS Kafka test: Topic-01 3 partitions x 1
# replica, Topic-02 3 x 3 for acks=1, Topic-03 3 x 3 "synchronous replication",
# i.e. min.insync.replicas=2 for acks=-1; Volcengine's test: topic-1):
#
#   single   Topic-01 3x1, topic-1 3x1
#   cluster  Topic-01 3x1, topic-1 3x1, Topic-02 3x3, Topic-03 3x3 min.insync.replicas=2
#
# The functions are those of every service file (see lib/redis.sh):
#
#   kafka_install   install java and mvn if missing; fetch the jars once
#   kafka_start     format and start every node that is not running (idempotent)
#   kafka_wait      wait until every node accepts connections, then make sure
#                   every topic exists with its partitions, replicas and config
#                   (creating, or deleting and recreating, what does not)
#   kafka_env       print the `export PERF_KAFKA_...=...` lines
#   kafka_stop      stop every node this script started (data is kept)
#   kafka_status    one line per node; fail if one is down
#
# State lives in $SERVICES_DIR/kafka/:
#   lib-<version>/         the jars of scripts/kafka/pom.xml (4.x broker + tools)
#   lib-tools-<version>/   the jars of scripts/kafka/tools39/pom.xml (3.9 tools)
#   <group>.cluster-id     the KRaft cluster id of "single" and of "cluster"
#   <node>/                server.properties, server.log, kafka.pid, data/
# Topic data survives a stop and start; rm -rf .services/kafka/<node> (stopped)
# starts that node empty. scripts/kafka-tool runs the original tools.

KAFKA_PORT=19092
KAFKA_CLUSTER_PORTS=(19192 19292 19392)
# The WAN rig (kafka_wan_*, not started by kafka_start): a private node on
# 19592 (controller 19593) whose advertised listener is a Toxiproxy proxy on
# 19692 with a latency toxic each way; benchmarks and fault tests may kill,
# pause and restart it without disturbing the shared brokers.
KAFKA_WAN_PORT=19592
KAFKA_WAN_PROXY_PORT=19692
KAFKA_WAN_PROXY=kafka-wan

# A node's controller listens on its broker port + 1.

KAFKA_STATE="$SERVICES_DIR/kafka"
KAFKA_POM="$ROOT/scripts/kafka/pom.xml"
KAFKA_POM39="$ROOT/scripts/kafka/tools39/pom.xml"
KAFKA_CONF_DIR="$ROOT/scripts/kafka"

# Topic specs: NAME:PARTITIONS:REPLICAS[:KEY=VALUE,...] (topic-level configs).
KAFKA_TOPIC_3X1=Topic-01
KAFKA_TOPIC_SEED=topic-1
KAFKA_TOPIC_3X3=Topic-02
KAFKA_TOPIC_3X3_ISR2=Topic-03
KAFKA_SINGLE_TOPICS=("$KAFKA_TOPIC_3X1:3:1" "$KAFKA_TOPIC_SEED:3:1")
KAFKA_WAN_TOPICS=("$KAFKA_TOPIC_3X1:3:1")
KAFKA_CLUSTER_TOPICS=("$KAFKA_TOPIC_3X1:3:1" "$KAFKA_TOPIC_SEED:3:1"
	"$KAFKA_TOPIC_3X3:3:3" "$KAFKA_TOPIC_3X3_ISR2:3:3:min.insync.replicas=2")

# Broker JVM heap; override with KAFKA_BROKER_HEAP_OPTS in the environment.
KAFKA_BROKER_HEAP="${KAFKA_BROKER_HEAP_OPTS:--Xmx384m -Xms384m}"
# The JVM flags of Kafka's kafka-run-class.sh (KAFKA_JVM_PERFORMANCE_OPTS).
KAFKA_JVM_PERF=(-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20
	-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent
	-XX:MaxInlineLevel=15 -Djava.awt.headless=true)

# _kafka_pom_version POM: the <kafka.version> property of POM.
_kafka_pom_version() {
	sed -n 's:.*<kafka\.version>\([^<]*\)</kafka\.version>.*:\1:p' "$1" | head -n 1
}

KAFKA_VERSION="$(_kafka_pom_version "$KAFKA_POM")"
KAFKA_TOOLS39_VERSION="$(_kafka_pom_version "$KAFKA_POM39")"
KAFKA_LIB="$KAFKA_STATE/lib-$KAFKA_VERSION"
KAFKA_LIB39="$KAFKA_STATE/lib-tools-$KAFKA_TOOLS39_VERSION"

_kafka_ms() { date +%s%3N; }
_kafka_since() { # START_MS: seconds since START_MS, one decimal
	local d=$(($(_kafka_ms) - $1))
	printf '%d.%d' $((d / 1000)) $((d % 1000 / 100))
}

# ---- jars -------------------------------------------------------------------

# _kafka_fetched POM DIR: DIR holds the dependencies of this very POM.
_kafka_fetched() {
	[ -f "$2/.fetched" ] && [ "$(cat "$2/.fetched")" = "$(sha256sum <"$1" | cut -d' ' -f1)" ]
}

# _kafka_fetch POM DIR: copy POM's runtime dependencies into DIR with Maven,
# unless DIR already has them. Safe to run concurrently (scripts/kafka-tool
# calls it too): one fetch at a time, and DIR appears whole or not at all.
_kafka_fetch() {
	local pom="$1" dir="$2" tmp t0
	_kafka_fetched "$pom" "$dir" && return 0
	mkdir -p "$KAFKA_STATE"
	(
		flock -w 900 8 || die "kafka: another fetch of $dir is still running"
		_kafka_fetched "$pom" "$dir" && exit 0
		command -v mvn >/dev/null || die "kafka: mvn not found (apt-get install maven)"
		t0="$(_kafka_ms)"
		tmp="$dir.tmp.$$"
		rm -rf "$tmp"
		log "kafka: fetching ${pom#"$ROOT"/}'s jars from Maven Central into ${dir#"$ROOT"/}"
		if ! mvn -B -q -Dstyle.color=never -f "$pom" \
			org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$tmp" >"$tmp.log" 2>&1; then
			tail -n 30 "$tmp.log" >&2
			rm -rf "$tmp"
			die "kafka: mvn could not fetch the dependencies of $pom (log: $tmp.log)"
		fi
		rm -f "$tmp.log"
		sha256sum <"$pom" | cut -d' ' -f1 >"$tmp/.fetched"
		rm -rf "$dir"
		mv "$tmp" "$dir"
		log "kafka: fetched $(find "$dir" -name '*.jar' | wc -l) jars in $(_kafka_since "$t0") s"
	) 8>"$dir.lock"
}

kafka_fetch_all() {
	_kafka_fetch "$KAFKA_POM" "$KAFKA_LIB"
	_kafka_fetch "$KAFKA_POM39" "$KAFKA_LIB39"
}

# _kafka_java ARGS...: a short-lived 4.x tool JVM (storage, topics), logging
# at WARN to stderr. C1 only and the serial GC: a third less CPU to start,
# which counts while four brokers start on two cores.
# Never runs for more than 120 s.
_kafka_java() {
	timeout 120 java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
		-Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$KAFKA_CONF_DIR/tools-log4j2.properties" \
		-cp "$KAFKA_LIB/*" "$@"
}

# ---- nodes ------------------------------------------------------------------

_kafka_nodes() { # GROUP: the node names of single, cluster or wan
	case "$1" in
	single) echo single ;;
	cluster) echo cluster-1 cluster-2 cluster-3 ;;
	wan) echo wan ;;
	esac
}

_kafka_port() { # NODE: its broker port
	case "$1" in
	single) echo "$KAFKA_PORT" ;;
	wan) echo "$KAFKA_WAN_PORT" ;;
	cluster-[123]) echo "${KAFKA_CLUSTER_PORTS[${1#cluster-} - 1]}" ;;
	esac
}

_kafka_group_of() { case "$1" in single | wan) echo "$1" ;; *) echo cluster ;; esac; }

_kafka_bootstrap() { # GROUP: host:port,... of its brokers
	local node out=""
	for node in $(_kafka_nodes "$1"); do out+="127.0.0.1:$(_kafka_port "$node"),"; done
	echo "${out%,}"
}

# The marker on a node's java command line: it names the node's directory, so
# pid_alive never takes a recycled pid, or another checkout's broker, for ours.
_kafka_marker() { echo "-Dperfclones.kafka.node=$KAFKA_STATE/$1"; }

_kafka_running() { # NODE: our JVM for NODE is alive (its port may not be open yet)
	pid_alive "$KAFKA_STATE/$1/kafka.pid" "$(_kafka_marker "$1") "
}

_kafka_up() { # NODE: running and accepting connections on its broker port
	_kafka_running "$1" && port_open "$(_kafka_port "$1")"
}

# _kafka_stray NODE: pids of JVMs started from NODE's directory whose pid file
# was lost (only exact matches of our marker, so nobody else's process).
_kafka_stray() {
	pgrep -f -- "^[^ ]*java .*$(_kafka_marker "$1") " || true
}

_kafka_cluster_id() { # GROUP: its KRaft cluster id, made once and kept
	local f="$KAFKA_STATE/$1.cluster-id" id node
	if [ ! -s "$f" ]; then
		# Lost, while a node's data is still there: take the id it was formatted with.
		for node in $(_kafka_nodes "$1"); do
			id="$(sed -n 's/^cluster\.id=//p' "$KAFKA_STATE/$node/data/meta.properties" 2>/dev/null)" || true
			if [ -n "$id" ]; then echo "$id" >"$f"; break; fi
		done
	fi
	if [ ! -s "$f" ]; then
		# A Kafka Uuid: 16 random bytes in URL-safe base64 without padding, not
		# starting with '-' (Kafka avoids those too: they read as options).
		id=-
		while [ "${id:0:1}" = - ]; do
			id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
		done
		echo "$id" >"$f"
	fi
	cat "$f"
}

# _kafka_write_props NODE: (re)write NODE's server.properties.
_kafka_write_props() {
	local node="$1" group dir port id voters="" n rf isr advertised
	group="$(_kafka_group_of "$node")"
	dir="$KAFKA_STATE/$node"
	port="$(_kafka_port "$node")"
	if [ "$group" = cluster ]; then id="${node#cluster-}"; else id=1; fi
	n=0
	for other in $(_kafka_nodes "$group"); do
		n=$((n + 1))
		voters+="$n@127.0.0.1:$(($(_kafka_port "$other") + 1)),"
	done
	if [ "$group" = cluster ]; then rf=3 isr=2; else rf=1 isr=1; fi
	# The WAN node is reached only through its proxy: clients learn the
	# proxy's address from the metadata, so every connection crosses it.
	advertised="127.0.0.1:$port"
	[ "$group" = wan ] && advertised="127.0.0.1:$KAFKA_WAN_PROXY_PORT"
	mkdir -p "$dir"
	cat >"$dir/server.properties" <<EOF
# Written by scripts/lib/kafka.sh on every start; edit that file, not this one.
process.roles=broker,controller
node.id=$id
controller.quorum.voters=${voters%,}
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$((port + 1))
advertised.listeners=PLAINTEXT://$advertised
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data

auto.create.topics.enable=true
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0

# Benchmarks write a lot: keep at most an hour, and 1 GiB per partition.
log.retention.ms=3600000
log.retention.bytes=1073741824
log.segment.bytes=134217728
log.retention.check.interval.ms=60000
# The log cleaner (for __consumer_offsets) takes 128 MiB of heap by default.
log.cleaner.dedupe.buffer.size=16777216
EOF
}

# _kafka_format NODE: format NODE's log directory unless it already is.
_kafka_format() {
	local node="$1" dir out
	dir="$KAFKA_STATE/$node"
	[ -f "$dir/data/meta.properties" ] && return 0
	out="$(_kafka_java kafka.tools.StorageTool format --ignore-formatted \
		--cluster-id "$(_kafka_cluster_id "$(_kafka_group_of "$node")")" \
		--config "$dir/server.properties" 2>&1)" || {
		printf '%s\n' "$out" >&2
		die "kafka: formatting $node failed"
	}
}

# _kafka_clear NODE: make sure no JVM of ours runs for NODE and its ports are
# free; fail if somebody else holds them.
_kafka_clear() {
	local node="$1" dir port pid
	dir="$KAFKA_STATE/$node"
	port="$(_kafka_port "$node")"
	kill_pidfile "$dir/kafka.pid" "$(_kafka_marker "$node") "
	for pid in $(_kafka_stray "$node"); do
		log "kafka: stopping a stray $node (pid $pid)"
		kill "$pid" 2>/dev/null || true
		wait_until 30 pid_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
	done
	if port_open "$port" || port_open $((port + 1)); then
		die "kafka: port $port or $((port + 1)) is in use by another process; stop it first"
	fi
}

# _kafka_launch NODE: start NODE's JVM in its own session, detached, and
# record its pid. Like run_clean (lib/common.sh) the JVM keeps only fds 0-2,
# so it holds neither a lock nor a caller's pipe; unlike `run_clean CMD &`, no
# waiting shell stays behind holding them: the subshell itself becomes the JVM.
_kafka_launch() {
	local node="$1" dir fd
	dir="$KAFKA_STATE/$node"
	rm -f "$dir/kafka.pid"
	# Keep a few restarts' worth of log.
	if [ -f "$dir/server.log" ] && [ "$(stat -c %s "$dir/server.log")" -gt 67108864 ]; then
		mv -f "$dir/server.log" "$dir/server.log.1"
	fi
	# shellcheck disable=SC2086 # KAFKA_BROKER_HEAP is a list of flags
	(
		cd "$dir" || exit 1
		for fd in /proc/"$BASHPID"/fd/*; do
			fd="${fd##*/}"
			if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
		done
		exec setsid java $KAFKA_BROKER_HEAP "${KAFKA_JVM_PERF[@]}" \
			-XX:ErrorFile="$dir/hs_err_pid%p.log" \
			-Dlog4j2.configurationFile="$KAFKA_CONF_DIR/broker-log4j2.properties" \
			-Dkafka.logs.dir="$dir" \
			"$(_kafka_marker "$node")" \
			-cp "$KAFKA_LIB/*" kafka.Kafka "$dir/server.properties"
	) >>"$dir/server.log" 2>&1 </dev/null &
	# Usually $!, unless setsid had to fork: find the JVM by its marker.
	if ! wait_until 10 _kafka_adopt "$node"; then
		tail -n 30 "$dir/server.log" >&2
		die "kafka: $node did not start"
	fi
}

# _kafka_adopt NODE: write the pid of NODE's JVM, found by its marker, to
# NODE's pid file.
_kafka_adopt() {
	local pid
	pid="$(_kafka_stray "$1" | head -n 1)"
	[ -n "$pid" ] || return 1
	echo "$pid" >"$KAFKA_STATE/$1/kafka.pid"
}

kafka_install() {
	ensure_commands java:openjdk-17-jre-headless mvn:maven flock:util-linux \
		setsid:util-linux pgrep:procps sha256sum:coreutils
	kafka_fetch_all
}

kafka_start() {
	local t0 group node todo=() pids=() pid
	t0="$(_kafka_ms)"
	mkdir -p "$KAFKA_STATE"
	for group in single cluster; do
		for node in $(_kafka_nodes "$group"); do
			# (A JVM of ours whose pid file was lost is adopted, not restarted.)
			if _kafka_running "$node" || { _kafka_adopt "$node" && _kafka_running "$node"; }; then
				log "kafka: $node already running on 127.0.0.1:$(_kafka_port "$node")"
				continue
			fi
			_kafka_clear "$node"
			_kafka_write_props "$node"
			todo+=("$node")
		done
	done
	[ "${#todo[@]}" -eq 0 ] && return 0
	# Formatting is a JVM each; run them side by side, with the ids made first.
	_kafka_cluster_id single >/dev/null
	_kafka_cluster_id cluster >/dev/null
	for node in "${todo[@]}"; do
		_kafka_format "$node" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid" || die "kafka: formatting failed"; done
	for node in "${todo[@]}"; do _kafka_launch "$node"; done
	log "kafka: launched ${todo[*]} ($KAFKA_VERSION, heap $KAFKA_BROKER_HEAP) in $(_kafka_since "$t0") s"
}

# _kafka_topics GROUP ARGS...: TopicCommand against GROUP's brokers.
_kafka_topics() {
	local group="$1"
	shift
	_kafka_java org.apache.kafka.tools.TopicCommand \
		--bootstrap-server "$(_kafka_bootstrap "$group")" "$@"
}

# _kafka_topic_state DESCRIBE SPEC: ok, missing or wrong, for one topic spec
# against the output of TopicCommand --describe.
_kafka_topic_state() {
	local desc="$1" spec="$2" name parts reps conf line c
	IFS=: read -r name parts reps conf <<<"$spec"
	line="$(grep -P "^Topic: \Q$name\E\t" <<<"$desc" | head -n 1)" || true
	[ -n "$line" ] || { echo missing; return; }
	if ! grep -qP "\tPartitionCount: $parts\t" <<<"$line" ||
		! grep -qP "\tReplicationFactor: $reps\t" <<<"$line"; then
		echo wrong
		return
	fi
	if [ -n "$conf" ]; then
		IFS=, read -ra c <<<"$conf"
		for c in "${c[@]}"; do
			grep -qP "Configs:.*(^|[\t ,:])\Q$c\E(,|$)" <<<"$line" || { echo wrong; return; }
		done
	fi
	# Every partition has its full replica set in sync.
	if grep -P "^\tTopic: \Q$name\E\t" <<<"$desc" | awk -F'\t' -v r="$reps" '
		{ for (i = 1; i <= NF; i++) if ($i ~ /^Isr: /) { n = split(substr($i, 6), a, ","); if (n < r) bad = 1 } }
		END { exit !bad }'; then
		echo degraded
		return
	fi
	echo ok
}

# _kafka_create GROUP SPEC: create one topic; fails while brokers are still
# registering (the caller retries).
_kafka_create() {
	local group="$1" name parts reps conf c cargs=()
	IFS=: read -r name parts reps conf <<<"$2"
	if [ -n "$conf" ]; then
		IFS=, read -ra c <<<"$conf"
		for c in "${c[@]}"; do cargs+=(--config "$c"); done
	fi
	_kafka_topics "$group" --create --if-not-exists --topic "$name" \
		--partitions "$parts" --replication-factor "$reps" "${cargs[@]}" \
		>/dev/null 2>>"$KAFKA_STATE/$group.topics.err" || return 1
	log "kafka: $group: created $name ($parts partitions x $reps replicas${conf:+, $conf})"
}

# _kafka_ensure_topics GROUP SPEC...: create what is missing, recreate what has
# another shape, and return once every topic is ok (or fail after 120 s).
_kafka_ensure_topics() {
	local group="$1" deadline=$((SECONDS + 120)) desc="" spec state name
	local ok created pids pid
	shift
	while :; do
		if desc="$(_kafka_topics "$group" --describe --exclude-internal 2>"$KAFKA_STATE/$group.topics.err")"; then
			ok=1 created="" pids=()
			for spec in "$@"; do
				state="$(_kafka_topic_state "$desc" "$spec")"
				name="${spec%%:*}"
				case "$state" in
				ok) ;;
				missing) # create side by side; a new topic counts as ok
					_kafka_create "$group" "$spec" &
					pids+=($!)
					created=1
					;;
				wrong)
					log "kafka: $group: $name is not ${spec#*:}; deleting it to recreate it"
					_kafka_topics "$group" --delete --topic "$name" \
						>/dev/null 2>>"$KAFKA_STATE/$group.topics.err" || true
					ok=""
					;;
				*) ok="" ;; # degraded: replicas still catching up
				esac
			done
			for pid in "${pids[@]}"; do wait "$pid" || ok=""; done
			[ -n "$ok" ] && return 0
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			tail -n 20 "$KAFKA_STATE/$group.topics.err" >&2
			[ -n "$desc" ] && printf '%s\n' "$desc" >&2
			die "kafka: $group: topics not ready after 120 s"
		fi
		[ -n "$created" ] || sleep 1
	done
}

# _kafka_up_or_dead NODE: up, or its JVM is gone (no use waiting longer).
_kafka_up_or_dead() { _kafka_up "$1" || ! _kafka_running "$1"; }

kafka_wait() {
	local t0 node group pids=() pid rc=0
	t0="$(_kafka_ms)"
	for node in $(_kafka_nodes single) $(_kafka_nodes cluster); do
		if ! wait_until 90 _kafka_up_or_dead "$node" || ! _kafka_up "$node"; then
			tail -n 30 "$KAFKA_STATE/$node/server.log" >&2
			die "kafka: $node does not accept connections on 127.0.0.1:$(_kafka_port "$node")" \
				"(log: ${KAFKA_STATE#"$ROOT"/}/$node/server.log)"
		fi
	done
	log "kafka: every node accepts connections after $(_kafka_since "$t0") s"
	_kafka_ensure_topics single "${KAFKA_SINGLE_TOPICS[@]}" &
	pids+=($!)
	_kafka_ensure_topics cluster "${KAFKA_CLUSTER_TOPICS[@]}" &
	pids+=($!)
	for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
	[ "$rc" -eq 0 ] || die "kafka: topics are not ready"
	for group in single cluster; do rm -f "$KAFKA_STATE/$group.topics.err"; done
	log "kafka: topics ready after $(_kafka_since "$t0") s"
}

kafka_env() {
	env_line PERF_KAFKA_BOOTSTRAP "$(_kafka_bootstrap single)"
	env_line PERF_KAFKA_CLUSTER_BOOTSTRAP "$(_kafka_bootstrap cluster)"
	env_line PERF_KAFKA_TOPIC_3X1 "$KAFKA_TOPIC_3X1"
	env_line PERF_KAFKA_TOPIC_SEED "$KAFKA_TOPIC_SEED"
	env_line PERF_KAFKA_TOPIC_3X3 "$KAFKA_TOPIC_3X3"
	env_line PERF_KAFKA_TOPIC_3X3_ISR2 "$KAFKA_TOPIC_3X3_ISR2"
	env_line PERF_KAFKA_TOOL "$ROOT/scripts/kafka-tool"
	env_line PERF_KAFKA_VERSION "$KAFKA_VERSION"
	env_line PERF_KAFKA_TOOLS39_VERSION "$KAFKA_TOOLS39_VERSION"
	env_line PERF_KAFKA_LIB "$KAFKA_LIB"
	env_line PERF_KAFKA_TOOLS39_LIB "$KAFKA_LIB39"
}

# kafka_stop: SIGTERM every node at once (a controlled shutdown; data is kept),
# wait up to 30 s, then SIGKILL what is left.
kafka_stop() {
	local node pid pids=() names=() t0 deadline
	t0="$(_kafka_ms)"
	for node in $(_kafka_nodes cluster) $(_kafka_nodes single); do
		if _kafka_running "$node"; then
			pids+=("$(cat "$KAFKA_STATE/$node/kafka.pid")")
			names+=("$node")
		fi
		for pid in $(_kafka_stray "$node"); do
			case " ${pids[*]-} " in *" $pid "*) ;; *) pids+=("$pid") names+=("$node") ;; esac
		done
	done
	[ "${#pids[@]}" -eq 0 ] && return 0
	kill "${pids[@]}" 2>/dev/null || true
	deadline=$((SECONDS + 30))
	for pid in "${pids[@]}"; do
		wait_until $((deadline > SECONDS ? deadline - SECONDS : 0)) pid_gone "$pid" || {
			log "kafka: pid $pid still running after 30 s; killing it"
			kill -9 "$pid" 2>/dev/null || true
			wait_until 5 pid_gone "$pid" || true
		}
	done
	for node in $(_kafka_nodes single) $(_kafka_nodes cluster); do
		rm -f "$KAFKA_STATE/$node/kafka.pid"
	done
	log "kafka: stopped ${names[*]} in $(_kafka_since "$t0") s"
}

kafka_status() {
	local node port rc=0 state
	for node in $(_kafka_nodes single) $(_kafka_nodes cluster); do
		port="$(_kafka_port "$node")"
		if _kafka_up "$node"; then
			state="up (pid $(cat "$KAFKA_STATE/$node/kafka.pid"))"
		elif _kafka_running "$node"; then
			state="starting (pid $(cat "$KAFKA_STATE/$node/kafka.pid"))" rc=1
		else
			state=down rc=1
		fi
		printf 'kafka %-15s 127.0.0.1:%s %s\n' "$node" "$port" "$state"
	done
	return "$rc"
}

# ---- the WAN rig --------------------------------------------------------------
# A private node ("wan") behind the Toxiproxy of lib/toxiproxy.sh: the node
# listens on $KAFKA_WAN_PORT and advertises the proxy's 127.0.0.1:$KAFKA_WAN_PROXY_PORT,
# so bootstrap and every later connection cross the proxy. scripts/kafka-tool
# wan ... drives it; tests find it through PERF_KAFKA_WAN_* (kafka_wan_env).

_kafka_toxi() { # METHOD PATH [JSON]: one Toxiproxy API call; prints the answer
	local api="127.0.0.1:${TOXIPROXY_PORT:-18474}"
	curl -sS -f -X "$1" "http://$api$2" ${3:+-H 'Content-Type: application/json' -d "$3"}
}

# kafka_wan_latency MS: MS ms added each way (upstream and downstream), the
# toxics replaced; 0 removes them.
kafka_wan_latency() {
	local ms="$1" dir
	for dir in upstream downstream; do
		_kafka_toxi DELETE "/proxies/$KAFKA_WAN_PROXY/toxics/latency-$dir" >/dev/null 2>&1 || true
		[ "$ms" = 0 ] && continue
		_kafka_toxi POST "/proxies/$KAFKA_WAN_PROXY/toxics" \
			"{\"name\":\"latency-$dir\",\"type\":\"latency\",\"stream\":\"$dir\",\"toxicity\":1,\"attributes\":{\"latency\":$ms,\"jitter\":0}}" \
			>/dev/null || die "kafka: cannot set the WAN latency toxic"
	done
}

# kafka_wan_proxy: make sure the proxy exists and is enabled.
kafka_wan_proxy() {
	if ! _kafka_toxi GET "/proxies/$KAFKA_WAN_PROXY" >/dev/null 2>&1; then
		_kafka_toxi POST /proxies "{\"name\":\"$KAFKA_WAN_PROXY\",\"listen\":\"127.0.0.1:$KAFKA_WAN_PROXY_PORT\",\"upstream\":\"127.0.0.1:$KAFKA_WAN_PORT\",\"enabled\":true}" \
			>/dev/null || die "kafka: cannot create the Toxiproxy proxy $KAFKA_WAN_PROXY (is toxiproxy running? scripts/services start toxiproxy)"
	fi
	_kafka_toxi POST "/proxies/$KAFKA_WAN_PROXY" '{"enabled":true}' >/dev/null
}

# kafka_wan_start [MS]: the proxy (latency MS each way, default
# $PERF_KAFKA_WAN_MS or 2), the node (started unless running) and its topic.
kafka_wan_start() {
	local ms="${1:-${PERF_KAFKA_WAN_MS:-2}}" t0
	t0="$(_kafka_ms)"
	kafka_wan_proxy
	kafka_wan_latency "$ms"
	if ! _kafka_running wan; then
		_kafka_clear wan
		_kafka_write_props wan
		_kafka_cluster_id wan >/dev/null
		_kafka_format wan
		_kafka_launch wan
	fi
	if ! wait_until 90 _kafka_up_or_dead wan || ! _kafka_up wan; then
		tail -n 30 "$KAFKA_STATE/wan/server.log" >&2
		die "kafka: the WAN node does not accept connections on 127.0.0.1:$KAFKA_WAN_PORT"
	fi
	_kafka_ensure_topics wan "${KAFKA_WAN_TOPICS[@]}"
	rm -f "$KAFKA_STATE/wan.topics.err"
	log "kafka: WAN node up behind 127.0.0.1:$KAFKA_WAN_PROXY_PORT (+$ms ms each way) after $(_kafka_since "$t0") s"
}

kafka_wan_pid() { _kafka_running wan && cat "$KAFKA_STATE/wan/kafka.pid"; }

# kafka_wan_signal SIG: send SIG (KILL, STOP, CONT) to the WAN node only.
kafka_wan_signal() {
	local pid
	pid="$(kafka_wan_pid)" || die "kafka: the WAN node is not running"
	kill -s "$1" "$pid"
	if [ "$1" = KILL ]; then
		wait_until 10 pid_gone "$pid" || true
		rm -f "$KAFKA_STATE/wan/kafka.pid"
	fi
}

kafka_wan_stop() {
	kill_pidfile "$KAFKA_STATE/wan/kafka.pid" "$(_kafka_marker wan) "
	_kafka_toxi DELETE "/proxies/$KAFKA_WAN_PROXY" >/dev/null 2>&1 || true
}

kafka_wan_env() {
	env_line PERF_KAFKA_WAN_BOOTSTRAP "127.0.0.1:$KAFKA_WAN_PROXY_PORT"
	env_line PERF_KAFKA_WAN_PROXY "$KAFKA_WAN_PROXY"
	env_line PERF_KAFKA_WAN_TOPIC "$KAFKA_TOPIC_3X1"
	env_line PERF_KAFKA_WAN_PIDFILE "$KAFKA_STATE/wan/kafka.pid"
}
