package perfclones_test

// The fault suite for perftest (RabbitMQ PerfTest), against the shared
// RabbitMQ node through a Toxiproxy proxy of each case's own, so that the
// faults never touch the node other tests use: the proxy taken down
// mid-run and brought back (what a client sees of a node that dies and
// restarts: every connection closed, then refused), its connections reset,
// the network stalled (Toxiproxy's timeout toxic: bytes go in, nothing
// comes back, as from a node paused with SIGSTOP), the node unreachable
// from the start, and the node's flow control (a tiny memory high
// watermark for a few seconds, restored at once).
//
// A private RabbitMQ node is not used: Debian's rabbitmq-server boots in
// 10-30 s here, longer on a loaded machine, which the suite's budget does
// not allow.
//
// Every case publishes with confirms (-c) and no consumer into a queue of
// its own (-u, not auto-deleted), so the queue's depth is the broker's
// own count of what it took. The result file's publish entry is what was
// published (sent) and its confirm entry what the broker confirmed, with
// the nacked and still unconfirmed ones as errors: sent = confirmed +
// nacked + unconfirmed, and the queue holds at least the confirmed and at
// most all that were sent (a publish may reach the queue after the
// connection that carried it broke, or while its confirm is lost).
//
// PerfTest (with its default automatic recovery) goes on silently to -z
// when a connection is lost; ours names the loss on stderr and ends at -z
// with the summary, as PerfTest's run does, exit 0.

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/testenv"
)

// queueDepth is the number of messages in queue on the node (AMQP's
// passive declare, straight to the node, not through a proxy).
func queueDepth(t *testing.T, uri, queue string) int64 {
	t.Helper()
	conn, err := amqp.Dial(uri)
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	// The broker may still be taking publishes that were in flight.
	var last int = -1
	for i := 0; i < 20; i++ {
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		if err != nil {
			t.Fatalf("queue %s: %v", queue, err)
		}
		if q.Messages == last {
			break
		}
		last = q.Messages
		time.Sleep(250 * time.Millisecond)
	}
	return int64(last)
}

func deleteQueue(uri, queue string) {
	conn, err := amqp.Dial(uri)
	if err != nil {
		return
	}
	defer conn.Close()
	if ch, err := conn.Channel(); err == nil {
		_, _ = ch.QueueDelete(queue, false, false, false)
	}
}

var perftestSummary = regexp.MustCompile(`(?m)^(id: \S+, )?sending rate avg: \d+ msg/s$`)

