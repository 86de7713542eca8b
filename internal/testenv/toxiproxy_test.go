package testenv

import (
	"bufio"
	"net"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// TestToxiproxyAddsLatency checks the harness's proxy against a server of
// the test's own: a line echoed through a proxy with 50 ms of latency each
// way takes at least 100 ms, and a disabled proxy refuses connections.
func TestToxiproxyAddsLatency(t *testing.T) {
	env := Toxiproxy(t)
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil {
					_, _ = c.Write([]byte(line))
				}
			}()
		}
	}()
	proxy, addr := env.Proxy(t, echo.Addr().String())
	for _, stream := range []string{"upstream", "downstream"} {
		if _, err := proxy.AddToxic("", "latency", stream, 1, toxiproxy.Attributes{"latency": 50}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || got != "ping\n" {
		t.Fatalf("echo through the proxy: %q %v", got, err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("round trip through 2 x 50 ms took %s", d)
	}
	if err := proxy.Disable(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("a disabled proxy still accepts connections")
	}
}
