package perfclones_test

// The fault suite for rocketmq-benchmark's producer, against a RocketMQ
// 5.3.3 name server and broker of the test's own (testenv.StartPrivateRocketMQ:
// inside the harness's namespace, the broker reached through a Toxiproxy
// proxy that its advertised address points at), so the broker can be
// killed, paused and restarted while the shared groups serve other tests.
//
// Accounting: every -q run ends with its [Complete] line, whose Send Total
// is the acknowledged sends plus Send Failed (Response Failed, the
// broker's error replies, left out as in the original), and the result
// file's acknowledged (operations) plus failed (send_failed +
// response_failed) is the quota -q. The broker's max offsets over the topic's
// queues (its own count of stored messages) are then
//   - exactly the acknowledged ones where the broker refused or never got
//     the failed sends (SYSTEM_BUSY, no broker at all);
//   - between the acknowledged and the acknowledged plus the sends that
//     were in flight when the fault struck (-w of them, each tried up to
//     three times by the client: one try and two retries), where a send
//     may have been stored while its reply was lost (a kill, a reset, a
//     stall, a pause past the 3 s send timeout).
//
// The consumer cases run a consumer (-ri 1000) of a fresh topic and group
// while a producer writes and the fault strikes, and end it with SIGTERM
// (what shutdown.sh sends) once the broker's committed offsets for the
// group have reached its max offsets: the consumer caught up. The original
// consumer has no summary and no shutdown hook, so the run ends with its
// periodic lines and status 143. Accounting: the messages counted (the
// result file's operations) are at least the broker's stored ones (none
// is lost), and exactly those where no committed offset can go back (a
// pause, a reset: the consumer keeps pulling from its own offsets); after
// a kill the restarted broker may hand out again what was consumed since
// its last flush of the group's offsets, at most what it stored before the
// kill.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/perfclones/perfclones/internal/testenv"
)

var rmqCompleteAny = regexp.MustCompile(`(?m)^\[Complete\] Send Total: (\d+) (?:\| Send TPS: .* )?\|? ?Send Failed: (\d+) \| Response Failed: (\d+)$|^\[Complete\] Send Total: (\d+) Send Failed: (\d+) Response Failed: (\d+)$`)

// rmqComplete is the [Complete] line's three counts, either form.
func rmqComplete(t *testing.T, stdout string) (total, sendFailed, respFailed int64, ok bool) {
	t.Helper()
	m := rmqCompleteAny.FindStringSubmatch(stdout)
	if m == nil {
		return 0, 0, 0, false
	}
	f := m[1:4]
	if m[1] == "" {
		f = m[4:7]
	}
	n := make([]int64, 3)
	for i, s := range f {
		n[i], _ = strconv.ParseInt(s, 10, 64)
	}
	return n[0], n[1], n[2], true
}

// rmqFaultAt is when a producer case's fault strikes, and rmqFaultQuota the
// -q that keeps two senders busy well past it (the producer's own send
// path does some 3000 sends a second here).
const (
	rmqFaultAt    = 2 * time.Second
	rmqFaultQuota = 20000
)

