package testenv

import (
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RabbitMQEnv describes the RabbitMQ node that scripts/services starts
// (scripts/lib/rabbitmq.sh): Debian's rabbitmq-server on 127.0.0.1, and
// RabbitMQ PerfTest's own jars to run beside ours.
type RabbitMQEnv struct {
	// URI is the plain AMQP listener with the seed's "test" user,
	// "amqp://test:...@127.0.0.1:45672" (PERF_RABBITMQ_URI).
	URI string
	// TLSURI is the TLS listener, "amqps://test:...@127.0.0.1:45671"
	// (PERF_RABBITMQ_TLS_URI); its certificate is signed by CA.
	TLSURI string
	// CA is the PEM file of the CA that signed the node's certificate
	// (PERF_RABBITMQ_CA).
	CA string
	// PredeclaredVhost holds what the seed's --predeclared lines expect:
	// durable exchanges exchange-direct and exchange-fanout, quorum queues
	// queue-1..queue-3 (PERF_RABBITMQ_PREDECLARED_VHOST).
	PredeclaredVhost string
	// Node is the node's name for rabbitmqctl -n (PERF_RABBITMQ_NODE).
	Node string
	// ToolScript is scripts/perftest-tool (PERF_PERFTEST_TOOL): run it as
	// `ToolScript perftest ARGS...` for PerfTest Version, `ToolScript multi
	// SPEC RESULT` for PerfTestMulti and `ToolScript rabbitmqctl ARGS...`
	// for the node's rabbitmqctl.
	ToolScript string
	// Version is the PerfTest release of ToolScript (PERF_PERFTEST_VERSION).
	Version string
}

// RabbitMQ returns the RabbitMQ environment. When a variable is missing,
// the node does not accept connections or ToolScript is not a program, the
// test fails under CI and is skipped otherwise.
func RabbitMQ(t testing.TB) RabbitMQEnv {
	t.Helper()
	v := need(t, "rabbitmq",
		"PERF_RABBITMQ_URI",
		"PERF_RABBITMQ_TLS_URI",
		"PERF_RABBITMQ_CA",
		"PERF_RABBITMQ_PREDECLARED_VHOST",
		"PERF_RABBITMQ_NODE",
		"PERF_PERFTEST_TOOL",
	)
	env := RabbitMQEnv{
		URI:              v["PERF_RABBITMQ_URI"],
		TLSURI:           v["PERF_RABBITMQ_TLS_URI"],
		CA:               v["PERF_RABBITMQ_CA"],
		PredeclaredVhost: v["PERF_RABBITMQ_PREDECLARED_VHOST"],
		Node:             v["PERF_RABBITMQ_NODE"],
		ToolScript:       v["PERF_PERFTEST_TOOL"],
		Version:          lookup("PERF_PERFTEST_VERSION"),
	}
	if env.ToolScript != "" {
		if st, err := os.Stat(env.ToolScript); err != nil || st.IsDir() {
			unavailable(t, "rabbitmq", "PERF_PERFTEST_TOOL=%s is not a program", env.ToolScript)
		}
	}
	var addrs []string
	for _, u := range []string{env.URI, env.TLSURI} {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			addrs = append(addrs, p.Host)
		}
	}
	reachable(t, "rabbitmq", addrs...)
	return env
}

// VhostURI is uri with its path set to vhost (escaped as AMQP URIs want).
func VhostURI(uri, vhost string) string {
	p, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	p.Path = "/" + vhost
	p.RawPath = "/" + url.PathEscape(vhost)
	return p.String()
}

// Ctl runs the node's rabbitmqctl with args and returns its stdout; a
// failure fails the test.
func (e RabbitMQEnv) Ctl(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.ToolScript, append([]string{"rabbitmqctl"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rabbitmqctl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
