package perfclones_test

// RabbitMQ PerfTest: the seed command lines of 000 and 002 (-z shortened)
// against the local RabbitMQ node, ours as 2.22 beside PerfTest 2.22.1's
// jar, ours by default (2.18) against 2.18.0's formats as the spec gives
// them, error cases, exact counts checked with rabbitmqctl, the CSV
// header, and the result file.

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/perftest"
	"github.com/perfclones/perfclones/internal/result/resulttest"
	"github.com/perfclones/perfclones/internal/shapes"
	"github.com/perfclones/perfclones/internal/testenv"
)

// perftestMasker masks numbers, and 2.18's and compact mode's "1.000s"
// (a number glued to its unit is a word to shapes.Mask); test ids become
// "test-<N>-<N>" through the number rule.
var perftestMasker = shapes.Masker{Rules: []shapes.Rule{{Re: regexp.MustCompile(`\b[0-9]+\.[0-9]{3}s\b`), Placeholder: "<N>s"}}}

// shapesInOrder are the distinct masked lines of out, in the order they
// first appear: interval lines repeat a different number of times from
// run to run, and the jar logs its TLS warning once per connection
// factory. Runs of spaces count as one: the compact format pads columns
// to the width of numbers that differ (its widths are unit-tested).
func shapesInOrder(out string) []string {
	var list []string
	seen := map[string]bool{}
	spaces := regexp.MustCompile(` {2,}`)
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		m := spaces.ReplaceAllString(perftestMasker.Mask(l), " ")
		if l == "" || seen[m] {
			continue
		}
		seen[m] = true
		list = append(list, m)
	}
	return list
}

// deleteExchange removes an exchange the seed lines declare with a
// durability that differs between releases (2.18 non-durable, 2.20+
// durable), so that each run declares it afresh.
func deleteExchange(t *testing.T, uri, name string) {
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
	_ = ch.ExchangeDelete(name, false, false)
}

func purgeQueues(t *testing.T, uri string, names ...string) {
	t.Helper()
	conn, err := amqp.Dial(uri)
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	defer conn.Close()
	for _, q := range names {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = ch.QueuePurge(q, false)
		_ = ch.Close()
	}
}

// seedPerfTestLines are the PerfTest command lines of seeds 000 and 002
// with the local node's URIs, -z 300 shortened to -z 2.
func seedPerfTestLines(env testenv.RabbitMQEnv) []struct {
	name string
	args []string
} {
	pre := testenv.VhostURI(env.URI, env.PredeclaredVhost)
	pattern := []string{"--queue-pattern", "queue-%d", "--queue-pattern-from", "1", "--queue-pattern-to", "3"}
	return []struct {
		name string
		args []string
	}{
		{"single queue x3 y3", []string{"-h", env.URI, "-e", "exchange-direct", "-s", "1024", "-u", "queue-1", "-x", "3", "-y", "3", "-z", "2"}},
		{"amqps single queue", []string{"-h", env.TLSURI, "-e", "exchange-direct", "-s", "1024", "-u", "queue-1", "-x", "1", "-y", "1", "-z", "2"}},
		{"amqps multi queue", append([]string{"-h", env.TLSURI, "-e", "exchange-direct", "-s", "1024", "-x", "3", "-y", "3", "-z", "2"}, pattern...)},
		{"multi queue", append([]string{"-h", env.URI, "-e", "exchange-direct", "-s", "1024", "-x", "3", "-y", "3", "-z", "2"}, pattern...)},
		{"predeclared quorum queue", []string{"-h", pre, "-e", "exchange-direct", "-s", "1024", "-u", "queue-1", "-x", "1", "-y", "1", "-z", "2", "--predeclared"}},
		{"predeclared quorum queues", append(append([]string{"-h", pre, "-e", "exchange-direct", "-s", "1024", "-x", "3", "-y", "3", "-z", "2"}, pattern...), "--predeclared")},
		{"predeclared fanout", []string{"-h", pre, "-e", "exchange-fanout", "-s", "1024", "-u", "queue-1", "-x", "1", "-y", "3", "-z", "2", "--predeclared"}},
		{"confirms mandatory", []string{"-h", env.URI, "-e", "exchange-direct", "-s", "1024", "-u", "queue-1", "-x", "1", "-y", "1", "-z", "2", "-c", "50", "-f", "mandatory"}},
		{"millis", []string{"-h", env.URI, "-x", "1", "-y", "1", "-z", "2", "-ms", "-r", "2000"}},
	}
}

