package perfclones_test

// Fault tests of kafka-producer-perf-test and kafka-consumer-perf-test on
// the WAN rig (scripts/kafka-tool wan: a private broker whose advertised
// listener is a Toxiproxy proxy, so every client connection crosses the
// proxy): the broker killed and restarted, paused, connections reset and
// stalled mid-run. Each fault case runs ours and Kafka's own 4.4 tool side
// by side, each in its own topic on the same broker, so one fault hits both
// at the same moment of their runs. Every producer run sends
// --payload-monotonic values (0, 1, ... N-1); afterwards its topic is read
// back. What must hold of ours: the run ends with its final line, within
// its sending time plus delivery.timeout.ms plus max.block.ms (and some
// slack), reported sent + failure lines = --num-records, and the topic
// holds exactly the reported successes, each value once (idempotence: no
// record written twice after a retry; exact counts: a record reported
// failed was not written). Of Java's run the test asserts the same bound,
// the final line and the same exit code, and logs where it breaks one of
// the identities. Each case logs a "compare |" line per tool: exit code,
// time to exit, sent, failed, records in the topic (the produce requests
// in flight per broker are counted in compat_kafka_inflight_test.go). The
// last cases pause and kill the broker under both consumers.
//
// The test starts the rig (and stops it at the end); it takes four to six
// minutes (more on a busy machine, where the broker restarts slowly), most
// of it the broker's restarts, the 20 s pauses and the consumers' close on
// a dead broker.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/shapes"
	"github.com/perfclones/perfclones/internal/testenv"
)

// wanRig is the WAN rig as the test drives it.
type wanRig struct {
	tool      string // scripts/kafka-tool
	bootstrap string // the proxy's address, which the broker advertises
	proxy     *toxiproxy.Proxy
}

// startWANRig starts the rig with 2 ms each way (scripts/kafka-tool wan
// start) and stops it when the test ends.
func startWANRig(t *testing.T) *wanRig {
	t.Helper()
	kenv := testenv.Kafka(t)
	tenv := testenv.Toxiproxy(t)
	rig := &wanRig{tool: kenv.ToolScript}
	rig.run(t, 3*time.Minute, "start", "2")
	t.Cleanup(func() { rig.run(t, 2*time.Minute, "stop") })
	out := rig.run(t, 30*time.Second, "env")
	vars := map[string]string{}
	for _, l := range shapes.Lines(out) {
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "=")
		if ok {
			vars[k] = strings.Trim(v, `'"`)
		}
	}
	rig.bootstrap = vars["PERF_KAFKA_WAN_BOOTSTRAP"]
	p, err := toxiproxy.NewClient(tenv.API).Proxy(vars["PERF_KAFKA_WAN_PROXY"])
	if err != nil || rig.bootstrap == "" {
		t.Fatalf("WAN rig: proxy %q, bootstrap %q: %v\n%s", vars["PERF_KAFKA_WAN_PROXY"], rig.bootstrap, err, out)
	}
	rig.proxy = p
	return rig
}

