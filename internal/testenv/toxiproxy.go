package testenv

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// Toxiproxy's client sends every call through http.DefaultTransport,
// which keeps connections for 90 s, and toxiproxy-server 2.5.0 drops an
// idle one after its 10 s read timeout. A call made 10 s after the last
// (a toxic removed after a 10 s fault) then goes out on a connection the
// server is closing and reads EOF, never reaching it: the toxic stayed.
// Idle connections are dropped on our side first.
func init() {
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.IdleConnTimeout = 5 * time.Second
	}
}

// ToxiproxyEnv is the toxiproxy-server that scripts/services starts
// (scripts/lib/toxiproxy.sh) on 127.0.0.1, for latency and fault tests.
type ToxiproxyEnv struct {
	// API is the server's HTTP API, "127.0.0.1:18474" (PERF_TOXIPROXY_API).
	API string
}

// Toxiproxy returns the proxy server's environment; like the other
// services it fails the test under CI when the server is missing and skips
// it otherwise.
func Toxiproxy(t testing.TB) ToxiproxyEnv {
	t.Helper()
	v := need(t, "toxiproxy", "PERF_TOXIPROXY_API")
	env := ToxiproxyEnv{API: v["PERF_TOXIPROXY_API"]}
	if env.API != "" {
		reachable(t, "toxiproxy", env.API)
	}
	return env
}

// Proxy puts a new proxy in front of upstream (host:port on loopback or a
// harness namespace) and returns it with the address clients should use
// instead. The proxy listens on a free loopback port and is deleted when
// the test ends. Add toxics with its AddToxic (latency, reset_peer,
// timeout, bandwidth ...), or Disable it to make the server unreachable.
func (e ToxiproxyEnv) Proxy(t testing.TB, upstream string) (*toxiproxy.Proxy, string) {
	t.Helper()
	listen := freeLoopbackAddr(t)
	name := strings.NewReplacer("/", "_", " ", "_").Replace(fmt.Sprintf("%s-%s", t.Name(), listen))
	c := toxiproxy.NewClient(e.API)
	p, err := c.CreateProxy(name, listen, upstream)
	if err != nil {
		t.Fatalf("toxiproxy: create %s -> %s: %v", listen, upstream, err)
	}
	t.Cleanup(func() { _ = p.Delete() })
	return p, listen
}

// freeLoopbackAddr is a 127.0.0.1 port nothing listens on right now.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("no free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