// TestPerfTestSeedLinesBesideTheJar runs each seed line with ours as 2.22
// and with PerfTest 2.22.1 on the same node: the same distinct line
// shapes in the same order, the same streams and exit code.
func TestPerfTestSeedLinesBesideTheJar(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	pre := testenv.VhostURI(env.URI, env.PredeclaredVhost)
	csvDir := t.TempDir()
	// Beside the seed lines, the options whose output 2.19+ changed or
	// added: the compact format, a -C run's ending, the CSV file.
	lines := append(seedPerfTestLines(env), []struct {
		name string
		args []string
	}{
		{"compact confirms", []string{"-h", env.URI, "-x", "1", "-y", "1", "-z", "2", "-mf", "compact", "-c", "20", "-f", "mandatory"}},
		{"compact millis", []string{"-h", env.URI, "-x", "2", "-y", "1", "-z", "2", "-mf", "compact", "-ms"}},
		{"message limit", []string{"-h", env.URI, "-x", "2", "-y", "1", "-C", "3000", "-r", "1000", "-z", "20"}},
		{"csv", []string{"-h", env.URI, "-x", "1", "-y", "1", "-z", "2", "-o", filepath.Join(csvDir, "run.csv")}},
	}...)
	for _, tc := range lines {
		t.Run(tc.name, func(t *testing.T) {
			deleteExchange(t, env.URI, "exchange-direct")
			deleteExchange(t, env.URI, "direct")
			purgeQueues(t, pre, "queue-1", "queue-2", "queue-3")
			jar := runCommand(t, append([]string{env.ToolScript, "perftest"}, tc.args...), 60*time.Second, false, "", nil)
			deleteExchange(t, env.URI, "exchange-direct")
			deleteExchange(t, env.URI, "direct")
			purgeQueues(t, pre, "queue-1", "queue-2", "queue-3")
			got := runCommand(t, append([]string{ours}, tc.args...), 60*time.Second, false, "", []string{"PERFCLONES_PERFTEST_VERSION=2.22"})
			if got.rc != jar.rc || got.rc != 0 {
				t.Fatalf("exit code %d, jar %d\nours stderr: %s\njar stderr: %s", got.rc, jar.rc, got.stderr, jar.stderr)
			}
			if got.stderr != jar.stderr {
				t.Errorf("stderr %q, jar %q", got.stderr, jar.stderr)
			}
			g, j := shapesInOrder(got.stdout), shapesInOrder(jar.stdout)
			if strings.Join(g, "\n") != strings.Join(j, "\n") {
				t.Errorf("line shapes differ\nours:\n%s\njar:\n%s", strings.Join(g, "\n"), strings.Join(j, "\n"))
			}
		})
	}
}

// The 2.18.0 formats of the spec (sections 2.3 and 2.5), masked.
var (
	interval218 = regexp.MustCompile(`^id: test-<N>-<N>, time: <N>s(, sent: <N> msg/s)?(, returned: <N> msg/s)?(, confirmed: <N> msg/s, nacked: <N> msg/s)?(, received: <N> msg/s)?(, min/median/75th/95th/99th (consumer latency: <N>/<N>/<N>/<N>/<N> (µs|ms))?(, )?(confirm latency: <N>/<N>/<N>/<N>/<N> (µs|ms))?)?$`)
	startup     = regexp.MustCompile(`^id: test-<N>-<N>, starting (consumer|producer) #<N>(, channel #<N>)?$`)
	tlsAlert    = regexp.MustCompile(`^<N>:<N>:<N>(\.<N>)? \[main\] WARN  c\.r\.c\.TrustEverythingTrustManager - SECURITY ALERT: `)
)

