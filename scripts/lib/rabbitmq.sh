# shellcheck shell=bash
# The RabbitMQ service for scripts/services: one private node of Debian's
# rabbitmq-server (3.10 on Debian 12), on 127.0.0.1 only, with its own name,
# ports, cookie and directories, and RabbitMQ PerfTest's jars from Maven
# Central to run beside our clone (scripts/perftest-tool).
#
#   AMQP   127.0.0.1:45672     (the seed's amqp://test:...@host:5672)
#   AMQPS  127.0.0.1:45671     TLS with a CA and a server certificate made here
#                              (subjectAltName DNS:localhost, IP:127.0.0.1)
#   dist   127.0.0.1:45673     Erlang distribution (rabbitmqctl talks to it)
#   epmd   127.0.0.1:45674     a private epmd, so nothing listens beyond loopback
#
# Users: guest/guest (loopback only, as always) and the seed's "test" user,
# administrator on every vhost. Vhosts:
#   /                   empty: PerfTest declares what it uses
#   perf-predeclared    what the seed's --predeclared lines expect to exist:
#                       durable exchanges exchange-direct (direct) and
#                       exchange-fanout (fanout), and quorum queues queue-1,
#                       queue-2 and queue-3. A separate vhost, because the
#                       seed's other lines declare a classic queue-1 on "/".
#
# The functions are those of every service file (see lib/redis.sh). The node
# boots in 10-20 s; rabbitmq_wait waits at most RABBITMQ_BOOT_TIMEOUT (90 s).
#
# State lives in $SERVICES_DIR/rabbitmq/:
#   rabbitmq.conf, definitions.json   written on every start
#   tls/                              ca.pem, server.pem, server.key (made once)
#   node/                             mnesia, logs, pid file, the node's cookie
#   perftest-<version>/               PerfTest and its dependencies (jars)
# When run as root the node runs as the rabbitmq user (node/ belongs to it);
# otherwise as the calling user.

RABBITMQ_PORT=45672
RABBITMQ_TLS_PORT=45671
RABBITMQ_DIST_PORT=45673
RABBITMQ_EPMD_PORT=45674
RABBITMQ_NODE=perfclones@localhost
RABBITMQ_USER=test
RABBITMQ_PASSWORD=perfclones-test
RABBITMQ_PREDECLARED_VHOST=perf-predeclared
RABBITMQ_BOOT_TIMEOUT="${RABBITMQ_BOOT_TIMEOUT:-90}"

# The reference PerfTest: the newest release Maven Central serves with its
# dependencies (2.18.0-2.21.0 are not there).
PERFTEST_VERSION=2.22.1

RABBITMQ_STATE="$SERVICES_DIR/rabbitmq"
RABBITMQ_NODE_DIR="$RABBITMQ_STATE/node"
RABBITMQ_TLS_DIR="$RABBITMQ_STATE/tls"
PERFTEST_LIB="$RABBITMQ_STATE/perftest-$PERFTEST_VERSION"
RABBITMQ_SBIN=/usr/lib/rabbitmq/bin

_rmq_ms() { date +%s%3N; }
_rmq_since() { # START_MS: seconds since START_MS, one decimal
	local d=$(($(_rmq_ms) - $1))
	printf '%d.%d' $((d / 1000)) $((d % 1000 / 100))
}

# _rmq_owner: the user the node runs as.
_rmq_owner() { if [ "$(id -u)" -eq 0 ]; then echo rabbitmq; else id -un; fi; }

