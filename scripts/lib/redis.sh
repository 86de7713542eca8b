# shellcheck shell=bash
# The Redis service for scripts/services: a standalone server, a server that
# requires a password and knows an ACL user, and a 3-master cluster, all on
# 127.0.0.1. Every service file defines the same functions:
#
#   <svc>_install   install what is missing (Debian packages)
#   <svc>_start     start every server that is not already running (idempotent)
#   <svc>_wait      wait until every server answers; fail if one does not
#   <svc>_env       print the `export PERF_...=...` lines for .services/env
#   <svc>_stop      stop every server this script started
#   <svc>_status    print one line per server; fail if one is down
#
# State lives in $SERVICES_DIR/redis/<instance>/ (redis.conf, redis.pid,
# redis.log, data files).

REDIS_PORT=16379
REDIS_AUTH_PORT=16380
REDIS_AUTH_PASSWORD=perfclones-auth-pass
REDIS_ACL_USER=benchuser
REDIS_ACL_PASSWORD=benchpass
REDIS_CLUSTER_PORTS=(17101 17102 17103)

REDIS_STATE="$SERVICES_DIR/redis"

# _rcli PORT ARGS...: redis-cli against 127.0.0.1:PORT, authenticated where
# the server needs it, never hanging for more than 5 s.
_rcli() {
	local port="$1" auth=()
	shift
	[ "$port" = "$REDIS_AUTH_PORT" ] && auth=(-a "$REDIS_AUTH_PASSWORD")
	timeout 5 redis-cli -h 127.0.0.1 -p "$port" "${auth[@]}" --no-auth-warning "$@" 2>/dev/null
}

_redis_ping() { [ "$(_rcli "$1" ping | tr -d '\r')" = PONG ]; }

_redis_name() {
	case "$1" in
	"$REDIS_PORT") echo standalone ;;
	"$REDIS_AUTH_PORT") echo auth ;;
	*) echo "cluster-$1" ;;
	esac
}

_redis_up() { # PORT: our server on PORT is running and answers PING
	local dir
	dir="$REDIS_STATE/$(_redis_name "$1")"
	pid_alive "$dir/redis.pid" redis-server && _redis_ping "$1"
}

# _redis_evict PORT: a server answers on PORT without a live pid file of ours.
# If it runs from our state directory (its pid file was lost), shut it down;
# otherwise it belongs to someone else and we stop here.
_redis_evict() {
	local port="$1" want dir
	want="$REDIS_STATE/$(_redis_name "$port")"
	dir="$(_rcli "$port" config get dir | tr -d '\r' | sed -n 2p)"
	if [ "$dir" = "$want" ]; then
		log "redis: shutting down a stale server on port $port"
		_rcli "$port" shutdown nosave >/dev/null || true
		wait_until 10 port_closed "$port" || die "redis: port $port stays busy"
	else
		die "redis: port $port is in use by another process (dir ${dir:-unknown}); stop it first"
	fi
}

# _redis_launch PORT [CONFIG LINE...]: start one daemonized redis-server.
_redis_launch() {
	local port="$1" name dir line
	shift
	name="$(_redis_name "$port")"
	dir="$REDIS_STATE/$name"
	if _redis_up "$port"; then
		log "redis: $name already running on 127.0.0.1:$port"
		return 0
	fi
	kill_pidfile "$dir/redis.pid" redis-server
	if port_open "$port"; then _redis_evict "$port"; fi
	mkdir -p "$dir"
	{
		echo "bind 127.0.0.1"
		echo "port $port"
		echo "protected-mode yes"
		echo "daemonize yes"
		echo "pidfile \"$dir/redis.pid\""
		echo "logfile \"$dir/redis.log\""
		echo "dir \"$dir\""
		echo 'save ""'
		echo "appendonly no"
		for line in "$@"; do echo "$line"; done
	} >"$dir/redis.conf"
	run_clean redis-server "$dir/redis.conf" </dev/null >>"$dir/redis.log" 2>&1 ||
		{ tail -n 20 "$dir/redis.log" >&2; die "redis: $name failed to start"; }
	if ! wait_until 15 _redis_up "$port"; then
		tail -n 20 "$dir/redis.log" >&2
		die "redis: $name on port $port does not answer PING"
	fi
	log "redis: $name started on 127.0.0.1:$port"
}

# _redis_shutdown PORT: stop our server on PORT (SHUTDOWN NOSAVE, then signals).
_redis_shutdown() {
	local port="$1" dir pid
	dir="$REDIS_STATE/$(_redis_name "$port")"
	if pid_alive "$dir/redis.pid" redis-server; then
		pid="$(cat "$dir/redis.pid")"
		_rcli "$port" shutdown nosave >/dev/null || true
		wait_until 10 pid_gone "$pid" || kill_pidfile "$dir/redis.pid" redis-server
		rm -f "$dir/redis.pid"
		log "redis: $(_redis_name "$port") stopped"
	elif port_open "$port" &&
		[ "$(_rcli "$port" config get dir | tr -d '\r' | sed -n 2p)" = "$dir" ]; then
		_redis_evict "$port"
	fi
}

