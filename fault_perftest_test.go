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
// The node itself killed and restarted, or paused, is a private node of
// the test's own (testenv.StartPrivateRabbitMQ, 10-20 s to boot): there
// the connections are lost for real and the queues that were not durable
// are gone when the node comes back, so recovery has to declare them again.
//
// Most cases publish with confirms (-c) and no consumer into a queue of
// its own (-u, not auto-deleted), so the queue's depth is the broker's
// own count of what it took. The result file's publish entry is what was
// published (sent) and its confirm entry what the broker confirmed, with
// the nacked and still unconfirmed ones as errors: sent = confirmed +
// nacked + unconfirmed, and the queue holds at least the confirmed and at
// most all that were sent (a publish may reach the queue after the
// connection that carried it broke, or while its confirm is lost).
//
// The consumer cases consume from a queue the test filled with exactly N
// messages, with a prefetch of P (-q): at the end the queue holds D, and
// the consumer received at least N-D (every message gone from the queue was
// delivered and acknowledged) and at most N-D plus P for each fault (the
// unacknowledged deliveries a lost connection gives back to the queue are
// delivered again, and counted again, by PerfTest too).
//
// PerfTest (with its default automatic recovery) prints nothing at all
// when a connection is lost, on stdout or stderr: it reconnects every -cri
// seconds (5 by default), declares its exchange, queues and bindings
// again, subscribes its consumers again, and goes on counting to -z, exit
// 0. Ours does the same, and names the loss and the recovery on stderr.

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