# _rmq_as server|cli CMD...: run CMD as the node's user, with the node's
# environment (server) or only what rabbitmqctl needs to find it (cli: its
# cookie and epmd). Debian's wrappers in /usr/sbin would switch to the system
# node's cookie and directories; the scripts in $RABBITMQ_SBIN take
# everything from these variables. (Ports: rabbitmqctl's own distribution
# listener takes a port in 35672-35682, 10000 above the default dist port
# 25672, so the node's ports stay out of that range: AMQP on 35672 fails
# with eaddrinuse whenever await_startup runs while the node boots.)
_rmq_as() {
	local mode="$1" envs=(
		HOME="$RABBITMQ_NODE_DIR"
		ERL_EPMD_ADDRESS=127.0.0.1
		ERL_EPMD_PORT="$RABBITMQ_EPMD_PORT"
		PATH="/usr/lib/rabbitmq/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		LANG=C.UTF-8
	)
	shift
	if [ "$mode" = server ]; then
		envs+=(
			RABBITMQ_NODENAME="$RABBITMQ_NODE"
			RABBITMQ_DIST_PORT="$RABBITMQ_DIST_PORT"
			RABBITMQ_CONFIG_FILE="$RABBITMQ_STATE/rabbitmq.conf"
			RABBITMQ_ADVANCED_CONFIG_FILE="$RABBITMQ_STATE/advanced.config"
			RABBITMQ_CONF_ENV_FILE="$RABBITMQ_STATE/rabbitmq-env.conf"
			RABBITMQ_MNESIA_BASE="$RABBITMQ_NODE_DIR/mnesia"
			RABBITMQ_LOG_BASE="$RABBITMQ_NODE_DIR/log"
			RABBITMQ_PID_FILE="$RABBITMQ_NODE_DIR/rabbitmq.pid"
			RABBITMQ_ENABLED_PLUGINS_FILE="$RABBITMQ_NODE_DIR/enabled_plugins"
			RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
		)
	fi
	if [ "$(id -u)" -eq 0 ]; then
		(cd "$RABBITMQ_NODE_DIR" && runuser -u rabbitmq -- env -i "${envs[@]}" "$@")
	else
		(cd "$RABBITMQ_NODE_DIR" && env -i "${envs[@]}" "$@")
	fi
}

# rabbitmq_ctl ARGS...: rabbitmqctl against our node, never for more than 60 s.
rabbitmq_ctl() {
	_rmq_as cli timeout 60 "$RABBITMQ_SBIN/rabbitmqctl" -n "$RABBITMQ_NODE" "$@"
}

# _rmq_pid: the pid of our node's Erlang VM, from its pid file, if it lives.
_rmq_pid() {
	local pid
	pid="$(cat "$RABBITMQ_NODE_DIR/rabbitmq.pid" 2>/dev/null)" || return 1
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-home $RABBITMQ_NODE_DIR " || return 1
	echo "$pid"
}

# _rmq_stray: pids of Erlang VMs running our node whose pid file was lost.
# (The VM's command line names the node's directory as its home.)
_rmq_stray() { pgrep -f -- "beam.* -home $RABBITMQ_NODE_DIR " || true; }

_rmq_running() { _rmq_pid >/dev/null; }
_rmq_up() { _rmq_running && port_open "$RABBITMQ_PORT" && port_open "$RABBITMQ_TLS_PORT"; }

# ---- PerfTest's jars ---------------------------------------------------------

_perftest_pom() {
	cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by scripts/lib/rabbitmq.sh: PerfTest and its runtime dependencies,
     copied into a directory for java -cp. Nothing is built from it. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.github.perfclones.scripts</groupId>
  <artifactId>perftest-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>com.rabbitmq</groupId>
      <artifactId>perf-test</artifactId>
      <version>$PERFTEST_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
}

# perftest_fetched: PERFTEST_LIB holds this version's jars.
perftest_fetched() { [ -f "$PERFTEST_LIB/.fetched" ] && ls "$PERFTEST_LIB"/perf-test-*.jar >/dev/null 2>&1; }

