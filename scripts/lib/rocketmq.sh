# shellcheck shell=bash
# The RocketMQ service for scripts/services: Apache RocketMQ's own name server
# and broker (5.3.3 jars from Maven Central, scripts/rocketmq/pom.xml), run
# with small heaps inside a network namespace of this harness.
#
# Why a namespace: the name server's internal client connects every few
# seconds to the first non-loopback address of the host it runs on, whatever
# bindAddress says, and no test may send traffic to the host's own external
# address. Inside the namespace the only non-loopback address is the
# namespace's own, so every connection stays on the veth pair:
#
#   host side  $RMQ_NETNS_HOST_IP/30 on $RMQ_VETH_HOST
#   namespace  $RMQ_NETNS_IP/30 on $RMQ_VETH_NS (no default route)
#
# Servers, inside the namespace (clients reach them at $RMQ_NETNS_IP):
#
#   main    name server :9876, broker broker-a :10911, for every test
#   fault   name server :9886, broker broker-f :10931, started and stopped by
#           the fault tests only (scripts/rocketmq/node start|stop fault)
#   acl     name server :9896, broker broker-acl :10951 with authentication
#           on (user rocketmq2, secret 12345678: the benchmark's default
#           -ak/-sk), started by the ACL test (scripts/rocketmq/node start acl)
#   wan     name server :9906, broker broker-w :10971 advertised at
#           $RMQ_NETNS_HOST_IP:10971, where whoever starts it (bench-rocketmq
#           --latency-ms) puts a Toxiproxy proxy to the broker first, so that
#           every client connection to this broker crosses the proxy
#
# Every start of a broker wipes its store, so each harness start begins empty
# (the broker's RSS grows with its mapped commit log). The seed's topic
# (topic-01, 8 queues) and consumer group (group-01) are created with the
# admin tools (MQAdminStartup) once the broker is up.
#
# The functions are those of every service file (see lib/redis.sh).
# State lives in $SERVICES_DIR/rocketmq/:
#   lib-<version>/     the jars
#   <node>/            namesrv.conf or broker.conf, out.log, pid, home/ (logs),
#                      store/ (broker)

RMQ_NETNS=perfclones-rmq
RMQ_VETH_HOST=pcrmq-h
RMQ_VETH_NS=pcrmq-n
RMQ_NETNS_HOST_IP=10.213.0.1
RMQ_NETNS_IP=10.213.0.2

# The acl group's one user: the benchmark's default -ak/-sk.
RMQ_ACL_ACCESS_KEY=rocketmq2
RMQ_ACL_SECRET_KEY=12345678

RMQ_TOPIC=topic-01
RMQ_GROUP=group-01
RMQ_QUEUES=8

RMQ_STATE="$SERVICES_DIR/rocketmq"
RMQ_POM="$ROOT/scripts/rocketmq/pom.xml"
RMQ_VERSION="$(sed -n 's:.*<rocketmq\.version>\([^<]*\)</rocketmq\.version>.*:\1:p' "$RMQ_POM" | head -n 1)"
RMQ_LIB="$RMQ_STATE/lib-$RMQ_VERSION"

# Heaps: the name server needs little; the broker's direct memory holds its
# transient store pool and network buffers.
RMQ_NAMESRV_HEAP="${RMQ_NAMESRV_HEAP_OPTS:--Xms192m -Xmx192m}"
RMQ_BROKER_HEAP="${RMQ_BROKER_HEAP_OPTS:--Xms512m -Xmx512m -XX:MaxDirectMemorySize=512m}"

_rocketmq_ms() { date +%s%3N; }
_rocketmq_since() {
	local d=$(($(_rocketmq_ms) - $1))
	printf '%d.%d' $((d / 1000)) $((d % 1000 / 100))
}

# ---- jars -------------------------------------------------------------------

_rocketmq_fetched() {
	[ -f "$RMQ_LIB/.fetched" ] && [ "$(cat "$RMQ_LIB/.fetched")" = "$(sha256sum <"$RMQ_POM" | cut -d' ' -f1)" ]
}