_redis_cluster_ok() { # PORT: this node sees the whole 3-master cluster as ok
	local info
	info="$(_rcli "$1" cluster info | tr -d '\r')" || return 1
	grep -qx 'cluster_state:ok' <<<"$info" &&
		grep -qx "cluster_size:${#REDIS_CLUSTER_PORTS[@]}" <<<"$info" &&
		grep -qx "cluster_known_nodes:${#REDIS_CLUSTER_PORTS[@]}" <<<"$info"
}

_redis_cluster_healthy() {
	local port
	for port in "${REDIS_CLUSTER_PORTS[@]}"; do
		_redis_up "$port" && _redis_cluster_ok "$port" || return 1
	done
}

redis_install() {
	ensure_commands redis-server:redis-server redis-cli:redis-tools \
		redis-benchmark:redis-tools timeout:coreutils
}

redis_start() {
	local port addrs=()
	mkdir -p "$REDIS_STATE"
	_redis_launch "$REDIS_PORT"
	_redis_launch "$REDIS_AUTH_PORT" \
		"requirepass \"$REDIS_AUTH_PASSWORD\"" \
		"user $REDIS_ACL_USER on >$REDIS_ACL_PASSWORD ~* &* +@all"

	if _redis_cluster_healthy; then
		log "redis: cluster already running on ports ${REDIS_CLUSTER_PORTS[*]}"
		return 0
	fi
	# Anything short of a healthy cluster: start it again from empty state.
	for port in "${REDIS_CLUSTER_PORTS[@]}"; do
		_redis_shutdown "$port"
		rm -rf "${REDIS_STATE:?}/$(_redis_name "$port")"
	done
	for port in "${REDIS_CLUSTER_PORTS[@]}"; do
		_redis_launch "$port" \
			"cluster-enabled yes" \
			"cluster-config-file nodes.conf" \
			"cluster-node-timeout 5000"
		addrs+=("127.0.0.1:$port")
	done
	if ! timeout 60 redis-cli --cluster create "${addrs[@]}" \
		--cluster-replicas 0 --cluster-yes >"$REDIS_STATE/cluster-create.log" 2>&1; then
		cat "$REDIS_STATE/cluster-create.log" >&2
		die "redis: cluster create failed"
	fi
	log "redis: cluster created on ports ${REDIS_CLUSTER_PORTS[*]}"
}

redis_wait() {
	local port
	for port in "$REDIS_PORT" "$REDIS_AUTH_PORT" "${REDIS_CLUSTER_PORTS[@]}"; do
		wait_until 15 _redis_up "$port" ||
			die "redis: $(_redis_name "$port") on port $port does not answer PING"
	done
	# The password and the ACL user must both work on the auth server.
	[ "$(timeout 5 redis-cli -p "$REDIS_AUTH_PORT" --user "$REDIS_ACL_USER" \
		-a "$REDIS_ACL_PASSWORD" --no-auth-warning ping 2>/dev/null | tr -d '\r')" = PONG ] ||
		die "redis: ACL user $REDIS_ACL_USER cannot log in on port $REDIS_AUTH_PORT"
	for port in "${REDIS_CLUSTER_PORTS[@]}"; do
		wait_until 30 _redis_cluster_ok "$port" || {
			_rcli "$port" cluster info >&2 || true
			die "redis: cluster node $port never reached cluster_state:ok"
		}
	done
}

redis_env() {
	local cluster
	cluster="$(printf '127.0.0.1:%s,' "${REDIS_CLUSTER_PORTS[@]}")"
	env_line PERF_REDIS_ADDR "127.0.0.1:$REDIS_PORT"
	env_line PERF_REDIS_AUTH_ADDR "127.0.0.1:$REDIS_AUTH_PORT"
	env_line PERF_REDIS_AUTH_PASSWORD "$REDIS_AUTH_PASSWORD"
	env_line PERF_REDIS_ACL_USER "$REDIS_ACL_USER"
	env_line PERF_REDIS_ACL_PASSWORD "$REDIS_ACL_PASSWORD"
	env_line PERF_REDIS_CLUSTER_ADDRS "${cluster%,}"
	env_line PERF_REDIS_BENCHMARK_C "$(command -v redis-benchmark)"
}

redis_stop() {
	local port pids=() rc=0
	# In parallel: a server takes about a second to exit after SHUTDOWN.
	for port in "${REDIS_CLUSTER_PORTS[@]}" "$REDIS_AUTH_PORT" "$REDIS_PORT"; do
		_redis_shutdown "$port" &
		pids+=("$!")
	done
	for port in "${pids[@]}"; do wait "$port" || rc=1; done
	return "$rc"
}

redis_status() {
	local port name rc=0 state
	for port in "$REDIS_PORT" "$REDIS_AUTH_PORT" "${REDIS_CLUSTER_PORTS[@]}"; do
		name="$(_redis_name "$port")"
		if _redis_up "$port"; then
			state="up (pid $(cat "$REDIS_STATE/$name/redis.pid"))"
			case "$name" in cluster-*)
				if _redis_cluster_ok "$port"; then state+=", cluster_state:ok"
				else state+=", cluster not ok"; rc=1; fi
			esac
		else
			state=down rc=1
		fi
		printf 'redis %-15s 127.0.0.1:%s %s\n' "$name" "$port" "$state"
	done
	return "$rc"
}