func TestFaultRocketMQ(t *testing.T) {
	t.Parallel()
	bin := ourTool(t, "rocketmq-benchmark")
	testenv.RocketMQ(t) // the harness (and its namespace) is there
	g := testenv.StartPrivateRocketMQ(t)
	const queues = 4
	topicN := 0
	newTopic := func() string {
		topicN++
		topic := fmt.Sprintf("fault-%d-%d", time.Now().Unix()%100000, topicN)
		g.CreateTopic(t, topic, queues)
		return topic
	}

	// check runs the producer with -q q on a fresh topic while inject
	// does its fault, and checks the run's ending and accounting; exact
	// says the broker must hold exactly the acknowledged sends, else up to
	// slack more.
	check := func(t *testing.T, fault string, q, threads int, limit time.Duration, exact bool, slack int64, inject func(time.Time)) {
		topic := newTopic()
		before := g.MaxOffsets(t, topic, queues)
		r := runFault(t, []string{bin, "producer", "-n", g.Namesrv, "-t", topic, "-s", "256", "-w", strconv.Itoa(threads), "-q", strconv.Itoa(q)},
			nil, limit, inject)
		for _, p := range []*toxiproxy.Proxy{g.Proxy} {
			_ = p.RemoveToxic("fault") // a failed case must not leave its toxic behind
		}
		stored := g.MaxOffsets(t, topic, queues) - before
		if inject != nil && r.elapsed < rmqFaultAt+time.Second {
			t.Errorf("the run ended %s in, before the fault could strike (%s in): it tested nothing; raise rmqFaultQuota", r.elapsed, rmqFaultAt)
		}
		if r.rc != 0 {
			t.Errorf("exit code %d, want 0 (the original's)\nstderr:\n%s", r.rc, r.stderr)
		}
		total, sendFailed, respFailed, ok := rmqComplete(t, r.stdout)
		if !ok {
			t.Fatalf("no [Complete] line:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
		if r.result == nil || len(r.result.Tests) != 1 {
			t.Fatalf("no result file with one test")
		}
		c := r.result.Tests[0].Counts
		acked, failed := c.Operations, c.Errors["send_failed"]+c.Errors["response_failed"]
		// Send Total is the successes plus Send Failed (the original leaves
		// Response Failed out); the three use up the quota.
		if total != acked+sendFailed || acked+failed != int64(q) || c.Errors["send_failed"] != sendFailed || c.Errors["response_failed"] != respFailed {
			t.Errorf("Send Total %d, Send Failed %d, Response Failed %d (want %d in all); result file %d acknowledged + %v",
				total, sendFailed, respFailed, q, acked, c.Errors)
		}
		server := strconv.FormatInt(stored, 10)
		switch {
		case exact && stored != acked:
			t.Errorf("the broker stored %d messages, %d were acknowledged", stored, acked)
		case !exact && (stored < acked || stored > acked+slack):
			t.Errorf("the broker stored %d messages: want %d acknowledged to %d (+%d in flight at the fault)", stored, acked, acked+slack, slack)
		case !exact:
			server += fmt.Sprintf(" (bound %d..%d)", acked, acked+slack)
		}
		faultRow(t, "rocketmq-benchmark producer", fault, r, faultCounts{sent: acked + failed, acked: acked, failed: failed, server: server})
	}

	t.Run("name server unreachable from the start", func(t *testing.T) {
		addr := testenv.ClosedLoopbackAddr(t)
		r := runFault(t, []string{bin, "producer", "-n", addr, "-t", "topic-01", "-w", "4", "-q", "100"}, nil, 40*time.Second, nil)
		want := "[Complete] Send Total: 0 | Send TPS: 0 | Max RT(ms): 0 | Average RT(ms):     NaN | Send Failed: 0 | Response Failed: 0"
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		if r.rc != 0 || lines[len(lines)-1] != want || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stderr == "" {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.rc, r.stdout, r.stderr)
		}
		if r.elapsed > 20*time.Second {
			t.Errorf("took %s", r.elapsed)
		}
		faultRow(t, "rocketmq-benchmark producer", "name server unreachable", r, faultCounts{server: "-"})
	})

	t.Run("broker unreachable from the start", func(t *testing.T) {
		// The name server routes the topic to the broker's advertised
		// address, where nothing listens: every send is refused.
		g.Proxy.Enabled = false
		if err := g.Proxy.Save(); err != nil {
			t.Fatal(err)
		}
		defer func() { g.Proxy.Enabled = true; _ = g.Proxy.Save() }()
		check(t, "broker unreachable", 200, 2, 60*time.Second, true, 0, nil)
	})

	t.Run("SYSTEM_BUSY", func(t *testing.T) {
		// 64 senders against a broker with one send thread and a queue of
		// a few requests: the overflow gets SYSTEM_BUSY, which the broker
		// never stored, and the original counts as Response Failed.
		check(t, "SYSTEM_BUSY (send queue full)", 2000, 64, 120*time.Second, true, 0, nil)
	})

	t.Run("connections reset", func(t *testing.T) {
		check(t, "connections reset (reset_peer 2 s)", rmqFaultQuota, 2, 120*time.Second, false, 2*3, func(start time.Time) {
			sleepUntil(start, rmqFaultAt)
			if _, err := g.Proxy.AddToxic("fault", "reset_peer", "downstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
				t.Error(err)
			}
			time.Sleep(2 * time.Second)
			_ = g.Proxy.RemoveToxic("fault")
		})
	})

	t.Run("network stalled", func(t *testing.T) {
		// Longer than the client's three tries of 3 s each: sends fail.
		check(t, "network stalled 10 s (timeout toxic)", rmqFaultQuota, 2, 120*time.Second, false, 2*3, func(start time.Time) {
			sleepUntil(start, rmqFaultAt)
			if _, err := g.Proxy.AddToxic("fault", "timeout", "upstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
				t.Error(err)
			}
			time.Sleep(10 * time.Second)
			_ = g.Proxy.RemoveToxic("fault")
		})
	})

	t.Run("broker paused", func(t *testing.T) {
		// Past the client's three tries of 3 s each: sends fail, and the
		// broker stores the tries it reads once it goes on.
		check(t, "broker paused 10 s (SIGSTOP; send timeout 3 s, 2 retries)", rmqFaultQuota, 2, 120*time.Second, false, 2*3, func(start time.Time) {
			sleepUntil(start, rmqFaultAt)
			g.Broker.Pause()
			time.Sleep(10 * time.Second)
			g.Broker.Resume()
		})
	})

	t.Run("broker killed and restarted", func(t *testing.T) {
		check(t, "broker killed (SIGKILL) and restarted", rmqFaultQuota, 2, 180*time.Second, false, 2*3, func(start time.Time) {
			sleepUntil(start, rmqFaultAt)
			g.Broker.Kill()
			killed := time.Now()
			if err := g.RestartBroker(); err != nil {
				t.Errorf("restart: %v", err)
			}
			t.Logf("broker back %s after the kill", time.Since(killed).Round(100*time.Millisecond))
		})
	})

	t.Run("consumer", func(t *testing.T) { rmqConsumerFaults(t, bin, g) })
}

// signalArg sends sig to the processes running bin whose arguments
// include arg (a run's own group name), as shutdown.sh signals the
// benchmark it finds by its command line; it returns how many it found.
func signalArg(bin, arg string, sig syscall.Signal) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(argv) < 2 || argv[0] != bin {
			continue
		}
		for _, a := range argv[1:] {
			if a == arg {
				if syscall.Kill(pid, sig) == nil {
					n++
				}
				break
			}
		}
	}
	return n
}