# _rocketmq_fetch: copy the pom's runtime dependencies into RMQ_LIB with Maven,
# unless it already has them; one fetch at a time, and the directory appears
# whole or not at all.
_rocketmq_fetch() {
	local tmp t0
	_rocketmq_fetched && return 0
	mkdir -p "$RMQ_STATE"
	(
		flock -w 900 8 || die "rocketmq: another fetch of $RMQ_LIB is still running"
		_rocketmq_fetched && exit 0
		t0="$(_rocketmq_ms)"
		tmp="$RMQ_LIB.tmp.$$"
		rm -rf "$tmp"
		log "rocketmq: fetching ${RMQ_POM#"$ROOT"/}'s jars from Maven Central into ${RMQ_LIB#"$ROOT"/}"
		if ! mvn -B -q -Dstyle.color=never -f "$RMQ_POM" \
			org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$tmp" >"$tmp.log" 2>&1; then
			tail -n 30 "$tmp.log" >&2
			rm -rf "$tmp"
			die "rocketmq: mvn could not fetch the dependencies of $RMQ_POM (log: $tmp.log)"
		fi
		rm -f "$tmp.log"
		sha256sum <"$RMQ_POM" | cut -d' ' -f1 >"$tmp/.fetched"
		rm -rf "$RMQ_LIB"
		mv "$tmp" "$RMQ_LIB"
		log "rocketmq: fetched $(find "$RMQ_LIB" -name '*.jar' | wc -l) jars in $(_rocketmq_since "$t0") s"
	) 8>"$RMQ_LIB.lock"
}

# ---- network namespace --------------------------------------------------------

_rocketmq_netns_ok() {
	ip netns exec "$RMQ_NETNS" ip -4 addr show dev "$RMQ_VETH_NS" 2>/dev/null |
		grep -q "inet $RMQ_NETNS_IP/30" &&
		ip -4 addr show dev "$RMQ_VETH_HOST" 2>/dev/null | grep -q "inet $RMQ_NETNS_HOST_IP/30" &&
		ip link show dev "$RMQ_VETH_HOST" 2>/dev/null | grep -q 'state UP'
}

# _rocketmq_netns: make the namespace and its veth pair exist with their addresses
# (idempotent; a half-made pair from an interrupted run is rebuilt).
_rocketmq_netns() {
	_rocketmq_netns_ok && return 0
	ip netns list | grep -qw "$RMQ_NETNS" || ip netns add "$RMQ_NETNS" ||
		die "rocketmq: ip netns add $RMQ_NETNS failed (needs root)"
	if ! ip link show dev "$RMQ_VETH_HOST" >/dev/null 2>&1; then
		ip netns exec "$RMQ_NETNS" ip link del "$RMQ_VETH_NS" 2>/dev/null || true
		ip link add "$RMQ_VETH_HOST" type veth peer name "$RMQ_VETH_NS" ||
			die "rocketmq: cannot create the veth pair $RMQ_VETH_HOST/$RMQ_VETH_NS"
	fi
	if ip link show dev "$RMQ_VETH_NS" >/dev/null 2>&1; then
		ip link set "$RMQ_VETH_NS" netns "$RMQ_NETNS"
	fi
	ip addr replace "$RMQ_NETNS_HOST_IP/30" dev "$RMQ_VETH_HOST"
	ip link set "$RMQ_VETH_HOST" up
	ip netns exec "$RMQ_NETNS" ip addr replace "$RMQ_NETNS_IP/30" dev "$RMQ_VETH_NS"
	ip netns exec "$RMQ_NETNS" ip link set "$RMQ_VETH_NS" up
	ip netns exec "$RMQ_NETNS" ip link set lo up
	_rocketmq_netns_ok || die "rocketmq: the namespace $RMQ_NETNS is not set up as expected"
	log "rocketmq: namespace $RMQ_NETNS ready ($RMQ_NETNS_HOST_IP <-> $RMQ_NETNS_IP)"
}

# _rocketmq_netns_port_open PORT: something accepts connections on the namespace's
# address (from the host side, as clients connect).
_rocketmq_port_open() {
	(exec 3<>"/dev/tcp/$RMQ_NETNS_IP/$1") 2>/dev/null
}

# ---- nodes ------------------------------------------------------------------
# A node is a name server (<group>-namesrv) or a broker (<group>-broker) of
# the group main or fault.

_rocketmq_namesrv_port() { case "$1" in main) echo 9876 ;; fault) echo 9886 ;; acl) echo 9896 ;; wan) echo 9906 ;; esac; }
_rocketmq_broker_port() { case "$1" in main) echo 10911 ;; fault) echo 10931 ;; acl) echo 10951 ;; wan) echo 10971 ;; esac; }
_rocketmq_broker_name() { case "$1" in main) echo broker-a ;; fault) echo broker-f ;; acl) echo broker-acl ;; wan) echo broker-w ;; esac; }
_rocketmq_cluster_name() { case "$1" in main) echo DefaultCluster ;; fault) echo FaultCluster ;; acl) echo AclCluster ;; wan) echo WanCluster ;; esac; }
# The address a group's broker gives clients: the wan group's is on the
# host side, where its proxy listens.
_rocketmq_broker_ip() { case "$1" in wan) echo "$RMQ_NETNS_HOST_IP" ;; *) echo "$RMQ_NETNS_IP" ;; esac; }
_rocketmq_port() { # NODE
	case "$1" in
	*-namesrv) _rocketmq_namesrv_port "${1%-namesrv}" ;;
	*-broker) _rocketmq_broker_port "${1%-broker}" ;;
	esac
}