func TestFaultPerfTest(t *testing.T) {
	env := testenv.RabbitMQ(t)
	tox := testenv.Toxiproxy(t)
	bin := ourTool(t, "perftest")
	const z = 8

	// publish runs ours with confirms through the case's proxy into the
	// case's queue for -z 8 s while inject does its fault, and checks the
	// ending and the counts against the queue.
	publish := func(t *testing.T, fault string, late time.Duration, inject func(p *toxiproxy.Proxy, started time.Time)) faultRun {
		u, err := url.Parse(env.URI)
		if err != nil {
			t.Fatal(err)
		}
		proxy, addr := tox.Proxy(t, u.Host)
		u.Host = addr
		queue := fmt.Sprintf("perfclones-fault-%s-%d", strings.NewReplacer(" ", "-", "/", "-").Replace(t.Name()), os.Getpid())
		deleteQueue(env.URI, queue)
		t.Cleanup(func() { deleteQueue(env.URI, queue) })
		args := ([]string{bin, "-h", u.String(), "-e", "perfclones-fault", "-u", queue, "-ad", "false",
			"-x", "1", "-y", "0", "-c", "100", "-s", "100", "-r", "1000", "-z", fmt.Sprint(z)})
		r := runFault(t, args, nil, 40*time.Second, func(started time.Time) {
			if inject != nil {
				inject(proxy, started)
			}
		})
		_ = proxy.RemoveToxic("fault")
		if r.rc != 0 || !strings.Contains(r.stdout, "test stopped (Reached time limit)") || !perftestSummary.MatchString(r.stdout) {
			t.Errorf("exit %d, want 0, the stop line and the summary:\n%s\nstderr:\n%s", r.rc, r.stdout, r.stderr)
		}
		if r.elapsed < z*time.Second || r.elapsed > z*time.Second+late {
			t.Errorf("ended after %s, want -z %d s and at most %s more", r.elapsed, z, late)
		}
		if r.result == nil {
			t.Fatal("no result file")
		}
		var sent, confirmed, failed int64
		found := false
		for _, tst := range r.result.Tests {
			switch tst.Name {
			case "publish":
				sent = tst.Counts.Operations
			case "confirm":
				confirmed, failed, found = tst.Counts.Operations, tst.Counts.Failed(), true
			}
		}
		if !found || confirmed+failed != sent || sent == 0 {
			t.Errorf("result file: %d published, %d confirmed, %d nacked or unconfirmed (a confirm entry: %v)", sent, confirmed, failed, found)
		}
		depth := queueDepth(t, env.URI, queue)
		if depth < confirmed || depth > sent {
			t.Errorf("the queue holds %d messages: want %d confirmed to %d published", depth, confirmed, sent)
		}
		faultRow(t, "perftest", fault, r, faultCounts{sent: sent, acked: confirmed, failed: failed,
			server: fmt.Sprintf("%d (bound %d..%d)", depth, confirmed, sent)})
		return r
	}

	t.Run("network faults", func(t *testing.T) {
		t.Run("unreachable from the start", func(t *testing.T) {
			t.Parallel()
			addr := testenv.ClosedLoopbackAddr(t)
			// stdout: the logback ERROR line and the exception; 2.19+ (as
			// the 2.22.1 jar) then `test stopped`.
			for rel, last := range map[string]string{"2.18": "java.net.ConnectException: Connection refused\n", "2.22": "test stopped\n"} {
				r := runFault(t, []string{bin, "-h", "amqp://" + addr, "-z", "5"}, []string{"PERFCLONES_PERFTEST_VERSION=" + rel}, 20*time.Second, nil)
				if r.rc != 1 || r.stderr != "Main thread caught exception: java.net.ConnectException: Connection refused\n" ||
					!strings.Contains(r.stdout, " ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n") ||
					!strings.HasSuffix(r.stdout, "\n"+last) || r.elapsed > 5*time.Second {
					t.Errorf("%s: exit %d after %s\nstdout:\n%s\nstderr:\n%s", rel, r.rc, r.elapsed, r.stdout, r.stderr)
				}
				faultRow(t, "perftest "+rel, "broker unreachable", r, faultCounts{server: "-"})
			}
		})
		t.Run("down and back", func(t *testing.T) {
			t.Parallel()
			publish(t, "broker gone 2 s mid-run, then back (proxy down, up)", 2*time.Second, func(p *toxiproxy.Proxy, started time.Time) {
				sleepUntil(started, 2*time.Second)
				p.Enabled = false
				if err := p.Save(); err != nil {
					t.Error(err)
				}
				time.Sleep(2 * time.Second)
				p.Enabled = true
				if err := p.Save(); err != nil {
					t.Error(err)
				}
			})
		})
		t.Run("connections reset", func(t *testing.T) {
			t.Parallel()
			publish(t, "connections reset (reset_peer)", 2*time.Second, func(p *toxiproxy.Proxy, started time.Time) {
				sleepUntil(started, 2*time.Second)
				if _, err := p.AddToxic("fault", "reset_peer", "downstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
					t.Error(err)
				}
			})
		})
		t.Run("network stalled", func(t *testing.T) {
			t.Parallel()
			// The connection can no longer be closed: the agents are given
			// 5 s, as the jar gives them (2.22.1 through the same toxic:
			// 14.2 s for -z 8, JVM start included).
			publish(t, "network stalled to the end (timeout toxic), like a paused node", 7*time.Second, func(p *toxiproxy.Proxy, started time.Time) {
				sleepUntil(started, 2*time.Second)
				if _, err := p.AddToxic("fault", "timeout", "upstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
					t.Error(err)
				}
			})
		})
		t.Run("no recovery, connections reset", func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(env.URI)
			if err != nil {
				t.Fatal(err)
			}
			proxy, addr := tox.Proxy(t, u.Host)
			u.Host = addr
			r := runFault(t, []string{bin, "-h", u.String(), "-e", "perfclones-fault", "-x", "1", "-y", "1", "-r", "1000", "-dcr", "-z", "30"}, nil, 40*time.Second,
				func(started time.Time) {
					sleepUntil(started, 2*time.Second)
					if _, err := proxy.AddToxic("fault", "reset_peer", "downstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
						t.Error(err)
					}
				})
			if r.rc != 0 || !regexp.MustCompile(`(?m)^test stopped \((Consumer shut down|Error in producer \(.*\))`).MatchString(r.stdout) ||
				!perftestSummary.MatchString(r.stdout) || r.elapsed > 8*time.Second {
				t.Errorf("exit %d after %s; want 0, the agent's reason and the summary within seconds:\n%s\nstderr:\n%s", r.rc, r.elapsed, r.stdout, r.stderr)
			}
			faultRow(t, "perftest -dcr", "connections reset (reset_peer)", r, faultCounts{server: "-"})
		})
	})

	t.Run("flow control", func(t *testing.T) {
		// The shared node's watermark: set for 3 s, restored at once (and
		// again when the test ends, whatever happens).
		watermark := func(v string) {
			if out, err := exec.Command(env.ToolScript, "rabbitmqctl", "set_vm_memory_high_watermark", v).CombinedOutput(); err != nil {
				t.Errorf("set_vm_memory_high_watermark %s: %v\n%s", v, err, out)
			}
		}
		t.Cleanup(func() { watermark("0.2") })
		r := publish(t, "flow control (memory watermark tiny for 3 s)", 2*time.Second, func(_ *toxiproxy.Proxy, started time.Time) {
			sleepUntil(started, 2*time.Second)
			watermark("0.000001")
			time.Sleep(3 * time.Second)
			watermark("0.2")
		})
		if !strings.Contains(r.stderr, "blocked by the broker (flow control)") {
			t.Errorf("no blocked notice on stderr: %q", r.stderr)
		}
		blocked := false
		for _, tst := range r.result.Tests {
			blocked = blocked || (tst.Name == "flow-control-blocked" && tst.Counts.Operations > 0)
		}
		if !blocked {
			t.Errorf("the result file does not count the blocked connection")
		}
	})
}
