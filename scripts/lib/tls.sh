# shellcheck shell=bash
# Certificates and a private TLS Kafka node for the TLS compatibility tests
# (compat_tls_test.go, through internal/testenv/tls.go). Nothing here is a
# shared service: scripts/services does not start it, and it never touches
# the shared servers. Source it after lib/common.sh (and lib/kafka.sh for the
# Kafka functions), or run it:
#
#   scripts/lib/tls.sh certs DIR         make the certificates below in DIR
#   scripts/lib/tls.sh kafka-start DIR   start the TLS Kafka node with DIR's certificates
#   scripts/lib/tls.sh kafka-stop        stop it
#
# tls_certs DIR writes (keys are EC P-256, quick to make; PEM unless named .p12):
#   ca.pem ca.key                 the CA every "good" certificate is signed by
#   cadir/                        ca.pem under its OpenSSL subject hash (<hash>.0)
#   wrong-ca.pem wrong-ca.key     an unrelated CA
#   server-dns.pem .key           CN=localhost, subjectAltName DNS:localhost only
#   server-ip.pem .key            CN=127.0.0.1, subjectAltName IP:127.0.0.1 only
#   server-wrong.pem .key         DNS:localhost, IP:127.0.0.1, signed by the wrong CA
#   client.pem client.key         a client certificate (clientAuth) signed by ca
#   client-bundle.pem             client.key and client.pem in one file (a PEM key store)
#   client-wrong.pem .key         the same, signed by the wrong CA
#   bad.pem                       a file that holds no certificate
#   truststore.p12                ca.pem as a trusted entry (keytool), password $TLS_STORE_PASSWORD
#   wrong-truststore.p12          wrong-ca.pem, the same way
#   server-ip.p12 server-dns.p12  key and chain, for the Kafka node
#   client.p12                    the client's key and chain
# Every .p12 has the password $TLS_STORE_PASSWORD. Certificates are made at
# test time and never committed.
#
# The Kafka node (state in $SERVICES_DIR/kafka-tls/, formatted anew on every
# start, one JVM with a small heap) listens on 127.0.0.1:
#   19892 SSL        server-ip.p12 (the host name 127.0.0.1 verifies)
#   19893 SASL_SSL   server-ip.p12; PLAIN user $TLS_SASL_USER, and the same
#                    user and password as SCRAM-SHA-256 and SCRAM-SHA-512
#   19894 CONTROLLER plaintext, KRaft only
#   19895 PLAINTEXT  for the broker itself (inter-broker listener)
#   19896 SSL        server-dns.p12 (DNS:localhost only: 127.0.0.1 does not verify)
#   19897 SSL        server-ip.p12, client certificates required (ssl.client.auth)

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	# shellcheck source=scripts/lib/common.sh
	. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fi

TLS_STORE_PASSWORD=perfclones-store
TLS_SASL_USER=alice
TLS_SASL_PASSWORD=alice-secret
TLS_KAFKA_SSL_PORT=19892
TLS_KAFKA_SASL_PORT=19893
TLS_KAFKA_CONTROLLER_PORT=19894
TLS_KAFKA_PLAIN_PORT=19895
TLS_KAFKA_DNS_PORT=19896
TLS_KAFKA_MTLS_PORT=19897
TLS_KAFKA_STATE="$SERVICES_DIR/kafka-tls"
TLS_KAFKA_HEAP="${TLS_KAFKA_HEAP_OPTS:--Xmx256m -Xms256m}"
# How long tls_kafka_start waits for ports another checkout's node holds.
TLS_KAFKA_PORT_WAIT="${TLS_KAFKA_PORT_WAIT:-240}"

# _tls_sign DIR NAME CA SUBJECT EXT: a key and a certificate NAME.pem signed
# by CA, with the extension lines EXT.
_tls_sign() {
	local d="$1" name="$2" ca="$3" subj="$4" ext="$5"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-subj "$subj" -keyout "$d/$name.key" -out "$d/$name.csr" 2>/dev/null ||
		die "tls: openssl could not make the key of $name"
	printf '%s\n' "$ext" >"$d/$name.ext"
	openssl x509 -req -in "$d/$name.csr" -CA "$d/$ca.pem" -CAkey "$d/$ca.key" \
		-CAcreateserial -days 30 -sha256 -extfile "$d/$name.ext" -out "$d/$name.pem" 2>/dev/null ||
		die "tls: openssl could not sign $name"
	rm -f "$d/$name.csr" "$d/$name.ext"
}

# _tls_ca DIR NAME CN: a self-signed CA.
_tls_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 -sha256 \
		-subj "/CN=$3" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
		-keyout "$1/$2.key" -out "$1/$2.pem" 2>/dev/null || die "tls: openssl could not make the CA $2"
}