# perftest_fetch: copy PerfTest's jars into PERFTEST_LIB with Maven, once.
# Safe to run concurrently: one fetch at a time, the directory appears whole.
perftest_fetch() {
	perftest_fetched && return 0
	mkdir -p "$RABBITMQ_STATE"
	(
		flock -w 900 8 || die "rabbitmq: another fetch of $PERFTEST_LIB is still running"
		perftest_fetched && exit 0
		command -v mvn >/dev/null || die "rabbitmq: mvn not found (apt-get install maven)"
		local t0 tmp
		t0="$(_rmq_ms)"
		tmp="$PERFTEST_LIB.tmp.$$"
		rm -rf "$tmp"
		mkdir -p "$tmp"
		_perftest_pom >"$tmp/pom.xml"
		log "rabbitmq: fetching PerfTest $PERFTEST_VERSION's jars from Maven Central into ${PERFTEST_LIB#"$ROOT"/}"
		if ! mvn -B -q -Dstyle.color=never -f "$tmp/pom.xml" \
			org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$tmp" >"$tmp.log" 2>&1; then
			tail -n 30 "$tmp.log" >&2
			rm -rf "$tmp"
			die "rabbitmq: mvn could not fetch PerfTest $PERFTEST_VERSION (log: $tmp.log)"
		fi
		rm -f "$tmp.log" "$tmp/pom.xml"
		echo "$PERFTEST_VERSION" >"$tmp/.fetched"
		rm -rf "$PERFTEST_LIB"
		mv "$tmp" "$PERFTEST_LIB"
		log "rabbitmq: fetched $(find "$PERFTEST_LIB" -name '*.jar' | wc -l) jars in $(_rmq_since "$t0") s"
	) 8>"$PERFTEST_LIB.lock"
}

# ---- TLS ----------------------------------------------------------------------