_rocketmq_marker() { echo "-Dperfclones.rocketmq.node=$RMQ_STATE/$1"; }
_rocketmq_running() { pid_alive "$RMQ_STATE/$1/pid" "$(_rocketmq_marker "$1") "; }
_rocketmq_stray() { pgrep -f -- "^[^ ]*java .*$(_rocketmq_marker "$1") " || true; }
_rocketmq_adopt() {
	local pid
	pid="$(_rocketmq_stray "$1" | head -n 1)"
	[ -n "$pid" ] || return 1
	echo "$pid" >"$RMQ_STATE/$1/pid"
}
_rocketmq_booted() { grep -q 'boot success' "$RMQ_STATE/$1/out.log" 2>/dev/null; }
_rocketmq_up() { _rocketmq_running "$1" && _rocketmq_booted "$1" && _rocketmq_port_open "$(_rocketmq_port "$1")"; }
_rocketmq_up_or_dead() { _rocketmq_up "$1" || ! _rocketmq_running "$1"; }

# _rocketmq_write_conf NODE: (re)write the node's configuration.
_rocketmq_write_conf() {
	local node="$1" group="${1%-*}" dir="$RMQ_STATE/$1"
	mkdir -p "$dir/home"
	case "$node" in
	*-namesrv)
		cat >"$dir/namesrv.conf" <<EOF
# Written by scripts/lib/rocketmq.sh on every start.
listenPort=$(_rocketmq_namesrv_port "$group")
bindAddress=$RMQ_NETNS_IP
EOF
		;;
	*-broker)
		cat >"$dir/broker.conf" <<EOF
# Written by scripts/lib/rocketmq.sh on every start.
brokerClusterName=$(_rocketmq_cluster_name "$group")
brokerName=$(_rocketmq_broker_name "$group")
brokerId=0
brokerRole=ASYNC_MASTER
flushDiskType=ASYNC_FLUSH
namesrvAddr=$RMQ_NETNS_IP:$(_rocketmq_namesrv_port "$group")
listenPort=$(_rocketmq_broker_port "$group")
brokerIP1=$(_rocketmq_broker_ip "$group")
storePathRootDir=$dir/store
storePathCommitLog=$dir/store/commitlog
mappedFileSizeCommitLog=104857600
mappedFileSizeConsumeQueue=6000000
autoCreateTopicEnable=true
autoCreateSubscriptionGroup=true
# Keep at most a few hundred MB of commit log around.
fileReservedTime=1
diskMaxUsedSpaceRatio=95
EOF
		if [ "$group" = acl ]; then
			# RocketMQ 5.3's authentication (ACL 2.0), which checks the
			# HMAC signatures of ACL 1.0 clients: one user, the benchmark's
			# default keys, also for the broker's own client.
			cat >>"$dir/broker.conf" <<EOF
authenticationEnabled=true
authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider
authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider
initAuthenticationUser={"username":"$RMQ_ACL_ACCESS_KEY","password":"$RMQ_ACL_SECRET_KEY"}
innerClientAuthenticationCredentials={"accessKey":"$RMQ_ACL_ACCESS_KEY","secretKey":"$RMQ_ACL_SECRET_KEY"}
authConfigPath=$dir/store/auth
EOF
		fi
		;;
	esac
}

