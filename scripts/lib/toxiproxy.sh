# shellcheck shell=bash
# The Toxiproxy service for scripts/services: one toxiproxy-server on
# 127.0.0.1 that fault and latency tests drive through its HTTP API (the
# Go client in internal/testenv). It puts a proxy between a client and a
# server, with toxics such as latency, reset_peer, timeout and bandwidth.
# Proxies are created by the tests (and by service files that put a server
# behind it), so at start it has none. Functions as in lib/redis.sh.
#
# The server is built from its Go module, at the version below, into
# $SERVICES_DIR/bin/toxiproxy-server.

TOXIPROXY_VERSION=v2.5.0
TOXIPROXY_PORT=18474
TOXIPROXY_STATE="$SERVICES_DIR/toxiproxy"
TOXIPROXY_BIN="$SERVICES_DIR/bin/toxiproxy-server"

toxiproxy_install() {
	[ -x "$TOXIPROXY_BIN" ] && return 0
	use_go
	log "toxiproxy: go install github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
	local gobin
	gobin="$(mktemp -d)"
	GOBIN="$gobin" CGO_ENABLED=0 GOFLAGS=-mod=mod \
		go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" ||
		die "toxiproxy: go install failed"
	mkdir -p "$(dirname "$TOXIPROXY_BIN")"
	mv -f "$gobin/server" "$TOXIPROXY_BIN"
	rm -rf "$gobin"
}

_toxiproxy_up() {
	pid_alive "$TOXIPROXY_STATE/toxiproxy.pid" toxiproxy-server &&
		timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$TOXIPROXY_PORT" 2>/dev/null
}

toxiproxy_start() {
	if _toxiproxy_up; then
		log "toxiproxy: already running on 127.0.0.1:$TOXIPROXY_PORT"
		return 0
	fi
	kill_pidfile "$TOXIPROXY_STATE/toxiproxy.pid" toxiproxy-server
	port_open "$TOXIPROXY_PORT" && die "toxiproxy: port $TOXIPROXY_PORT is in use by another process"
	mkdir -p "$TOXIPROXY_STATE"
	# The server writes its own pid file only through us: a background
	# function is a subshell, so $! is not the server's pid; the inner shell
	# writes $$ just before it becomes the server.
	run_clean bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$TOXIPROXY_STATE/toxiproxy.pid" \
		"$TOXIPROXY_BIN" -host 127.0.0.1 -port "$TOXIPROXY_PORT" \
		>"$TOXIPROXY_STATE/toxiproxy.log" 2>&1 </dev/null &
	log "toxiproxy: started on 127.0.0.1:$TOXIPROXY_PORT"
}

toxiproxy_wait() {
	wait_until 20 _toxiproxy_up || die "toxiproxy: no answer on 127.0.0.1:$TOXIPROXY_PORT (log: $TOXIPROXY_STATE/toxiproxy.log)"
}

toxiproxy_env() {
	env_line PERF_TOXIPROXY_API "127.0.0.1:$TOXIPROXY_PORT"
	env_line PERF_TOXIPROXY_BIN "$TOXIPROXY_BIN"
}

toxiproxy_stop() {
	kill_pidfile "$TOXIPROXY_STATE/toxiproxy.pid" toxiproxy-server
}

toxiproxy_status() {
	if _toxiproxy_up; then
		echo "toxiproxy: up on 127.0.0.1:$TOXIPROXY_PORT"
	else
		echo "toxiproxy: down"
		return 1
	fi
}