// run runs scripts/kafka-tool wan ARGS and returns its stdout; a failure
// fails the test.
func (w *wanRig) run(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.tool, append([]string{"wan"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafka-tool wan %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// wanRun is one run of a tool, ours or Kafka's, in its own process.
type wanRun struct {
	stdout, stderr bytes.Buffer
	cmd            *exec.Cmd
	start          time.Time
	done           chan struct{} // closed when the process has exited
	err            error         // cmd.Wait's, once done is closed
	elapsed        time.Duration // from start to the exit, once done is closed
}

// startProducer starts our binary bin (as 4.4) with args.
func startProducer(t *testing.T, bin string, args []string) *wanRun {
	t.Helper()
	return startWANTool(t, append([]string{bin}, args...), "PERFCLONES_KAFKA_VERSION=4.4")
}

// startJava starts Kafka's own tool ("producer", "consumer": 4.4) with args.
func (w *wanRig) startJava(t *testing.T, tool string, args []string) *wanRun {
	t.Helper()
	return startWANTool(t, append([]string{w.tool, tool}, args...))
}

// startWANTool starts argv with COLUMNS=80 and env; a run still going when
// the test ends is killed.
func startWANTool(t *testing.T, argv []string, env ...string) *wanRun {
	t.Helper()
	r := &wanRun{done: make(chan struct{})}
	r.cmd = exec.Command(argv[0], argv[1:]...)
	r.cmd.Env = append(append(os.Environ(), "COLUMNS=80"), env...)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		r.elapsed = time.Since(r.start)
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// end waits until the run has exited or limit has passed since its start
// (then it kills it) and returns its exit code, and whether it exited by
// itself.
func (r *wanRun) end(t *testing.T, limit time.Duration) (rc int, exited bool) {
	t.Helper()
	exited = true
	select {
	case <-r.done:
	case <-time.After(time.Until(r.start.Add(limit))):
		exited = false
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	var exitErr *exec.ExitError
	switch {
	case r.err == nil:
	case errors.As(r.err, &exitErr):
		rc = exitErr.ExitCode()
	default:
		t.Fatal(r.err)
	}
	return rc, exited
}

// wait is end for a run that must exit within limit of its start: one that
// does not fails the test.
func (r *wanRun) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	rc, exited := r.end(t, limit)
	if !exited {
		t.Fatalf("no exit within %v\nstdout:\n%s\nstderr:\n%s", limit, r.stdout.String(), r.stderr.String())
	}
	return rc
}

// toolRun is the finished run in the shape compareKafkaRuns takes.
func (r *wanRun) toolRun(rc int) toolRun {
	return toolRun{stdout: r.stdout.String(), stderr: r.stderr.String(), rc: rc, elapsed: r.elapsed}
}

// wanRunSlack is what a producer run may take beyond its sending time and
// its timeouts: the JVM's start-up, metadata, the close.
const wanRunSlack = 20 * time.Second

// runLimit is how long a producer run of n records at --throughput rate
// with --command-property props may take: its sending time, plus
// delivery.timeout.ms (the longest a record waits for its answer) and
// max.block.ms (the longest send() blocks for metadata or buffer space),
// plus wanRunSlack. Both tools default to Java's 120 s and 60 s.
func runLimit(n, rate int, props []string) time.Duration {
	ms := map[string]int64{"delivery.timeout.ms": 120000, "max.block.ms": 60000}
	for _, p := range props {
		k, v, _ := strings.Cut(p, "=")
		if _, ok := ms[k]; ok {
			v, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				panic("property " + p)
			}
			ms[k] = v
		}
	}
	sending := time.Duration(n) * time.Second / time.Duration(rate)
	return sending + time.Duration(ms["delivery.timeout.ms"]+ms["max.block.ms"])*time.Millisecond + wanRunSlack
}

// waitFirstRecord waits until the topic holds a record, at most limit, and
// returns when it saw it.
func waitFirstRecord(t *testing.T, addrs []string, topic string, limit time.Duration) time.Time {
	t.Helper()
	adm := kafkaAdmin(t, addrs)
	defer adm.Close()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ctx, cancel := adminCtx()
		offsets, err := adm.ListEndOffsets(ctx, topic)
		cancel()
		var sum int64
		if err == nil {
			offsets.Each(func(o kadm.ListedOffset) {
				if o.Err == nil {
					sum += o.Offset
				}
			})
		}
		if sum > 0 {
			return time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no record in %s within %v", topic, limit)
	return time.Time{}
}

// readMonotonic reads the whole topic from addrs and returns how many
// records it holds and how often each value appears.
func readMonotonic(t *testing.T, addrs []string, topic string, want int64) (int64, map[int64]int) {
	t.Helper()
	end := endOffsets(t, addrs, topic)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID("perfclones-compat-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[int64]int{}
	var n int64
	deadline := time.Now().Add(60 * time.Second)
	for n < end && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			n++
			v, err := strconv.ParseInt(string(r.Value), 10, 64)
			if err != nil || v < 0 || v >= want {
				t.Errorf("record %s-%d@%d: value %q is not one of 0..%d", topic, r.Partition, r.Offset, r.Value, want-1)
				return
			}
			seen[v]++
		})
	}
	if n != end {
		t.Errorf("read %d records of the %d the end offsets count", n, end)
	}
	return n, seen
}

// producerTally is what a finished monotonic producer run reported and what
// its topic holds.
type producerTally struct {
	rc       int
	elapsed  time.Duration
	final    bool  // stdout ends with the final line
	sent     int64 // the final line's count
	failed   int64 // failure lines (an exception's first line) on stderr
	held     int64 // records in the topic
	distinct int   // distinct values among them
	twice    []int64
}

// String is the tally as one line of the comparison.
func (p producerTally) String() string {
	final := ""
	if !p.final {
		final = " (no final line)"
	}
	return fmt.Sprintf("rc %d, exit after %.1f s, sent %d%s, failed %d, in topic %d (%d distinct values)",
		p.rc, p.elapsed.Seconds(), p.sent, final, p.failed, p.held, p.distinct)
}

// tallyProducer reads a finished monotonic run's output and its topic,
// logging the stderr lines (the failure lines by kind; Java's log and stack
// trace lines left out).
func tallyProducer(t *testing.T, addrs []string, topic string, r *wanRun, rc int, n int64) producerTally {
	t.Helper()
	out := shapes.Lines(r.stdout.String())
	p := producerTally{rc: rc, elapsed: r.elapsed}
	kinds := map[string]int{}
	for _, l := range javaStderr(r.stderr.String()) {
		if exceptionLineRe.MatchString(l) {
			p.failed++
			kinds[kafkaMasker.Mask(l)]++
		} else {
			t.Logf("stderr: %s", l)
		}
	}
	for l, c := range kinds {
		t.Logf("stderr: %d x %s", c, l)
	}
	p.sent, p.final = finalSent(t, out)
	p.final = p.final && kafkaMasker.Mask(lastLine(out)) == producerFinalShape
	var seen map[int64]int
	p.held, seen = readMonotonic(t, addrs, topic, n)
	p.distinct = len(seen)
	for v, c := range seen {
		if c > 1 {
			p.twice = append(p.twice, v)
		}
	}
	slices.Sort(p.twice)
	return p
}

// checkExact checks a finished monotonic run of ours: exit code 0, its
// final line, sent + failures = n, and the topic holding exactly the sent
// records, each value once. It returns the tally.
func checkExact(t *testing.T, addrs []string, topic string, r *wanRun, rc int, n int64) producerTally {
	t.Helper()
	p := tallyProducer(t, addrs, topic, r, rc, n)
	t.Logf("ours: %v, last line %q", p, lastLine(shapes.Lines(r.stdout.String())))
	if rc != 0 {
		t.Errorf("exit code %d, want 0\nstderr:\n%s", rc, r.stderr.String())
	}
	if !p.final {
		t.Fatalf("the run did not end with its final line:\n%s", r.stdout.String())
	}
	if p.sent+p.failed != n {
		t.Errorf("sent %d + failures %d = %d, want --num-records %d", p.sent, p.failed, p.sent+p.failed, n)
	}
	for i, v := range p.twice {
		if i == 5 {
			break
		}
		t.Errorf("value %d written more than once", v)
	}
	if p.held != p.sent || int64(p.distinct) != p.sent {
		t.Errorf("the topic holds %d records (%d distinct values), ours reported %d sent and %d failed", p.held, p.distinct, p.sent, p.failed)
	} else {
		t.Logf("the topic holds the %d reported successes, each once; %d failed", p.sent, p.failed)
	}
	return p
}

// checkJavaProducer checks a finished monotonic run of Kafka's producer for
// what holds of it: it ended with its final line, and with ours's exit
// code. Where Java breaks an identity ours keeps (sent + failures = n, the
// topic holding exactly the reported successes, each once) that is logged:
// it is Java's behaviour, not a fault of the test.
func checkJavaProducer(t *testing.T, p, ours producerTally, r *wanRun, n int64) {
	t.Helper()
	t.Logf("Java: %v, last line %q", p, lastLine(shapes.Lines(r.stdout.String())))
	if !p.final {
		t.Errorf("Java's run did not end with its final line:\nstdout:\n%s\nstderr:\n%s", r.stdout.String(), r.stderr.String())
	}
	if p.rc != ours.rc {
		t.Errorf("exit code: Java %d, ours %d", p.rc, ours.rc)
	}
	if p.sent+p.failed != n {
		t.Logf("Java breaks sent + failures = --num-records: %d + %d = %d, not %d", p.sent, p.failed, p.sent+p.failed, n)
	}
	if p.held != p.sent || int64(p.distinct) != p.held {
		t.Logf("Java: the topic holds %d records (%d distinct values; %d values more than once, first %v), Java reported %d sent and %d failed",
			p.held, p.distinct, len(p.twice), p.twice[:min(len(p.twice), 5)], p.sent, p.failed)
	}
}

func TestCompatKafkaFaults(t *testing.T) {
	rig := startWANRig(t)
	bins := ourKafkaTools(t)
	producer := bins.producer
	addrs := []string{rig.bootstrap}

	// A monotonic run at --throughput rate, of each tool in its own topic,
	// with the fault applied 2 s into both runs' sending.
	type faultCase struct {
		name  string
		n     int
		rate  int
		props []string
		fault func(t *testing.T)
	}
	pause := func(d time.Duration) func(t *testing.T) {
		return func(t *testing.T) {
			rig.run(t, 30*time.Second, "pause")
			time.Sleep(d)
			rig.run(t, 30*time.Second, "resume")
		}
	}
	kill := func(t *testing.T) {
		rig.run(t, 30*time.Second, "kill")
		time.Sleep(3 * time.Second)
		rig.run(t, 3*time.Minute, "restart", "2")
	}
	toxic := func(kind string, attrs toxiproxy.Attributes, d time.Duration) func(t *testing.T) {
		return func(t *testing.T) {
			name := "fault-" + kind
			for _, stream := range []string{"upstream", "downstream"} {
				if _, err := rig.proxy.AddToxic(name+"-"+stream, kind, stream, 1, attrs); err != nil {
					t.Fatalf("toxic %s: %v", kind, err)
				}
			}
			time.Sleep(d)
			for _, stream := range []string{"upstream", "downstream"} {
				if err := rig.proxy.RemoveToxic(name + "-" + stream); err != nil {
					t.Errorf("remove toxic %s: %v", kind, err)
				}
			}
		}
	}
	short := []string{"request.timeout.ms=3000", "delivery.timeout.ms=8000"}
	for _, tc := range []faultCase{
		{name: "broker killed and restarted", n: 16000, rate: 2000, fault: kill},
		{name: "broker killed and restarted short timeouts", n: 16000, rate: 2000, props: short, fault: kill},
		{name: "broker paused 20 s", n: 12000, rate: 2000, fault: pause(20 * time.Second)},
		{name: "reset_peer", n: 12000, rate: 2000, fault: toxic("reset_peer", toxiproxy.Attributes{"timeout": 0}, time.Second)},
		{name: "timeout toxic 10 s", n: 12000, rate: 2000, fault: toxic("timeout", toxiproxy.Attributes{"timeout": 10000}, 10*time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			javaTopic := createTopic(t, addrs, "wanfault-java", 3, 1, nil)
			ourTopic := createTopic(t, addrs, "wanfault", 3, 1, nil)
			args := func(topic string) []string {
				a := []string{"--topic", topic, "--num-records", strconv.Itoa(tc.n), "--payload-monotonic",
					"--throughput", strconv.Itoa(tc.rate), "--bootstrap-server", rig.bootstrap}
				if len(tc.props) > 0 {
					a = append(append(a, "--command-property"), tc.props...)
				}
				return a
			}
			limit := runLimit(tc.n, tc.rate, tc.props)
			// The JVM takes a few seconds to its first send; ours starts
			// when Java's first record is in, so the fault comes at the
			// same moment of both runs.
			j := rig.startJava(t, "producer", args(javaTopic))
			javaFirst := waitFirstRecord(t, addrs, javaTopic, wanRunSlack)
			o := startProducer(t, producer, args(ourTopic))
			time.Sleep(2 * time.Second)
			faultStart := time.Now()
			tc.fault(t)
			t.Logf("fault from %v to %v into both runs' sending (Java's first record %v after its start)",
				faultStart.Sub(o.start).Round(time.Millisecond), time.Since(o.start).Round(time.Millisecond),
				javaFirst.Sub(j.start).Round(time.Millisecond))
			orc, oursExited := o.end(t, limit)
			jrc, javaExited := j.end(t, limit)
			for _, e := range []struct {
				tool   string
				exited bool
				r      *wanRun
			}{{"ours", oursExited, o}, {"Java", javaExited, j}} {
				if !e.exited {
					t.Errorf("%s: no exit within %v (sending %v + delivery.timeout.ms + max.block.ms + %v)\nstdout:\n%s\nstderr:\n%s",
						e.tool, limit, time.Duration(tc.n)*time.Second/time.Duration(tc.rate), wanRunSlack, e.r.stdout.String(), e.r.stderr.String())
				}
			}
			ours := checkExact(t, addrs, ourTopic, o, orc, int64(tc.n))
			java := tallyProducer(t, addrs, javaTopic, j, jrc, int64(tc.n))
			checkJavaProducer(t, java, ours, j, int64(tc.n))
			t.Logf("compare | %s | limit %v | ours | %v", tc.name, limit, ours)
			t.Logf("compare | %s | limit %v | Java | %v", tc.name, limit, java)
		})
	}

	// The consumer on a dying broker: both tools consume a topic a
	// producer feeds at 2000 records/s, and 6 s in the broker is paused
	// for 20 s or killed. No record arrives after that, so each ends its
	// loop --timeout after the last record, prints the timeout warning and
	// its summary line, and closes: the same exit code and line shapes as
	// Java's, and ours exiting no later than Java. The kill comes last: the
	// broker is not started again (the rig is stopped at once, so the
	// topic's deletion fails fast instead of waiting on a dead broker).
	//
	// Two cases come first: the consumers' connections reset for 1 s
	// (both reconnect and read on: they reach --num-records, half of what
	// the feed sends, with no warning), and the network stalled 10 s (a
	// timeout toxic: no record for longer than --timeout, so both warn).
	for _, v := range []struct {
		name   string
		fault  func(t *testing.T)
		readOn bool // the consumers get their --num-records, half the feed
	}{
		{name: "consumer with connections reset", fault: toxic("reset_peer", toxiproxy.Attributes{"timeout": 0}, time.Second), readOn: true},
		{name: "consumer on a stalled network", fault: toxic("timeout", toxiproxy.Attributes{"timeout": 10000}, 10*time.Second)},
		{name: "consumer on a paused broker", fault: pause(20 * time.Second)},
		{name: "consumer on a killed broker", fault: func(t *testing.T) {
			rig.run(t, 30*time.Second, "kill")
			t.Cleanup(func() { rig.run(t, 2*time.Minute, "stop") })
		}},
	} {
		t.Run(v.name, func(t *testing.T) {
			topic := createTopic(t, addrs, "wanconsume", 3, 1, nil)
			const n, rate, timeoutMs = 40000, 2000, 5000
			feedProps := []string{"request.timeout.ms=3000", "delivery.timeout.ms=8000"}
			feed := startProducer(t, producer, append([]string{"--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", "100",
				"--throughput", strconv.Itoa(rate), "--bootstrap-server", rig.bootstrap, "--command-property"}, feedProps...))
			waitFirstRecord(t, addrs, topic, 30*time.Second)
			want := n
			if v.readOn {
				want = n / 2
			}
			args := []string{"--bootstrap-server", rig.bootstrap, "--topic", topic, "--num-records", strconv.Itoa(want), "--timeout", strconv.Itoa(timeoutMs)}
			j := rig.startJava(t, "consumer", args)
			o := startProducer(t, bins.consumer, args)
			time.Sleep(6 * time.Second)
			faultStart := time.Now()
			v.fault(t)
			t.Logf("fault from %v to %v into the runs", faultStart.Sub(j.start).Round(time.Millisecond), time.Since(j.start).Round(time.Millisecond))
			const limit = 2 * time.Minute
			jrc, javaExited := j.end(t, limit)
			orc, oursExited := o.end(t, limit)
			// The feed is only the consumers' source, stopped here: on a
			// broker killed for good a producer need not end (Java blocks
			// each further send for max.block.ms).
			if _, exited := feed.end(t, time.Since(feed.start)); !exited {
				t.Logf("the feeding producer still ran %v after the fault began; stopped", time.Since(faultStart).Round(time.Millisecond))
			}
			if !javaExited || !oursExited {
				t.Fatalf("no exit within %v: Java %v, ours %v\nJava stdout:\n%s\nour stdout:\n%s", limit, javaExited, oursExited, j.stdout.String(), o.stdout.String())
			}
			jo, oo := compareKafkaRuns(t, kafkaCase{name: v.name, rc: jrc}, j.toolRun(jrc), o.toolRun(orc))
			warning := fmt.Sprintf("WARNING: Exiting before consuming the expected number of records: timeout (%d ms) exceeded.", timeoutMs)
			for _, side := range []struct {
				tool string
				r    *wanRun
				rc   int
				out  kafkaOutput
			}{{"Java", j, jrc, jo}, {"ours", o, orc, oo}} {
				warned := slices.ContainsFunc(side.out.raw, func(l string) bool { return strings.HasPrefix(l, warning) })
				f, ok := consumerSummary(side.out.raw)
				if !ok || warned == v.readOn {
					t.Errorf("%s: summary line %v, timeout warning %v; want the summary, and the warning %v\nstdout:\n%s", side.tool, ok, warned, !v.readOn, side.r.stdout.String())
					continue
				}
				if f[2] == "0" {
					t.Errorf("%s consumed no record before the fault: the case tests nothing", side.tool)
				}
				// A poll's records are all counted, so a run may end a
				// little past --num-records, never short of it.
				if consumed, err := strconv.Atoi(f[2]); v.readOn && (err != nil || consumed < want) {
					t.Errorf("%s consumed %s records after the reset, want at least --num-records %d", side.tool, f[2], want)
				}
				// The summary's end.time is when the loop ended; the rest
				// to the exit is the close.
				exit := side.r.start.Add(side.r.elapsed)
				closing := "?"
				// Java's "yyyy-MM-dd HH:mm:ss:SSS": Go parses the
				// milliseconds after a dot.
				date := strings.Split(lastLine(side.out.raw), ", ")[1]
				if i := strings.LastIndexByte(date, ':'); i > 0 {
					date = date[:i] + "." + date[i+1:]
				}
				if loopEnd, err := time.ParseInLocation("2006-01-02 15:04:05.000", date, time.Local); err == nil {
					closing = fmt.Sprintf("%.1f s", exit.Sub(loopEnd).Seconds())
				}
				t.Logf("compare | %s | %s | rc %d, exit after %.1f s (%.1f s after the fault began; close %s), consumed %s, last line %q",
					v.name, side.tool, side.rc, side.r.elapsed.Seconds(), exit.Sub(faultStart).Seconds(), closing, f[2], lastLine(side.out.raw))
			}
			// Both loops end at the same moment, --timeout after the
			// last record; 5 s against noise.
			if oEnd, jEnd := o.start.Add(o.elapsed), j.start.Add(j.elapsed); oEnd.After(jEnd.Add(5 * time.Second)) {
				t.Errorf("ours ended %v after Java", oEnd.Sub(jEnd).Round(time.Millisecond))
			}
		})
	}
}

// countingProxy forwards connections to a Kafka broker and counts the
// produce requests sent and not yet answered on each connection.
type countingProxy struct {
	addr                 string
	produce, maxInFlight atomic.Int64
}

func startCountingProxy(t *testing.T, upstream string) *countingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{addr: l.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			st := &connState{pending: map[int32]bool{}}
			wg.Add(2)
			go func() { defer wg.Done(); p.requests(c, u, st) }()
			go func() { defer wg.Done(); p.answers(u, c, st) }()
		}
	}()
	return p
}