# _rocketmq_launch NODE: start the node's JVM inside the namespace, in its own
# session, with only fds 0-2 (as _kafka_launch), and record its pid.
_rocketmq_launch() {
	local node="$1" dir="$RMQ_STATE/$1" heap class conf fd
	case "$node" in
	*-namesrv) heap="$RMQ_NAMESRV_HEAP" class=org.apache.rocketmq.namesrv.NamesrvStartup conf=namesrv.conf ;;
	*-broker)
		heap="$RMQ_BROKER_HEAP" class=org.apache.rocketmq.broker.BrokerStartup conf=broker.conf
		rm -rf "$dir/store" # every harness start begins with an empty broker
		;;
	esac
	rm -f "$dir/pid"
	: >"$dir/out.log"
	# shellcheck disable=SC2086 # heap is a list of flags
	(
		cd "$dir" || exit 1
		for fd in /proc/"$BASHPID"/fd/*; do
			fd="${fd##*/}"
			if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
		done
		export ROCKETMQ_HOME="$dir/home"
		exec setsid ip netns exec "$RMQ_NETNS" java $heap -XX:+UseG1GC \
			-XX:ErrorFile="$dir/hs_err_pid%p.log" \
			-Duser.home="$dir/home" -Drocketmq.home.dir="$dir/home" \
			-Dlogback.statusListenerClass=org.apache.rocketmq.logging.ch.qos.logback.core.status.NopStatusListener \
			"$(_rocketmq_marker "$node")" \
			-cp "$RMQ_LIB/*" "$class" -c "$dir/$conf"
	) >>"$dir/out.log" 2>&1 </dev/null &
	if ! wait_until 10 _rocketmq_adopt "$node"; then
		tail -n 30 "$dir/out.log" >&2
		die "rocketmq: $node did not start"
	fi
}

# _rocketmq_clear NODE: no JVM of ours runs for NODE.
_rocketmq_clear() {
	local pid
	kill_pidfile "$RMQ_STATE/$1/pid" "$(_rocketmq_marker "$1") "
	for pid in $(_rocketmq_stray "$1"); do
		kill "$pid" 2>/dev/null || true
		wait_until 20 pid_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
	done
}

# _rocketmq_wait_node NODE SECONDS
_rocketmq_wait_node() {
	if ! wait_until "$2" _rocketmq_up_or_dead "$1" || ! _rocketmq_up "$1"; then
		grep -v '|-' "$RMQ_STATE/$1/out.log" | tail -n 30 >&2
		die "rocketmq: $1 did not boot on $RMQ_NETNS_IP:$(_rocketmq_port "$1") (log: ${RMQ_STATE#"$ROOT"/}/$1/out.log and home/logs/)"
	fi
}

# rocketmq_group_start GROUP: start the group's name server and broker unless they
# run, and wait for both (the broker only starts once its name server is up).
rocketmq_group_start() {
	local group="$1" node t0
	t0="$(_rocketmq_ms)"
	_rocketmq_netns
	for node in "$group-namesrv" "$group-broker"; do
		if _rocketmq_running "$node" || { _rocketmq_adopt "$node" && _rocketmq_running "$node"; }; then
			_rocketmq_wait_node "$node" 60
			continue
		fi
		_rocketmq_clear "$node"
		_rocketmq_write_conf "$node"
		_rocketmq_launch "$node"
		_rocketmq_wait_node "$node" 90
		log "rocketmq: $node up on $RMQ_NETNS_IP:$(_rocketmq_port "$node") after $(_rocketmq_since "$t0") s"
	done
}

# rocketmq_group_stop GROUP: SIGTERM both nodes (broker first), then SIGKILL.
rocketmq_group_stop() {
	local node
	for node in "$1-broker" "$1-namesrv"; do _rocketmq_clear "$node"; done
}

# rocketmq_admin ARGS...: RocketMQ's admin tool (mqadmin), run inside the
# namespace so it too only ever talks to the namespace's address. It takes
# 5-9 s, mostly idle (the client's shutdown).
rocketmq_admin() {
	(
		cd "$RMQ_STATE" || exit 1
		ROCKETMQ_HOME="$RMQ_STATE/admin-home" timeout 120 ip netns exec "$RMQ_NETNS" \
			java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
			-Duser.home="$RMQ_STATE/admin-home" \
			-Dlogback.statusListenerClass=org.apache.rocketmq.logging.ch.qos.logback.core.status.NopStatusListener \
			-cp "$RMQ_LIB/*" org.apache.rocketmq.tools.command.MQAdminStartup "$@" 2>&1 |
			grep -v -e '^[0-9:,.]* |-' -e '^$'
	)
}