// TestPerfTestSeedLinesAs218 runs each seed line with ours by default and
// checks every line against 2.18.0's formats: startup lines, "time: T.TTTs"
// interval lines, the stop line and exactly the two rate averages.
func TestPerfTestSeedLinesAs218(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	pre := testenv.VhostURI(env.URI, env.PredeclaredVhost)
	for _, tc := range seedPerfTestLines(env) {
		t.Run(tc.name, func(t *testing.T) {
			deleteExchange(t, env.URI, "exchange-direct")
			deleteExchange(t, env.URI, "direct")
			purgeQueues(t, pre, "queue-1", "queue-2", "queue-3")
			got := runCommand(t, append([]string{ours}, tc.args...), 60*time.Second, false, "", nil)
			if got.rc != 0 || got.stderr != "" {
				t.Fatalf("exit code %d, stderr %q", got.rc, got.stderr)
			}
			lines := strings.Split(strings.TrimRight(got.stdout, "\n"), "\n")
			n := len(lines)
			if n < 4 {
				t.Fatalf("too few lines:\n%s", got.stdout)
			}
			if lines[n-3] != "test stopped (Reached time limit)" {
				t.Errorf("stop line %q", lines[n-3])
			}
			for i, want := range []string{"sending rate avg: ", "receiving rate avg: "} {
				if m := perftestMasker.Mask(lines[n-2+i]); m != "id: test-<N>-<N>, "+want+"<N> msg/s" {
					t.Errorf("summary line %q", lines[n-2+i])
				}
			}
			intervals := 0
			for _, l := range lines[:n-3] {
				m := perftestMasker.Mask(l)
				switch {
				case startup.MatchString(m), tlsAlert.MatchString(m):
				case interval218.MatchString(m):
					intervals++
				default:
					t.Errorf("not a 2.18.0 line: %q", l)
				}
			}
			if intervals == 0 {
				t.Errorf("no interval line in a 2 s run:\n%s", got.stdout)
			}
		})
	}
}

// TestPerfTestErrorsBesideTheJar: parse errors, bad numbers and an
// unreachable broker give the jar's streams, first lines and exit codes
// when ours runs as 2.22 (the full texts are compared in-process against
// recorded outputs in internal/perftest).
func TestPerfTestErrorsBesideTheJar(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	for _, args := range [][]string{
		{"--bogus"},
		{"-x"},
		{"--prod", "1"},
		{"-x", "abc"},
		{"-qp", "queue-%d"},
		{"-h", "amqp://127.0.0.1:1", "-z", "1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			jar := runCommand(t, append([]string{env.ToolScript, "perftest"}, args...), 30*time.Second, false, "", nil)
			got := runCommand(t, append([]string{ours}, args...), 30*time.Second, false, "", []string{"PERFCLONES_PERFTEST_VERSION=2.22"})
			if got.rc != jar.rc {
				t.Errorf("exit code %d, jar %d", got.rc, jar.rc)
			}
			if got.stderr != jar.stderr {
				t.Errorf("stderr %q, jar %q", got.stderr, jar.stderr)
			}
			first := func(s string) string { return perftestMasker.Mask(strings.SplitN(s, "\n", 2)[0]) }
			if first(got.stdout) != first(jar.stdout) {
				t.Errorf("first stdout line %q, jar %q", first(got.stdout), first(jar.stdout))
			}
			if got.elapsed > 10*time.Second {
				t.Errorf("took %s", got.elapsed)
			}
		})
	}
}