# _tls_p12 DIR NAME CA: NAME's key and chain as a PKCS12 key store.
_tls_p12() {
	openssl pkcs12 -export -in "$1/$2.pem" -inkey "$1/$2.key" -certfile "$1/$3.pem" \
		-name "$2" -passout "pass:$TLS_STORE_PASSWORD" -out "$1/$2.p12" 2>/dev/null ||
		die "tls: openssl could not write $2.p12"
}

# _tls_truststore DIR NAME CA: CA as a trusted entry of a PKCS12 trust store.
# keytool marks it trusted for Java; openssl 3.0's pkcs12 cannot.
_tls_truststore() {
	rm -f "$1/$2.p12"
	keytool -importcert -noprompt -alias ca -file "$1/$3.pem" -keystore "$1/$2.p12" \
		-storetype PKCS12 -storepass "$TLS_STORE_PASSWORD" >/dev/null 2>&1 ||
		die "tls: keytool could not write $2.p12"
}

tls_certs() {
	local d="$1" server="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth"
	command -v openssl >/dev/null || die "tls: openssl not found (apt-get install openssl)"
	mkdir -p "$d/cadir"
	_tls_ca "$d" ca "perfclones test CA"
	_tls_ca "$d" wrong-ca "perfclones wrong CA"
	_tls_sign "$d" server-dns ca /CN=localhost "$server
subjectAltName=DNS:localhost"
	_tls_sign "$d" server-ip ca /CN=127.0.0.1 "$server
subjectAltName=IP:127.0.0.1"
	_tls_sign "$d" server-wrong wrong-ca /CN=localhost "$server
subjectAltName=DNS:localhost,IP:127.0.0.1"
	_tls_sign "$d" client ca /CN=perfclones-client "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
	_tls_sign "$d" client-wrong wrong-ca /CN=perfclones-client "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
	cat "$d/client.key" "$d/client.pem" >"$d/client-bundle.pem"
	echo "this is not a certificate" >"$d/bad.pem"
	cp "$d/ca.pem" "$d/cadir/$(openssl x509 -noout -subject_hash -in "$d/ca.pem").0"
	_tls_p12 "$d" server-ip ca
	_tls_p12 "$d" server-dns ca
	_tls_p12 "$d" client ca
	if command -v keytool >/dev/null; then
		_tls_truststore "$d" truststore ca
		_tls_truststore "$d" wrong-truststore wrong-ca
	fi
	rm -f "$d"/*.srl
}

# ---- the TLS Kafka node --------------------------------------------------------

_tls_kafka_marker() { echo "-Dperfclones.kafka.node=$TLS_KAFKA_STATE"; }
_tls_kafka_pids() { pgrep -f -- "^[^ ]*java .*$(_tls_kafka_marker) " || true; }

tls_kafka_stop() {
	local pid
	for pid in $(_tls_kafka_pids); do
		kill "$pid" 2>/dev/null || true
		wait_until 20 pid_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
	done
	rm -f "$TLS_KAFKA_STATE/kafka.pid"
}

_tls_kafka_props() {
	local d="$1" s="$TLS_KAFKA_STATE" pw="$TLS_STORE_PASSWORD" m
	cat <<EOF
# Written by scripts/lib/tls.sh on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$TLS_KAFKA_CONTROLLER_PORT
listeners=SSL://127.0.0.1:$TLS_KAFKA_SSL_PORT,SASL_SSL://127.0.0.1:$TLS_KAFKA_SASL_PORT,CONTROLLER://127.0.0.1:$TLS_KAFKA_CONTROLLER_PORT,PLAINTEXT://127.0.0.1:$TLS_KAFKA_PLAIN_PORT,DNSONLY://127.0.0.1:$TLS_KAFKA_DNS_PORT,MTLS://127.0.0.1:$TLS_KAFKA_MTLS_PORT
advertised.listeners=SSL://127.0.0.1:$TLS_KAFKA_SSL_PORT,SASL_SSL://127.0.0.1:$TLS_KAFKA_SASL_PORT,PLAINTEXT://127.0.0.1:$TLS_KAFKA_PLAIN_PORT,DNSONLY://127.0.0.1:$TLS_KAFKA_DNS_PORT,MTLS://127.0.0.1:$TLS_KAFKA_MTLS_PORT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,DNSONLY:SSL,MTLS:SSL
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$s/data

ssl.keystore.type=PKCS12
ssl.keystore.location=$d/server-ip.p12
ssl.keystore.password=$pw
ssl.key.password=$pw
ssl.truststore.type=PEM
ssl.truststore.location=$d/ca.pem
listener.name.dnsonly.ssl.keystore.type=PKCS12
listener.name.dnsonly.ssl.keystore.location=$d/server-dns.p12
listener.name.dnsonly.ssl.keystore.password=$pw
listener.name.dnsonly.ssl.key.password=$pw
listener.name.mtls.ssl.client.auth=required

sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$TLS_SASL_USER="$TLS_SASL_PASSWORD";
EOF
	for m in scram-sha-256 scram-sha-512; do
		echo "listener.name.sasl_ssl.$m.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
	done
	cat <<EOF

auto.create.topics.enable=true
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.cleaner.dedupe.buffer.size=16777216
log.retention.ms=3600000
EOF
}

_tls_kafka_up() {
	local p
	for p in "$TLS_KAFKA_SSL_PORT" "$TLS_KAFKA_SASL_PORT" "$TLS_KAFKA_PLAIN_PORT" "$TLS_KAFKA_DNS_PORT" "$TLS_KAFKA_MTLS_PORT"; do
		port_open "$p" || return 1
	done
}

_tls_kafka_ports_free() {
	local p
	for p in "$TLS_KAFKA_SSL_PORT" "$TLS_KAFKA_SASL_PORT" "$TLS_KAFKA_CONTROLLER_PORT" \
		"$TLS_KAFKA_PLAIN_PORT" "$TLS_KAFKA_DNS_PORT" "$TLS_KAFKA_MTLS_PORT"; do
		port_closed "$p" || return 1
	done
}

_tls_kafka_alive() { [ -n "$(_tls_kafka_pids)" ]; }
_tls_kafka_up_or_dead() { _tls_kafka_up || ! _tls_kafka_alive; }

# tls_kafka_start DIR: a fresh TLS node with the certificates of DIR (made by
# tls_certs); returns once every listener accepts connections.
tls_kafka_start() {
	local d s="$TLS_KAFKA_STATE" m scram=() t0
	d="$(cd "$1" && pwd)" || die "tls: no certificate directory $1"
	t0="$(_kafka_ms)"
	[ -f "$d/server-ip.p12" ] || die "tls: $d has no server-ip.p12 (run tls_certs first)"
	_kafka_fetched "$KAFKA_POM" "$KAFKA_LIB" || _kafka_fetch "$KAFKA_POM" "$KAFKA_LIB"
	tls_kafka_stop
	# Another checkout's test may hold the ports for its own node a while.
	if ! _tls_kafka_ports_free; then
		log "tls: waiting up to ${TLS_KAFKA_PORT_WAIT}s for ports $TLS_KAFKA_SSL_PORT-$TLS_KAFKA_MTLS_PORT (in use by another process)"
		wait_until "$TLS_KAFKA_PORT_WAIT" _tls_kafka_ports_free ||
			die "tls: a port of $TLS_KAFKA_SSL_PORT-$TLS_KAFKA_MTLS_PORT is still in use by another process"
	fi
	rm -rf "$s"
	mkdir -p "$s"
	_tls_kafka_props "$d" >"$s/server.properties"
	for m in SCRAM-SHA-256 SCRAM-SHA-512; do
		scram+=(--add-scram "$m=[name=$TLS_SASL_USER,password=$TLS_SASL_PASSWORD]")
	done
	_kafka_java kafka.tools.StorageTool format --ignore-formatted \
		--cluster-id "$(head -c 16 /dev/urandom | base64 | tr '+/' 'AB' | tr -d '=\n')" \
		--config "$s/server.properties" "${scram[@]}" >"$s/format.log" 2>&1 || {
		cat "$s/format.log" >&2
		die "tls: formatting the TLS Kafka node failed"
	}
	# shellcheck disable=SC2086 # TLS_KAFKA_HEAP is a list of flags
	(
		cd "$s" || exit 1
		for fd in /proc/"$BASHPID"/fd/*; do
			fd="${fd##*/}"
			if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
		done
		exec setsid java $TLS_KAFKA_HEAP "${KAFKA_JVM_PERF[@]}" -XX:TieredStopAtLevel=1 \
			-Dlog4j2.configurationFile="$KAFKA_CONF_DIR/broker-log4j2.properties" \
			-Dkafka.logs.dir="$s" "$(_tls_kafka_marker)" \
			-cp "$KAFKA_LIB/*" kafka.Kafka "$s/server.properties"
	) >>"$s/server.log" 2>&1 </dev/null &
	if ! wait_until 90 _tls_kafka_up_or_dead || ! _tls_kafka_up; then
		tail -n 30 "$s/server.log" >&2
		tls_kafka_stop
		die "tls: the TLS Kafka node did not start (log: $s/server.log)"
	fi
	_tls_kafka_pids | head -n 1 >"$s/kafka.pid"
	log "tls: Kafka TLS node up on 127.0.0.1:$TLS_KAFKA_SSL_PORT (SSL), :$TLS_KAFKA_SASL_PORT (SASL_SSL) after $(_kafka_since "$t0") s"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	certs) [ $# -eq 2 ] || die "usage: $0 certs DIR"; tls_certs "$2" ;;
	kafka-start)
		[ $# -eq 2 ] || die "usage: $0 kafka-start DIR"
		# shellcheck source=scripts/lib/kafka.sh
		. "$ROOT/scripts/lib/kafka.sh"
		tls_kafka_start "$2"
		;;
	kafka-stop) tls_kafka_stop ;;
	*) sed -n '7,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
fi