# _rocketmq_setup GROUP: the seed's topic and group on the group's broker.
_rocketmq_setup() {
	local group="$1" ns out try
	ns="$RMQ_NETNS_IP:$(_rocketmq_namesrv_port "$group")"
	# The admin tool signs its requests with the keys of
	# $ROCKETMQ_HOME/conf/tools.yml: the acl group's user (brokers without
	# authentication ignore the signature).
	mkdir -p "$RMQ_STATE/admin-home/conf"
	printf 'accessKey: %s\nsecretKey: %s\n' "$RMQ_ACL_ACCESS_KEY" "$RMQ_ACL_SECRET_KEY" >"$RMQ_STATE/admin-home/conf/tools.yml"
	# A broker that has just booted may not be registered with its name
	# server yet: the admin tool then finds no broker of the cluster. Retry.
	for try in 1 2 3 4 5 6; do
		out="$(rocketmq_admin updateTopic -n "$ns" -c "$(_rocketmq_cluster_name "$group")" -t "$RMQ_TOPIC" \
			-r "$RMQ_QUEUES" -w "$RMQ_QUEUES")" || true
		grep -q 'success' <<<"$out" && break
		[ "$try" -lt 6 ] || { printf '%s\n' "$out" >&2; die "rocketmq: creating $RMQ_TOPIC on $group failed"; }
		sleep 2
	done
	for try in 1 2 3 4 5 6; do
		out="$(rocketmq_admin updateSubGroup -n "$ns" -c "$(_rocketmq_cluster_name "$group")" -g "$RMQ_GROUP")" || true
		grep -q 'success' <<<"$out" && break
		[ "$try" -lt 6 ] || { printf '%s\n' "$out" >&2; die "rocketmq: creating $RMQ_GROUP on $group failed"; }
		sleep 2
	done
	log "rocketmq: $group: $RMQ_TOPIC ($RMQ_QUEUES queues) and $RMQ_GROUP ready"
}

rocketmq_install() {
	ensure_commands java:openjdk-17-jre-headless mvn:maven flock:util-linux \
		setsid:util-linux pgrep:procps sha256sum:coreutils ip:iproute2
	_rocketmq_fetch
}

rocketmq_start() {
	mkdir -p "$RMQ_STATE"
	local fresh=""
	_rocketmq_running main-broker || fresh=1
	rocketmq_group_start main
	# A broker started now has an empty store: make the topic and group.
	# One that was already running keeps them (and is checked in _wait).
	if [ -n "$fresh" ]; then _rocketmq_setup main; fi
}

# rocketmq_ensure_setup GROUP: the seed's topic and group exist on a broker
# that was already running (one started now gets them from _rocketmq_setup).
rocketmq_ensure_setup() {
	if ! rocketmq_admin topicRoute -n "$RMQ_NETNS_IP:$(_rocketmq_namesrv_port "$1")" -t "$RMQ_TOPIC" |
		grep -q "\"writeQueueNums\":$RMQ_QUEUES"; then
		_rocketmq_setup "$1"
	fi
}

rocketmq_wait() {
	_rocketmq_wait_node main-namesrv 60
	_rocketmq_wait_node main-broker 60
	rocketmq_ensure_setup main
}

rocketmq_env() {
	env_line PERF_ROCKETMQ_NAMESRV "$RMQ_NETNS_IP:$(_rocketmq_namesrv_port main)"
	env_line PERF_ROCKETMQ_BROKER "$RMQ_NETNS_IP:$(_rocketmq_broker_port main)"
	env_line PERF_ROCKETMQ_CLUSTER "$(_rocketmq_cluster_name main)"
	env_line PERF_ROCKETMQ_TOPIC "$RMQ_TOPIC"
	env_line PERF_ROCKETMQ_GROUP "$RMQ_GROUP"
	env_line PERF_ROCKETMQ_QUEUES "$RMQ_QUEUES"
	env_line PERF_ROCKETMQ_FAULT_NAMESRV "$RMQ_NETNS_IP:$(_rocketmq_namesrv_port fault)"
	env_line PERF_ROCKETMQ_ACL_NAMESRV "$RMQ_NETNS_IP:$(_rocketmq_namesrv_port acl)"
	env_line PERF_ROCKETMQ_NETNS "$RMQ_NETNS"
	env_line PERF_ROCKETMQ_VERSION "$RMQ_VERSION"
	env_line PERF_ROCKETMQ_LIB "$RMQ_LIB"
	env_line PERF_ROCKETMQ_NODE "$ROOT/scripts/rocketmq/node"
}

rocketmq_stop() {
	rocketmq_group_stop wan
	rocketmq_group_stop acl
	rocketmq_group_stop fault
	rocketmq_group_stop main
	# The namespace stays: it holds nothing, and other checkouts may share it.
}

rocketmq_status() {
	local node rc=0 state
	for node in main-namesrv main-broker; do
		if _rocketmq_up "$node"; then
			state="up (pid $(cat "$RMQ_STATE/$node/pid"))"
		elif _rocketmq_running "$node"; then
			state="starting (pid $(cat "$RMQ_STATE/$node/pid"))" rc=1
		else
			state=down rc=1
		fi
		printf 'rocketmq %-15s %s:%s %s\n' "$node" "$RMQ_NETNS_IP" "$(_rocketmq_port "$node")" "$state"
	done
	return "$rc"
}