# _rmq_tls: a CA and a server certificate for localhost and 127.0.0.1, made
# once (10 years), readable by the node's user.
_rmq_tls() {
	local d="$RABBITMQ_TLS_DIR"
	[ -s "$d/ca.pem" ] && [ -s "$d/server.pem" ] && [ -s "$d/server.key" ] && return 0
	mkdir -p "$d"
	rm -f "$d"/*
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 \
		-subj "/CN=perfclones test CA" -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null ||
		die "rabbitmq: openssl could not make the CA"
	openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=localhost" \
		-keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null ||
		die "rabbitmq: openssl could not make the server key"
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$d/ext.cnf"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-CAcreateserial -days 3650 -sha256 -extfile "$d/ext.cnf" -out "$d/server.pem" 2>/dev/null ||
		die "rabbitmq: openssl could not sign the server certificate"
	rm -f "$d/server.csr" "$d/ext.cnf"
	chmod 644 "$d/ca.pem" "$d/server.pem"
	chmod 640 "$d/server.key" "$d/ca.key"
	[ "$(id -u)" -eq 0 ] && chgrp rabbitmq "$d/server.key"
	return 0
}

# ---- definitions ----------------------------------------------------------------

# _rmq_hash PASSWORD: RabbitMQ's rabbit_password_hashing_sha256 hash: base64
# of a 4-byte salt followed by sha256(salt ++ password).
_rmq_hash() {
	local salt
	salt="$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	{
		printf '%s' "$salt" | xxd -r -p
		{ printf '%s' "$salt" | xxd -r -p; printf '%s' "$1"; } | sha256sum | cut -d' ' -f1 | xxd -r -p
	} | base64 -w0
}

# _rmq_definitions: the users, vhosts, permissions, exchanges and queues the
# node loads when it boots (load_definitions).
_rmq_definitions() {
	local v="$RABBITMQ_PREDECLARED_VHOST" q queues="" sep=""
	for q in queue-1 queue-2 queue-3; do
		queues+="$sep"'{"name":"'"$q"'","vhost":"'"$v"'","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"quorum"}}'
		sep=,
	done
	cat <<EOF
{
  "users": [
    {"name": "guest", "password_hash": "$(_rmq_hash guest)", "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": "administrator"},
    {"name": "$RABBITMQ_USER", "password_hash": "$(_rmq_hash "$RABBITMQ_PASSWORD")", "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": "administrator"}
  ],
  "vhosts": [{"name": "/"}, {"name": "$v"}],
  "permissions": [
    {"user": "guest", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"},
    {"user": "guest", "vhost": "$v", "configure": ".*", "write": ".*", "read": ".*"},
    {"user": "$RABBITMQ_USER", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"},
    {"user": "$RABBITMQ_USER", "vhost": "$v", "configure": ".*", "write": ".*", "read": ".*"}
  ],
  "exchanges": [
    {"name": "exchange-direct", "vhost": "$v", "type": "direct", "durable": true, "auto_delete": false, "internal": false, "arguments": {}},
    {"name": "exchange-fanout", "vhost": "$v", "type": "fanout", "durable": true, "auto_delete": false, "internal": false, "arguments": {}}
  ],
  "queues": [$queues],
  "bindings": []
}
EOF
}

_rmq_write_config() {
	local s="$RABBITMQ_STATE"
	_rmq_definitions >"$s/definitions.json"
	cat >"$s/rabbitmq.conf" <<EOF
# Written by scripts/lib/rabbitmq.sh on every start; edit that file, not this one.
listeners.tcp.default = 127.0.0.1:$RABBITMQ_PORT
listeners.ssl.default = 127.0.0.1:$RABBITMQ_TLS_PORT
ssl_options.cacertfile = $RABBITMQ_TLS_DIR/ca.pem
ssl_options.certfile = $RABBITMQ_TLS_DIR/server.pem
ssl_options.keyfile = $RABBITMQ_TLS_DIR/server.key
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
load_definitions = $s/definitions.json
loopback_users = none
log.console = false
log.file.level = warning
# The machine is shared: keep the node small and quiet.
vm_memory_high_watermark.relative = 0.2
disk_free_limit.absolute = 200MB
collect_statistics_interval = 30000
EOF
	: >"$s/rabbitmq-env.conf"
	echo '[].' >"$s/advanced.config"
	chmod 644 "$s/rabbitmq.conf" "$s/definitions.json" "$s/rabbitmq-env.conf" "$s/advanced.config"
}

# ---- the service functions ------------------------------------------------------

rabbitmq_install() {
	ensure_commands java:openjdk-17-jre-headless mvn:maven flock:util-linux \
		openssl:openssl xxd:xxd pgrep:procps runuser:util-linux
	[ -x "$RABBITMQ_SBIN/rabbitmq-server" ] || apt_install rabbitmq-server
	# The WebServer test draws PerfTestMulti's pages in headless Chromium.
	ensure_commands chromium:chromium
	# (Where init runs, installing the package also starts Debian's system
	# node on the default ports; ours shares nothing with it.)
	perftest_fetch
}

rabbitmq_start() {
	local t0 pid
	t0="$(_rmq_ms)"
	mkdir -p "$RABBITMQ_STATE" "$RABBITMQ_NODE_DIR/log" "$RABBITMQ_NODE_DIR/mnesia"
	if _rmq_running; then
		log "rabbitmq: $RABBITMQ_NODE already running on 127.0.0.1:$RABBITMQ_PORT"
		return 0
	fi
	for pid in $(_rmq_stray); do
		log "rabbitmq: stopping a stray node (pid $pid)"
		kill "$pid" 2>/dev/null || true
		wait_until 30 pid_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
	done
	for p in "$RABBITMQ_PORT" "$RABBITMQ_TLS_PORT" "$RABBITMQ_DIST_PORT"; do
		port_open "$p" && die "rabbitmq: port $p is in use by another process; stop it first"
	done
	_rmq_tls
	_rmq_write_config
	# The cookie is the node's own, not the system node's.
	if [ ! -s "$RABBITMQ_NODE_DIR/.erlang.cookie" ]; then
		head -c 15 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20 >"$RABBITMQ_NODE_DIR/.erlang.cookie"
	fi
	chmod 400 "$RABBITMQ_NODE_DIR/.erlang.cookie"
	[ "$(id -u)" -eq 0 ] && chown -R rabbitmq:rabbitmq "$RABBITMQ_NODE_DIR"
	rm -f "$RABBITMQ_NODE_DIR/rabbitmq.pid"
	# The node detaches (-detached); its console output is kept in startup.log.
	_rmq_as server "$RABBITMQ_SBIN/rabbitmq-server" -detached \
		>>"$RABBITMQ_STATE/startup.log" 2>&1 </dev/null ||
		die "rabbitmq: rabbitmq-server -detached failed (log: ${RABBITMQ_STATE#"$ROOT"/}/startup.log)"
	log "rabbitmq: launched $RABBITMQ_NODE ($(_rmq_owner)) in $(_rmq_since "$t0") s"
}

# _rmq_booted: the node answers await_startup (which fails at once until the
# node has registered with epmd, so it is retried).
_rmq_booted() { rabbitmq_ctl await_startup --timeout 10 >/dev/null 2>&1; }

rabbitmq_wait() {
	local t0 deadline why
	t0="$(_rmq_ms)"
	deadline=$((SECONDS + RABBITMQ_BOOT_TIMEOUT))
	until _rmq_booted; do
		if [ "$SECONDS" -ge "$deadline" ] || { ! _rmq_running && [ "$(_rmq_since "$t0" | cut -d. -f1)" -gt 15 ]; }; then
			tail -n 20 "$RABBITMQ_STATE/startup.log" >&2 || true
			tail -n 20 "$RABBITMQ_NODE_DIR/log/$RABBITMQ_NODE.log" >&2 2>/dev/null || true
			if _rmq_running; then why="did not boot within $RABBITMQ_BOOT_TIMEOUT s"; else why="stopped while booting"; fi
			die "rabbitmq: $RABBITMQ_NODE $why" \
				"(logs: ${RABBITMQ_STATE#"$ROOT"/}/startup.log, ${RABBITMQ_NODE_DIR#"$ROOT"/}/log/)"
		fi
		sleep 1
	done
	wait_until 10 _rmq_up || die "rabbitmq: the node booted but 127.0.0.1:$RABBITMQ_PORT or :$RABBITMQ_TLS_PORT does not accept connections"
	# The definitions load at boot; check that they did.
	rabbitmq_ctl list_queues -p "$RABBITMQ_PREDECLARED_VHOST" -q name type 2>/dev/null |
		grep -q '^queue-1[[:space:]]*quorum' ||
		die "rabbitmq: the quorum queue queue-1 is missing from vhost $RABBITMQ_PREDECLARED_VHOST"
	log "rabbitmq: $RABBITMQ_NODE ready after $(_rmq_since "$t0") s"
}

rabbitmq_env() {
	env_line PERF_RABBITMQ_URI "amqp://$RABBITMQ_USER:$RABBITMQ_PASSWORD@127.0.0.1:$RABBITMQ_PORT"
	env_line PERF_RABBITMQ_TLS_URI "amqps://$RABBITMQ_USER:$RABBITMQ_PASSWORD@127.0.0.1:$RABBITMQ_TLS_PORT"
	env_line PERF_RABBITMQ_PREDECLARED_VHOST "$RABBITMQ_PREDECLARED_VHOST"
	env_line PERF_RABBITMQ_CA "$RABBITMQ_TLS_DIR/ca.pem"
	env_line PERF_RABBITMQ_NODE "$RABBITMQ_NODE"
	env_line PERF_RABBITMQ_CTL "$ROOT/scripts/perftest-tool rabbitmqctl"
	env_line PERF_PERFTEST_TOOL "$ROOT/scripts/perftest-tool"
	env_line PERF_PERFTEST_VERSION "$PERFTEST_VERSION"
	env_line PERF_PERFTEST_LIB "$PERFTEST_LIB"
}

rabbitmq_stop() {
	local pid t0
	t0="$(_rmq_ms)"
	pid="$(_rmq_pid)" || pid=""
	if [ -z "$pid" ] && [ -z "$(_rmq_stray)" ]; then return 0; fi
	rabbitmq_ctl shutdown >/dev/null 2>&1 || true
	for pid in $pid $(_rmq_stray); do
		wait_until 30 pid_gone "$pid" || {
			log "rabbitmq: pid $pid still running after 30 s; killing it"
			kill -9 "$pid" 2>/dev/null || true
		}
	done
	# The private epmd outlives the node; it has nothing left to serve.
	_rmq_as cli epmd -port "$RABBITMQ_EPMD_PORT" -kill >/dev/null 2>&1 || true
	rm -f "$RABBITMQ_NODE_DIR/rabbitmq.pid"
	log "rabbitmq: stopped $RABBITMQ_NODE in $(_rmq_since "$t0") s"
}

rabbitmq_status() {
	local state rc=0
	if _rmq_up; then
		state="up (pid $(_rmq_pid))"
	elif _rmq_running; then
		state="starting (pid $(_rmq_pid))" rc=1
	else
		state=down rc=1
	fi
	printf 'rabbitmq %-12s 127.0.0.1:%s,%s (tls) %s\n' "$RABBITMQ_NODE" "$RABBITMQ_PORT" "$RABBITMQ_TLS_PORT" "$state"
	return "$rc"
}