// amqpChannel is a channel on its own connection to the node at uri,
// both closed when the test ends; a failure to open them fails the test.
func amqpChannel(t *testing.T, uri string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(uri)
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// queueDepth is the number of messages in queue on the node (AMQP's
// passive declare, straight to the node, not through a proxy).
func queueDepth(t *testing.T, uri, queue string) int64 {
	t.Helper()
	ch := amqpChannel(t, uri)
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

// fillQueue declares queue (durable, with persistent messages, or not)
// on the node and puts exactly n confirmed messages of 12 bytes in it.
func fillQueue(t *testing.T, uri, queue string, n int, durable bool) {
	t.Helper()
	ch := amqpChannel(t, uri)
	if _, err := ch.QueueDeclare(queue, durable, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	msg := amqp.Publishing{Body: make([]byte, 12)}
	if durable {
		msg.DeliveryMode = amqp.Persistent
	}
	for i := 0; i < n; i++ {
		dc, err := ch.PublishWithDeferredConfirm("", queue, false, false, msg)
		if err != nil {
			t.Fatal(err)
		}
		if i == n-1 || i%500 == 499 {
			if ok, err := dc.WaitContext(t.Context()); !ok || err != nil {
				t.Fatalf("publish %d not confirmed: %v", i, err)
			}
		}
	}
}

// testCounts are the result file's operations by test name, and the
// ones of the intervals that ended after from (seconds into the run).
func testCounts(r faultRun, from float64) (all, after map[string]int64, errs map[string]int64) {
	all, after, errs = map[string]int64{}, map[string]int64{}, map[string]int64{}
	if r.result == nil {
		return
	}
	for _, tst := range r.result.Tests {
		all[tst.Name] = tst.Counts.Operations
		errs[tst.Name] = tst.Counts.Failed()
		for _, iv := range tst.Intervals {
			if iv.EndSeconds > from {
				after[tst.Name] += iv.Operations
			}
		}
	}
	return
}

var perftestSummary = regexp.MustCompile(`(?m)^(id: \S+, )?sending rate avg: \d+ msg/s$`)

// checkConsumerRun checks a consumer-only run (-z z) from queue, which
// held n messages, with the given prefetch and number of faults: its
// ending, and the consumed count against what the queue has left; it
// must have consumed after `after` seconds, when the fault is over.
func checkConsumerRun(t *testing.T, r faultRun, z int, fault, uri, queue string, n, prefetch, faults int, after float64) {
	t.Helper()
	if r.rc != 0 || !strings.Contains(r.stdout, "test stopped (Reached time limit)") || !perftestSummary.MatchString(r.stdout) {
		t.Errorf("exit %d, want 0, the stop line and the summary:\n%s\nstderr:\n%s", r.rc, r.stdout, r.stderr)
	}
	if limit := time.Duration(z+3) * time.Second; r.elapsed < time.Duration(z)*time.Second || r.elapsed > limit {
		t.Errorf("ended after %s, want -z %d s and at most %s", r.elapsed, z, limit)
	}
	all, late, _ := testCounts(r, after)
	received := all["consume"]
	depth := queueDepth(t, uri, queue)
	gone := int64(n) - depth
	if received < gone || received > gone+int64(prefetch*(faults+1)) {
		t.Errorf("received %d; the queue went from %d to %d messages: want %d to %d", received, n, depth, gone, gone+int64(prefetch*(faults+1)))
	}
	if late["consume"] == 0 {
		t.Errorf("nothing consumed after %.0f s (no recovery?)\nstdout:\n%s\nstderr:\n%s", after, r.stdout, r.stderr)
	}
	faultRow(t, "perftest", fault, r, faultCounts{sent: int64(n), acked: received,
		server: fmt.Sprintf("depth %d, consumed %d (bound %d..%d)", depth, received, gone, gone+int64(prefetch*(faults+1)))})
}

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
		t.Run("consumer only, connections reset", func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(env.URI)
			if err != nil {
				t.Fatal(err)
			}
			proxy, addr := tox.Proxy(t, u.Host)
			u.Host = addr
			queue := fmt.Sprintf("perfclones-fault-consumer-reset-%d", os.Getpid())
			deleteQueue(env.URI, queue)
			t.Cleanup(func() { deleteQueue(env.URI, queue) })
			const n, prefetch = 6000, 50
			fillQueue(t, env.URI, queue, n, false)
			// Reset for 1 s from 2 s on; the default -cri 5 reconnects at
			// about 7 s, leaving 5 s to consume.
			// 2.22 declares its exchange durable: one of its own on the
			// shared node.
			r := runFault(t, []string{bin, "-h", u.String(), "-e", "perfclones-fault-2.22", "-u", queue, "-ad", "false", "-x", "0", "-y", "1",
				"-q", fmt.Sprint(prefetch), "-R", "400", "-z", "12"}, []string{"PERFCLONES_PERFTEST_VERSION=2.22"}, 40*time.Second,
				func(started time.Time) {
					sleepUntil(started, 2*time.Second)
					if _, err := proxy.AddToxic("fault", "reset_peer", "downstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
						t.Error(err)
					}
					time.Sleep(time.Second)
					if err := proxy.RemoveToxic("fault"); err != nil {
						t.Error(err)
					}
				})
			checkConsumerRun(t, r, 12, "consumer only: connections reset 1 s (reset_peer), then back", env.URI, queue, n, prefetch, 1, 8)
		})
		t.Run("private node", func(t *testing.T) {
			t.Parallel()
			node := testenv.StartPrivateRabbitMQ(t)
			release := []string{"PERFCLONES_PERFTEST_VERSION=2.22"}
			t.Run("consumer only, node paused", func(t *testing.T) {
				const n, prefetch = 6000, 50
				queue := "perfclones-fault-paused"
				fillQueue(t, node.URI, queue, n, false)
				// SIGSTOP for 4 s from 2 s on: no heartbeat is missed
				// (the node's 60 s), nothing is lost, the run goes on.
				r := runFault(t, []string{bin, "-h", node.URI, "-u", queue, "-ad", "false", "-x", "0", "-y", "1",
					"-q", fmt.Sprint(prefetch), "-R", "400", "-z", "10"}, release, 40*time.Second,
					func(started time.Time) {
						sleepUntil(started, 2*time.Second)
						node.Pause()
						time.Sleep(4 * time.Second)
						node.Resume()
					})
				checkConsumerRun(t, r, 10, "consumer only: node paused 4 s (SIGSTOP, SIGCONT)", node.URI, queue, n, prefetch, 0, 6.5)
				// -R 400 through Guava's token bucket: after the pause, one
				// second's burst, not the 4 s missed (the 2.22.1 jar: 2871
				// in its 10 s).
				if all, _, _ := testCounts(r, 0); all["consume"] > 400*(10-4+1)+prefetch+200 {
					t.Errorf("consumed %d: the stall was made up for beyond one second's burst", all["consume"])
				}
			})
			t.Run("node killed and restarted", func(t *testing.T) {
				// Producer and consumer, confirms, a durable queue and
				// persistent messages (what was confirmed survives the
				// crash); -cri 1 so that recovery follows the reboot.
				const z, prefetch = 40, 50
				queue := "perfclones-fault-killed"
				var back time.Duration
				r := runFault(t, []string{bin, "-h", node.URI, "-e", "perfclones-fault", "-u", queue, "-ad", "false", "-f", "persistent",
					"-x", "1", "-y", "1", "-c", "100", "-q", fmt.Sprint(prefetch), "-r", "200", "-cri", "1", "-z", fmt.Sprint(z)}, release, 90*time.Second,
					func(started time.Time) {
						sleepUntil(started, 3*time.Second)
						if err := node.Reboot(); err != nil {
							t.Error(err)
						}
						back = time.Since(started)
					})
				if back > (z-6)*time.Second {
					t.Fatalf("the node took until %s into the run to come back; -z %d leaves too little to check recovery", back, z)
				}
				if r.rc != 0 || !strings.Contains(r.stdout, "test stopped (Reached time limit)") || !perftestSummary.MatchString(r.stdout) {
					t.Errorf("exit %d, want 0, the stop line and the summary:\n%s\nstderr:\n%s", r.rc, r.stdout, r.stderr)
				}
				if r.elapsed < z*time.Second || r.elapsed > (z+3)*time.Second {
					t.Errorf("ended after %s, want -z %d s and at most 3 s more", r.elapsed, z)
				}
				if !strings.Contains(r.stderr, "perf-test-producer-0 recovered") || !strings.Contains(r.stderr, "perf-test-consumer-0 recovered") {
					t.Errorf("stderr does not name the recoveries:\n%s", r.stderr)
				}
				// After the reboot (and a second for -cri) both go on.
				all, late, errs := testCounts(r, back.Seconds()+2)
				sent, confirmed, failed, received := all["publish"], all["confirm"], errs["confirm"], all["consume"]
				if late["publish"] == 0 || late["consume"] == 0 {
					t.Errorf("after the node came back at %s: %d published, %d consumed (no recovery?)\nstdout:\n%s\nstderr:\n%s",
						back, late["publish"], late["consume"], r.stdout, r.stderr)
				}
				if sent == 0 || confirmed+failed != sent {
					t.Errorf("result file: %d published, %d confirmed, %d nacked or unconfirmed", sent, confirmed, failed)
				}
				// Every confirmed message is still in the queue or was
				// consumed; a delivery may be counted twice when its ack was
				// lost in the crash or at the end (one prefetch each).
				depth := queueDepth(t, node.URI, queue)
				if depth+received < confirmed || depth+received > sent+2*prefetch {
					t.Errorf("queue holds %d and %d were consumed: want %d confirmed to %d published (+%d)", depth, received, confirmed, sent, 2*prefetch)
				}
				faultRow(t, "perftest", fmt.Sprintf("node killed at 3 s, rebooted (back at %.0f s), -cri 1", back.Seconds()), r,
					faultCounts{sent: sent, acked: confirmed, failed: failed,
						server: fmt.Sprintf("depth %d + consumed %d (bound %d..%d)", depth, received, confirmed, sent+2*prefetch)})
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