// TestPerfTestExactCounts: with -C N and no consumer the broker holds
// exactly N messages per producer channel; with -C N -D N both sides
// count exactly N, and the result file says so.
func TestPerfTestExactCounts(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	queue := fmt.Sprintf("perfclones-exact-%d", os.Getpid())
	deleteExchange(t, env.URI, "direct")
	defer func() {
		_ = runCommand(t, []string{env.ToolScript, "rabbitmqctl", "delete_queue", queue}, 30*time.Second, false, "", nil)
	}()
	got := runCommand(t, []string{ours, "-h", env.URI, "-x", "2", "-X", "2", "-y", "0", "-C", "1500", "-u", queue, "-ad", "false", "-z", "60"},
		90*time.Second, false, "", nil)
	if got.rc != 0 || !strings.Contains(got.stdout, "test stopped (Producer reached message limit [4])") {
		t.Fatalf("exit code %d\n%s%s", got.rc, got.stdout, got.stderr)
	}
	depth := ""
	for _, l := range strings.Split(env.Ctl(t, "list_queues", "-q", "name", "messages"), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == queue {
			depth = f[1]
		}
	}
	if depth != "6000" {
		t.Errorf("queue depth %q, want 6000 (2 connections x 2 channels x 1500)", depth)
	}

	file := filepath.Join(t.TempDir(), "result.json")
	deleteExchange(t, env.URI, "direct")
	got = runCommand(t, []string{ours, "-h", env.URI, "-x", "1", "-y", "1", "-C", "3000", "-D", "3000", "-z", "60"},
		90*time.Second, false, "", []string{"PERFCLONES_RESULT=" + file})
	if got.rc != 0 {
		t.Fatalf("exit code %d\n%s%s", got.rc, got.stdout, got.stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	run, err := resulttest.Validate(data)
	if err != nil {
		t.Fatalf("result file: %v", err)
	}
	ops := map[string]int64{}
	for _, tst := range run.Tests {
		ops[tst.Name] = tst.Counts.Operations
		if tst.Name == "consume" {
			l := tst.Latency["consume"]
			if l == nil || l.Count == 0 || l.Count > 3000 {
				t.Errorf("consumer latency histogram: %+v", l)
			}
		}
	}
	if ops["publish"] != 3000 || ops["consume"] != 3000 {
		t.Errorf("result counts %v, want 3000 published and 3000 consumed", ops)
	}
	if run.Tool != "perftest" || run.Release != "2.18" || run.Ending != "completed" {
		t.Errorf("result run %s %s %s", run.Tool, run.Release, run.Ending)
	}
}

// TestPerfTestCSVHeader: -o writes the jar's exact header, by default and
// as 2.22, and rows of 17 columns.
func TestPerfTestCSVHeader(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	dir := t.TempDir()
	args := func(f string) []string {
		return []string{"-h", env.URI, "-x", "1", "-y", "1", "-z", "2", "-c", "10", "-o", filepath.Join(dir, f)}
	}
	deleteExchange(t, env.URI, "direct")
	jar := runCommand(t, append([]string{env.ToolScript, "perftest"}, args("jar.csv")...), 60*time.Second, false, "", nil)
	if jar.rc != 0 {
		t.Fatalf("jar: %d %s", jar.rc, jar.stderr)
	}
	want, err := os.ReadFile(filepath.Join(dir, "jar.csv"))
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := strings.SplitN(string(want), "\n", 2)[0]
	for _, rel := range []string{"2.18", "2.22"} {
		deleteExchange(t, env.URI, "direct")
		got := runCommand(t, append([]string{ours}, args(rel+".csv")...), 60*time.Second, false, "", []string{"PERFCLONES_PERFTEST_VERSION=" + rel})
		if got.rc != 0 {
			t.Fatalf("%s: %d %s", rel, got.rc, got.stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, rel+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if lines[0] != wantHeader {
			t.Errorf("%s header %q, want %q", rel, lines[0], wantHeader)
		}
		if len(lines) < 2 {
			t.Errorf("%s: no rows", rel)
		}
		for _, row := range lines[1:] {
			if n := strings.Count(row, ",") + 1; n != 17 {
				t.Errorf("%s row %q has %s columns", rel, row, strconv.Itoa(n))
			}
		}
	}
}

// TestPerfTestSignalEndsTheRun: SIGINT ends a run without -z. As 2.22 the
// stop line and the summary follow (PerfTest's shutdown hook); 2.18
// prints nothing more. Both exit 130, as the JVM does.
func TestPerfTestSignalEndsTheRun(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	for _, rel := range []string{"2.18", "2.22"} {
		deleteExchange(t, env.URI, "direct")
		file := filepath.Join(t.TempDir(), "result.json")
		got := runCommand(t, []string{ours, "-h", env.URI, "-x", "1", "-y", "1", "-r", "500"}, 3*time.Second, true, "",
			[]string{"PERFCLONES_PERFTEST_VERSION=" + rel, "PERFCLONES_RESULT=" + file})
		if got.rc != 130 {
			t.Errorf("%s: exit code %d, want 130\n%s", rel, got.rc, got.stderr)
		}
		stopped := strings.Contains(got.stdout, "\ntest stopped\n")
		if rel == "2.22" && (!stopped || !strings.Contains(got.stdout, "sending rate avg: ")) {
			t.Errorf("2.22: no stop line and summary after SIGINT:\n%s", got.stdout)
		}
		if rel == "2.18" && (stopped || strings.Contains(got.stdout, "rate avg")) {
			t.Errorf("2.18 printed an ending after SIGINT:\n%s", got.stdout)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%s: no result file after SIGINT: %v", rel, err)
		}
		run, err := resulttest.Validate(data)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if run.Ending != "interrupted" || len(run.Tests) == 0 || run.Tests[0].Counts.Operations == 0 {
			t.Errorf("%s: result %s with %d tests", rel, run.Ending, len(run.Tests))
		}
	}
}

// cuttableProxy forwards TCP connections to target until cut closes
// every one of them: the client sees a broker that died mid-run.
type cuttableProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCuttableProxy(t *testing.T, target string) *cuttableProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttableProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *cuttableProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestPerfTestBrokerLostMidRun: a broker that goes away mid-run (and
// stays away). With -dcr (no recovery) the run ends at once with the
// agent's reason and the summary, as PerfTest's does; with recovery (the
// default) PerfTest stays silent, tries to reconnect every -cri seconds
// and ends as usual at -z, which ours does too, naming the loss on stderr;
// without -z both go on trying until interrupted. A broker that is not
// there at all is the ConnectException, exit 1, at once.
func TestPerfTestBrokerLostMidRun(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	for _, tc := range []struct {
		name      string
		args      []string
		stop      *regexp.Regexp
		most      time.Duration
		lossNoted bool
	}{
		{"without recovery", []string{"-dcr", "-z", "60"}, regexp.MustCompile(`(?m)^test stopped \((Consumer shut down|Error in producer \(.*\))`), 10 * time.Second, false},
		{"with recovery and -z", []string{"-z", "6", "-cri", "1"}, regexp.MustCompile(`(?m)^test stopped \(Reached time limit\)$`), 12 * time.Second, true},
		// Interrupted after 8 s, when the first reconnection (-cri 5, the
		// default, after the cut at 2 s) has been tried and named on
		// stderr (2.22 prints the stop line and summary on a signal).
		{"with recovery, no -z", nil, regexp.MustCompile(`(?m)^test stopped$`), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(env.URI)
			if err != nil {
				t.Fatal(err)
			}
			proxy := newCuttableProxy(t, u.Host)
			u.Host = proxy.ln.Addr().String()
			time.AfterFunc(2*time.Second, func() { proxy.ln.Close(); proxy.cut() })
			args := append([]string{ours, "-h", u.String(), "-e", "perfclones-lost", "-x", "1", "-y", "1", "-r", "1000"}, tc.args...)
			if tc.most == 0 {
				// 2.22's exchange is durable: a name of its own.
				args[4] = "perfclones-lost-2.22"
				got := runCommand(t, args, 8*time.Second, true, "", []string{"PERFCLONES_PERFTEST_VERSION=2.22"})
				if !got.timedOut || got.rc != 130 || !tc.stop.MatchString(got.stdout) || !strings.Contains(got.stdout, "receiving rate avg: ") ||
					!strings.Contains(got.stderr, " lost (") {
					t.Errorf("want a run still reconnecting at 8 s, then the stop line and summary on SIGINT, exit 130: exit %d after %s\n%s\nstderr: %s",
						got.rc, got.elapsed, got.stdout, got.stderr)
				}
				return
			}
			got := runCommand(t, args, 30*time.Second, false, "", nil)
			if got.timedOut || got.elapsed > tc.most {
				t.Fatalf("still running %s after the broker went away", got.elapsed)
			}
			if got.rc != 0 || !tc.stop.MatchString(got.stdout) || !strings.Contains(got.stdout, "receiving rate avg: ") {
				t.Errorf("exit code %d, stop line or summary missing:\n%s\nstderr: %s", got.rc, got.stdout, got.stderr)
			}
			if noted := strings.Contains(got.stderr, " lost ("); noted != tc.lossNoted {
				t.Errorf("stderr %q", got.stderr)
			}
		})
	}

	down := runCommand(t, []string{ours, "-h", "amqp://127.0.0.1:1", "-z", "5"}, 20*time.Second, false, "", nil)
	if down.rc != 1 || down.stderr != "Main thread caught exception: java.net.ConnectException: Connection refused\n" || down.elapsed > 5*time.Second {
		t.Errorf("unreachable broker: code %d after %s, stderr %q", down.rc, down.elapsed, down.stderr)
	}
}

// TestPerfTestFlowControlNotices: with the node's memory high watermark
// set so low that every publishing connection is blocked, our run
// reports connection.blocked on stderr (stdout stays PerfTest's) and the
// result file counts it.
func TestPerfTestFlowControlNotices(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	env.Ctl(t, "set_vm_memory_high_watermark", "0.000001")
	defer env.Ctl(t, "set_vm_memory_high_watermark", "0.2")
	deleteExchange(t, env.URI, "direct")
	file := filepath.Join(t.TempDir(), "result.json")
	got := runCommand(t, []string{ours, "-h", env.URI, "-x", "1", "-y", "1", "-s", "4096", "-z", "4"}, 30*time.Second, false, "",
		[]string{"PERFCLONES_RESULT=" + file})
	if got.rc != 0 {
		t.Fatalf("exit code %d: %s", got.rc, got.stderr)
	}
	if !strings.Contains(got.stderr, "blocked by the broker (flow control)") {
		t.Errorf("no blocked notice on stderr: %q", got.stderr)
	}
	if strings.Contains(got.stdout, "blocked") {
		t.Errorf("the notice reached stdout")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	run, err := resulttest.Validate(data)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tst := range run.Tests {
		found = found || (tst.Name == "flow-control-blocked" && tst.Counts.Operations > 0)
	}
	if !found {
		t.Errorf("the result file does not count the blocked connections")
	}
}

// TestPerfTestMultiAndWebServer runs PerfTestMulti on a spec with one
// scenario of each type, serves the result with WebServer beside the
// shipped example page (which loads ../lib/jquery.min.js,
// ../lib/jquery.flot.min.js and ../perf.js and calls render_graphs, as the
// original's examples do), and has headless Chromium draw it: every chart
// must have drawn points and the summary a non-zero rate. The screenshot
// is kept (PERFCLONES_TEST_ARTIFACTS, else the temporary directory).
func TestPerfTestMultiAndWebServer(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	dir := t.TempDir()
	examples := filepath.Join(dir, "html", "examples")
	if err := os.MkdirAll(examples, 0o755); err != nil {
		t.Fatal(err)
	}
	deleteExchange(t, env.URI, "direct")
	spec := fmt.Sprintf(`[{'name': 'simple', 'type': 'simple', 'uri': '%s', 'params': [{'time-limit': 4}]},
 {'name': 'sizes-and-producers', 'type': 'varying', 'params': [{'time-limit': 1}],
  'variables': [{'name': 'min-msg-size', 'values': [0, 1000]}, {'name': 'producer-count', 'values': [1, 2]}]},
 {'name': 'sizes', 'type': 'varying', 'params': [{'time-limit': 1}],
  'variables': [{'name': 'min-msg-size', 'values': [0, 1000]}]},
 {'name': 'rate-vs-latency', 'type': 'rate-vs-latency', 'params': [{'time-limit': 1}]}]`, env.URI)
	specFile := filepath.Join(examples, "example-spec.js")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	resultFile := filepath.Join(examples, "example-result.js")
	got := runCommand(t, []string{ours, "com.rabbitmq.perf.PerfTestMulti", specFile, resultFile}, 180*time.Second, false, "", nil)
	if got.rc != 0 {
		t.Fatalf("PerfTestMulti: exit code %d\n%s%s", got.rc, got.stdout, got.stderr)
	}
	wantConsole := "Running scenario 'simple' \nRunning scenario 'sizes-and-producers' ####\n" +
		"Running scenario 'sizes' ##\nRunning scenario 'rate-vs-latency' #################\n"
	if got.stdout != wantConsole {
		t.Errorf("console %q, want %q", got.stdout, wantConsole)
	}
	var results map[string]map[string]any
	data, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatalf("result file: %v", err)
	}
	if r, _ := results["simple"]["send-msg-rate"].(float64); r < 100 {
		t.Errorf("simple scenario's send rate %v msg/s: rates must be msg/s, not 10^6 too small", r)
	}
	limits, _ := results["rate-vs-latency"]["dimension-values"].(map[string]any)["producerRateLimit"].([]any)
	if len(limits) != 17 || limits[len(limits)-1] == "0" {
		t.Errorf("rate-vs-latency rate limits %v", limits)
	}
	example, err := fs.ReadFile(perftest.Assets, "examples/example.html")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(examples, "example.html"), example, 0o644); err != nil {
		t.Fatal(err)
	}

	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	server := exec.Command(ours, "com.rabbitmq.perf.WebServer", filepath.Join(dir, "html"), port)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = server.Process.Kill(); _ = server.Wait() }()
	page := "http://127.0.0.1:" + port + "/examples/example.html"
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("WebServer does not accept connections")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for path, wantType := range map[string]string{"/perf.js": "text/javascript", "/lib/jquery.min.js": "text/javascript",
		"/lib/jquery.flot.min.js": "text/javascript", "/perf.css": "text/css", "/examples/example-result.js": "text/javascript"} {
		resp, err := http.Get("http://127.0.0.1:" + port + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), wantType) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	chrome := func(extra ...string) toolRun {
		args := append([]string{chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
			"--user-data-dir=" + filepath.Join(dir, "chromium")}, extra...)
		return runCommand(t, append(args, page), 90*time.Second, false, "", nil)
	}
	dom := chrome("--dump-dom")
	points := regexp.MustCompile(`<canvas[^>]*data-points="([0-9]+)"`).FindAllStringSubmatch(dom.stdout, -1)
	if len(points) != 4 {
		t.Fatalf("%d charts drew, want 4 (time, series, x-y, r-l):\n%s\n%s", len(points), dom.stdout, dom.stderr)
	}
	for i, p := range points {
		if p[1] == "0" {
			t.Errorf("chart %d drew no points", i+1)
		}
	}
	if m := regexp.MustCompile(`<strong>([0-9]+)</strong>msg/s`).FindStringSubmatch(dom.stdout); m == nil || m[1] == "0" {
		t.Errorf("summary shows no rate: %v", m)
	}
	artifacts := os.Getenv("PERFCLONES_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = os.TempDir()
	}
	shot := filepath.Join(artifacts, "perftest-webserver.png")
	chrome("--window-size=1000,1700", "--screenshot="+shot)
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Errorf("no screenshot at %s: %v", shot, err)
	} else {
		t.Logf("screenshot: %s", shot)
	}
}

// TestPerfTestResultMatchesPrintedSummary: as 2.22 the summary prints the
// whole run's latency percentiles; the result file's histograms give the
// same values, and count no more samples than messages.
func TestPerfTestResultMatchesPrintedSummary(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	deleteExchange(t, env.URI, "direct")
	file := filepath.Join(t.TempDir(), "result.json")
	got := runCommand(t, []string{ours, "-h", env.URI, "-x", "1", "-y", "1", "-z", "3", "-c", "50", "-r", "3000"}, 60*time.Second, false, "",
		[]string{"PERFCLONES_PERFTEST_VERSION=2.22", "PERFCLONES_RESULT=" + file})
	if got.rc != 0 {
		t.Fatalf("exit code %d: %s", got.rc, got.stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	run, err := resulttest.Validate(data)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]int{}
	for i, tst := range run.Tests {
		tests[tst.Name] = i
	}
	for _, c := range []struct{ test, hist, label string }{{"consume", "consume", "consumer"}, {"publish", "confirm", "confirm"}} {
		m := regexp.MustCompile(`(?m)^id: test-[0-9-]+, ` + c.label + ` latency min/median/75th/95th/99th ([0-9]+)/([0-9]+)/([0-9]+)/([0-9]+)/([0-9]+) µs$`).FindStringSubmatch(got.stdout)
		if m == nil {
			t.Fatalf("no %s latency summary in\n%s", c.label, got.stdout)
		}
		tst := run.Tests[tests[c.test]]
		l := tst.Latency[c.hist]
		if l == nil || l.Count == 0 || l.Count > tst.Counts.Operations {
			t.Fatalf("%s histogram %+v for %d operations", c.hist, l, tst.Counts.Operations)
		}
		want := []int64{l.Min, l.Percentiles["50"], l.Percentiles["75"], l.Percentiles["95"], l.Percentiles["99"]}
		for i, w := range want {
			if printed, _ := strconv.ParseInt(m[i+1], 10, 64); printed != w {
				t.Errorf("%s latency value %d: printed %d, result file %d", c.label, i, printed, w)
			}
		}
	}
}

// TestPerfTestMessageOptionsBesideTheJar: -B/-T, -mp, --verbose-full,
// -po, -niot and -udsc as ours (as 2.22) and PerfTest 2.22.1's jar run
// them: the same exit code and stderr, and the same distinct line shapes
// on stdout (stack frames left out, stop reasons sorted: the jar lists
// them in hash order).
func TestPerfTestMessageOptionsBesideTheJar(t *testing.T) {
	env := testenv.RabbitMQ(t)
	ours := ourTool(t, "perftest")
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.txt"), filepath.Join(dir, "two.txt")
	if err := os.WriteFile(one, []byte("hello body one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	stopReasons := regexp.MustCompile(`^test stopped \((.*)\)$`)
	intervalLine := regexp.MustCompile(`^id: [^,]*, time [0-9.]+ s, `)
	normal := func(out string) string {
		var keep []string
		for _, l := range strings.Split(out, "\n") {
			// Interval lines come and go with timing: the jar's producer
			// starts up to 1 s late when a rate is set (2.20+).
			if strings.HasPrefix(l, "\t") || intervalLine.MatchString(l) {
				continue
			}
			if m := stopReasons.FindStringSubmatch(l); m != nil {
				r := strings.Split(m[1], ", ")
				sort.Strings(r)
				l = "test stopped (" + strings.Join(r, ", ") + ")"
			}
			keep = append(keep, l)
		}
		shapes := shapesInOrder(strings.Join(keep, "\n"))
		sort.Strings(shapes)
		return strings.Join(shapes, "\n")
	}
	for _, tc := range []struct {
		name string
		args []string
		rc   int
	}{
		{"body files, content type, verbose-full", []string{"-h", env.URI, "-e", "perfclones-msg-files", "-x", "1", "-y", "1", "-C", "3", "-D", "3", "-r", "20",
			"-B", one + "," + two, "-T", "text/plain", "--verbose-full"}, 0},
		{"message properties, confirms, verbose-full", []string{"-h", env.URI, "-e", "perfclones-msg-mp", "-x", "1", "-y", "1", "-C", "2", "-D", "2", "-r", "20",
			"-B", one, "-mp", "priority=5,myheader=abc,num=42,appId=perf", "-f", "persistent", "-c", "10", "--verbose-full"}, 0},
		{"polling", []string{"-h", env.URI, "-e", "perfclones-msg-po", "-x", "1", "-y", "1", "-C", "5", "-D", "5", "-r", "20", "-po", "--verbose"}, 0},
		{"a bad message timestamp", []string{"-h", env.URI, "-e", "perfclones-msg-ts", "-x", "1", "-y", "1", "-C", "1", "-mp", "timestamp=2026-12-01"}, 1},
		{"no NIO thread", []string{"-h", env.URI, "-x", "1", "-y", "1", "-C", "1", "-niot", "0", "-niotp", "1"}, 1},
		{"default SSL context", []string{"-h", env.TLSURI, "-x", "1", "-y", "1", "-z", "2", "-udsc"}, 1},
		// Thread-pool sizes change nothing in Go; the start delay, consumer
		// arguments and socket options are acted on, and nothing is named
		// on stderr.
		{"thread pools, start delay, consumer arguments, socket options", []string{"-h", env.URI, "-e", "perfclones-msg-pools", "-x", "1", "-y", "1", "-C", "3", "-D", "3", "-r", "20",
			"-pst", "2", "-hst", "2", "-ctp", "1", "-prsd", "1", "-ca", "x-priority=5", "-tsbs", "131072", "-trbs", "131072", "-tnd", "false"}, 0},
		{"server name on a plain connection", []string{"-h", env.URI, "-e", "perfclones-msg-sni", "-x", "1", "-y", "1", "-C", "2", "-D", "2", "-r", "20", "-sni", "localhost"}, 0},
		{"server name on TLS", []string{"-h", env.TLSURI, "-e", "perfclones-msg-sni-tls", "-x", "1", "-y", "1", "-C", "2", "-D", "2", "-r", "20", "-sni", "localhost"}, 0},
		{"two server names on TLS", []string{"-h", env.TLSURI, "-x", "1", "-y", "1", "-C", "1", "-sni", "a,b"}, 1},
		{"servers up limit never met", []string{"-h", env.URI, "-x", "1", "-y", "1", "-C", "1", "-sst", "2", "-sul", "0"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jar := runCommand(t, append([]string{env.ToolScript, "perftest"}, tc.args...), 60*time.Second, false, "", nil)
			got := runCommand(t, append([]string{ours}, tc.args...), 60*time.Second, false, "", []string{"PERFCLONES_PERFTEST_VERSION=2.22"})
			if jar.rc != tc.rc || got.rc != tc.rc {
				t.Fatalf("exit code: jar %d, ours %d, want %d\njar stderr: %s\nour stderr: %s", jar.rc, got.rc, tc.rc, jar.stderr, got.stderr)
			}
			if got.stderr != jar.stderr {
				t.Errorf("stderr %q, jar %q", got.stderr, jar.stderr)
			}
			if g, j := normal(got.stdout), normal(jar.stdout); g != j {
				t.Errorf("line shapes differ\nours:\n%s\njar:\n%s", g, j)
			}
		})
	}
}