// rmqConsumerFaults are TestFaultRocketMQ's consumer cases, on its
// private group (one at a time: the group's ports are fixed).
func rmqConsumerFaults(t *testing.T, bin string, g *testenv.PrivateRocketMQ) {
	const queues = 4
	caseN := 0

	// produce runs our producer on topic with -q q and returns when it
	// ends (its own faults are TestFaultRocketMQ's).
	produce := func(t *testing.T, topic string, q int) {
		run := runCommand(t, []string{bin, "producer", "-n", g.Namesrv, "-t", topic, "-s", "256", "-w", "2", "-q", strconv.Itoa(q)},
			2*time.Minute, false, "", nil)
		if run.rc != 0 || !strings.Contains(run.stdout, "[Complete]") {
			t.Errorf("producer: exit %d\n%s%s", run.rc, run.stdout, run.stderr)
		}
	}

	// check runs a consumer of a fresh topic and group while scenario
	// writes and strikes (it returns what the broker stored before the
	// fault), then SIGTERMs it once the group's committed offsets reach
	// the broker's max offsets, and checks its ending and accounting;
	// exact says the count must be the stored messages, else up to what
	// was stored before the fault more.
	check := func(t *testing.T, fault string, limit time.Duration, exact bool, scenario func(t *testing.T, topic string) int64) {
		caseN++
		topic := fmt.Sprintf("cfault-%d-%d", time.Now().Unix()%100000, caseN)
		group := fmt.Sprintf("cfault-group-%d-%d", time.Now().Unix()%100000, caseN)
		g.CreateTopic(t, topic, queues)
		var beforeFault, stored, committed int64
		var signalled time.Duration
		r := runFault(t, []string{bin, "consumer", "-n", g.Namesrv, "-t", topic, "-g", group, "-ri", "1000"}, nil, limit, func(start time.Time) {
			sleepUntil(start, 6*time.Second) // started and given its queues
			beforeFault = scenario(t, topic)
			_ = g.Proxy.RemoveToxic("fault") // a failed case must not leave its toxic behind
			deadline := time.Now().Add(60 * time.Second)
			for {
				stored, committed = g.MaxOffsets(t, topic, queues), g.ConsumerOffsets(t, group, topic, queues)
				if committed >= stored || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Second)
			}
			signalled = time.Since(start)
			if signalArg(bin, group, syscall.SIGTERM) != 1 {
				t.Errorf("no consumer of group %s to signal", group)
			}
		})
		t.Logf("the consumer ended %.1f s after SIGTERM", (r.elapsed - signalled).Seconds())
		if committed != stored {
			t.Errorf("the group committed %d of the broker's %d messages within a minute of the fault", committed, stored)
		}
		if r.rc != 143 || r.stderr != "" {
			t.Errorf("exit code %d, want 143 (SIGTERM, as the original); stderr:\n%s", r.rc, r.stderr)
		}
		header := "topic: " + topic + ", threadCount 20, group: " + group +
			", suffix: false, filterType: null, expression: null, msgTraceEnable: false, aclEnable: false, reportInterval: 1000"
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if len(lines) < 3 || lines[0] != header || lines[1] != "Consumer Started." {
			t.Fatalf("stdout:\n%s\nwant first\n%s\nConsumer Started.", r.stdout, header)
		}
		for _, l := range lines[2:] {
			if !rmqConsumerLine5.MatchString(l) || !rmqF73OK(l) {
				t.Errorf("not a consumer line: %q", l)
			}
		}
		if r.result == nil || len(r.result.Tests) != 1 || r.result.Ending != "interrupted" || r.result.ExitCode != 143 {
			t.Fatalf("result file: %+v", r.result)
		}
		c := r.result.Tests[0].Counts
		counted, failed := c.Operations, c.Errors["consume_failed"]
		server := fmt.Sprintf("stored %d, committed %d", stored, committed)
		switch {
		case exact && counted != stored:
			t.Errorf("the consumer counted %d messages, the broker stored %d", counted, stored)
		case !exact && (counted < stored || counted > stored+beforeFault):
			t.Errorf("the consumer counted %d messages: want the broker's %d to %d (+%d stored before the fault)", counted, stored, stored+beforeFault, beforeFault)
		case !exact:
			server += fmt.Sprintf(" (bound %d..%d)", stored, stored+beforeFault)
		}
		if failed != 0 {
			t.Errorf("%d consume failures without -r", failed)
		}
		faultRow(t, "rocketmq-benchmark consumer", fault, r, faultCounts{sent: stored, acked: counted, failed: failed, server: server})
	}

	t.Run("name server unreachable from the start", func(t *testing.T) {
		// The original's consumer.start() throws: main's stack trace and
		// status 1 after the header; ours says why in one line.
		addr := testenv.ClosedLoopbackAddr(t)
		r := runFault(t, []string{bin, "consumer", "-n", addr, "-t", "topic-01", "-g", "cfault-none"}, nil, 40*time.Second, nil)
		want := "topic: topic-01, threadCount 20, group: cfault-none, suffix: false, filterType: null, expression: null, msgTraceEnable: false, aclEnable: false, reportInterval: 10000\n"
		if r.rc != 1 || r.stdout != want || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, addr) {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.rc, r.stdout, r.stderr)
		}
		if r.elapsed > 20*time.Second {
			t.Errorf("took %s", r.elapsed)
		}
		faultRow(t, "rocketmq-benchmark consumer", "name server unreachable", r, faultCounts{server: "-"})
	})

	// during produces while the fault strikes: a producer writes 6000
	// messages, fault runs 1.5 s in, and once both are over 1000 more are
	// written, which the consumer must get too. It returns what the broker
	// had stored when the fault struck.
	during := func(t *testing.T, topic string, fault func()) int64 {
		done := make(chan struct{})
		go func() { defer close(done); produce(t, topic, 6000) }()
		time.Sleep(1500 * time.Millisecond)
		before := g.MaxOffsets(t, topic, queues)
		fault()
		<-done
		produce(t, topic, 1000)
		return before
	}

	t.Run("connections reset", func(t *testing.T) {
		// The consumer reconnects and pulls again from its own offsets.
		check(t, "connections reset (reset_peer 2 s)", 90*time.Second, true, func(t *testing.T, topic string) int64 {
			return during(t, topic, func() {
				if _, err := g.Proxy.AddToxic("fault", "reset_peer", "downstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
					t.Error(err)
				}
				time.Sleep(2 * time.Second)
				_ = g.Proxy.RemoveToxic("fault")
			})
		})
	})

	t.Run("network stalled", func(t *testing.T) {
		// Nothing crosses the proxy for 10 s (timeout 0: the connections
		// are held, not closed). A pull whose answer was held is pulled
		// again from the consumer's own offset, but an offset commit may
		// be held too, so the count is bounded, not exact.
		check(t, "network stalled 10 s (timeout toxic)", 120*time.Second, false, func(t *testing.T, topic string) int64 {
			return during(t, topic, func() {
				if _, err := g.Proxy.AddToxic("fault", "timeout", "upstream", 1, toxiproxy.Attributes{"timeout": 0}); err != nil {
					t.Error(err)
				}
				time.Sleep(10 * time.Second)
				_ = g.Proxy.RemoveToxic("fault")
			})
		})
	})

	t.Run("broker paused", func(t *testing.T) {
		// Pulls in flight wait out the pause (the client's pull timeout
		// is longer); the consumer goes on from its own offsets.
		check(t, "broker paused 10 s (SIGSTOP)", 90*time.Second, true, func(t *testing.T, topic string) int64 {
			return during(t, topic, func() {
				g.Broker.Pause()
				time.Sleep(10 * time.Second)
				g.Broker.Resume()
			})
		})
	})

	t.Run("broker killed and restarted", func(t *testing.T) {
		check(t, "broker killed (SIGKILL) and restarted", 180*time.Second, false, func(t *testing.T, topic string) int64 {
			return during(t, topic, func() {
				g.Broker.Kill()
				killed := time.Now()
				if err := g.RestartBroker(); err != nil {
					t.Errorf("restart: %v", err)
				}
				t.Logf("broker back %s after the kill", time.Since(killed).Round(100*time.Millisecond))
			})
		})
	})
}