// countProduceRequests puts a counting proxy between Toxiproxy and the
// broker, so every connection of a client is counted, until the test ends.
func (w *wanRig) countProduceRequests(t *testing.T) *countingProxy {
	t.Helper()
	upstream := w.proxy.Upstream
	counter := startCountingProxy(t, upstream)
	w.proxy.Upstream = counter.addr
	if err := w.proxy.Save(); err != nil {
		t.Fatalf("proxy upstream -> %s: %v", counter.addr, err)
	}
	t.Cleanup(func() {
		w.proxy.Upstream = upstream
		if err := w.proxy.Save(); err != nil {
			t.Errorf("proxy upstream back to %s: %v", upstream, err)
		}
	})
	return counter
}

// connState is one connection's produce requests not yet answered, by
// correlation id.
type connState struct {
	mu       sync.Mutex
	pending  map[int32]bool
	inFlight int64
}

// requests copies the client's requests to the broker and counts the
// produce requests (API key 0) among them.
func (p *countingProxy) requests(client, broker net.Conn, st *connState) {
	defer broker.Close()
	r := bufio.NewReader(client)
	hdr := make([]byte, 12) // size, API key, version, correlation id
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(hdr[:4]))
		key := int16(binary.BigEndian.Uint16(hdr[4:6]))
		corr := int32(binary.BigEndian.Uint32(hdr[8:12]))
		if size < 8 {
			return
		}
		body := make([]byte, size-8)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if key == 0 {
			p.produce.Add(1)
			st.mu.Lock()
			st.pending[corr] = true
			st.inFlight++
			if st.inFlight > p.maxInFlight.Load() {
				p.maxInFlight.Store(st.inFlight)
			}
			st.mu.Unlock()
		}
		if _, err := broker.Write(append(hdr[:12:12], body...)); err != nil {
			return
		}
	}
}

// answers copies the broker's answers to the client; an answer to a
// produce request ends it being in flight.
func (p *countingProxy) answers(broker, client net.Conn, st *connState) {
	defer client.Close()
	r := bufio.NewReader(broker)
	hdr := make([]byte, 8) // size, correlation id
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(hdr[:4]))
		corr := int32(binary.BigEndian.Uint32(hdr[4:8]))
		if size < 4 {
			return
		}
		body := make([]byte, size-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		st.mu.Lock()
		if st.pending[corr] {
			delete(st.pending, corr)
			st.inFlight--
		}
		st.mu.Unlock()
		if _, err := client.Write(append(hdr[:8:8], body...)); err != nil {
			return
		}
	}
}
