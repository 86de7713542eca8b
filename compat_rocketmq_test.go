package perfclones_test

// End-to-end tests of rocketmq-benchmark against Apache RocketMQ 5.3.3's own
// name server and broker (scripts/lib/rocketmq.sh: inside a network
// namespace, at 10.213.0.2). The original benchmark classes are not on
// Maven Central, so the reference is what the real 5.3.3 and 4.9.8 tools
// print (issue text and spec): the seed's producer and consumer lines
// (seed 001) bounded with -q or stopped with SIGTERM, every line matched
// against its exact shape, the exit codes and streams; the error cases in
// both emulated releases; exact accounting against the broker's max offsets
// read with RocketMQ's admin tool; the result file; and faults (no name
// server; the fault group's broker stopped mid-run).
//
// Exact counts are checked on topics of the tests' own (made with the
// admin tool), since other runs write to topic-01 too; the tests run one
// after the other, the broker being shared.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/result"
	"github.com/perfclones/perfclones/internal/result/resulttest"
	"github.com/perfclones/perfclones/internal/testenv"
)

// The shapes of the original's lines. f73 is Java's %7.3f: at least seven
// columns, right-aligned, NaN included.
const (
	rmqTime5 = `Current Time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}`
	rmqF73   = `( *\d+\.\d{3}| {4}NaN)`
)

var (
	rmqProducerLine5 = regexp.MustCompile(`^` + rmqTime5 + ` \| Send TPS: \d+ \| Max RT\(ms\): \d+ \| Average RT\(ms\): ` + rmqF73 +
		` \| Send Failed: \d+ \| Response Failed: \d+$`)
	rmqProducerLine49 = regexp.MustCompile(`^Current Time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} Send TPS: \d+ Max RT\(ms\): \d+ ` +
		`Average RT\(ms\): ` + rmqF73 + ` Send Failed: \d+ Response Failed: \d+$`)
	rmqComplete5 = regexp.MustCompile(`^\[Complete\] Send Total: (\d+) \| Send TPS: \d+ \| Max RT\(ms\): \d+ \| Average RT\(ms\): ` +
		rmqF73 + ` \| Send Failed: (\d+) \| Response Failed: (\d+)$`)
	rmqComplete49 = regexp.MustCompile(`^\[Complete\] Send Total: (\d+) Send TPS: \d+ Max RT\(ms\): \d+ Average RT\(ms\): ` +
		rmqF73 + ` Send Failed: (\d+) Response Failed: (\d+)$`)
	rmqCompleteShort = regexp.MustCompile(`^\[Complete\] Send Total: (\d+) Send Failed: (\d+) Response Failed: (\d+)$`)
	rmqConsumerLine5 = regexp.MustCompile(`^` + rmqTime5 + ` \| Consume TPS: \d+ \| AVG\(B2C\) RT\(ms\): ` + rmqF73 +
		` \| AVG\(S2C\) RT\(ms\): ` + rmqF73 + ` \| MAX\(B2C\) RT\(ms\): -?\d+ \| MAX\(S2C\) RT\(ms\): -?\d+ \| Consume Fail: \d+$`)
	rmqConsumerLine49 = regexp.MustCompile(`^Current Time: \d{13} TPS: \d+ FAIL: \d+ AVG\(B2C\) RT\(ms\): ` + rmqF73 +
		` AVG\(S2C\) RT\(ms\): ` + rmqF73 + ` MAX\(B2C\) RT\(ms\): -?\d+ MAX\(S2C\) RT\(ms\): -?\d+$`)
)

// rmqF73OK checks the width rule the regexps cannot: a %7.3f field is
// exactly seven columns unless its digits need more (then no blanks).
func rmqF73OK(line string) bool {
	for _, m := range regexp.MustCompile(`RT\(ms\): ( *[0-9.]+| *NaN)( |$)`).FindAllStringSubmatch(line, -1) {
		f := m[1]
		if !strings.Contains(f, ".") && !strings.Contains(f, "NaN") {
			continue // a %d field
		}
		if len(f) < 7 || (len(f) > 7 && strings.HasPrefix(f, " ")) {
			return false
		}
	}
	return true
}

type rmqTools struct {
	env testenv.RocketMQEnv
	bin string
}

func newRMQ(t *testing.T) *rmqTools {
	t.Helper()
	return &rmqTools{env: testenv.RocketMQ(t), bin: ourTool(t, "rocketmq-benchmark")}
}

// rmqRun is the outcome of one run.
type rmqRun struct {
	stdout, stderr string
	rc             int
	elapsed        time.Duration
	result         *result.Run // when the run wrote a result file
	resultJSON     []byte
}

// run runs `rocketmq-benchmark MODE ARGS...` with the release, at most
// limit; with stopAfter > 0 it sends SIGTERM after that long, as a user's
// kill (or shutdown.sh) does. The run writes a result file.
func (r *rmqTools) run(t *testing.T, release string, stopAfter, limit time.Duration, mode string, args ...string) rmqRun {
	t.Helper()
	file := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, append([]string{mode}, args...)...)
	cmd.Env = append(os.Environ(), "PERFCLONES_RESULT="+file, "PERFCLONES_ROCKETMQ_VERSION="+release)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if stopAfter > 0 {
		timer := time.AfterFunc(stopAfter, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	out := rmqRun{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not end within %s\nstdout:\n%s\nstderr:\n%s", mode, args, limit, out.stdout, out.stderr)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		out.rc = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err == nil {
		run, err := resulttest.Validate(b)
		if err != nil {
			t.Fatalf("result file: %v\n%s", err, b)
		}
		out.result, out.resultJSON = run, b
	}
	return out
}

// maxOffsets is the sum of the topic's queues' max offsets, from RocketMQ's
// admin tool (mqadmin topicStatus).
func (r *rmqTools) maxOffsets(t *testing.T, namesrv, topic string) int64 {
	t.Helper()
	out, err := exec.Command(r.env.NodeScript, "admin", "topicStatus", "-n", namesrv, "-t", topic).CombinedOutput()
	if err != nil {
		t.Fatalf("mqadmin topicStatus: %v\n%s", err, out)
	}
	var sum int64
	queues := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			t.Fatalf("mqadmin topicStatus: bad max offset in %q", sc.Text())
		}
		sum += n
		queues++
	}
	if queues == 0 {
		t.Fatalf("mqadmin topicStatus lists no queue:\n%s", out)
	}
	return sum
}

// createTopic makes a topic with RocketMQ's admin tool.
func (r *rmqTools) createTopic(t *testing.T, namesrv, cluster, topic, queues string) {
	t.Helper()
	out, err := exec.Command(r.env.NodeScript, "admin", "updateTopic", "-n", namesrv, "-c", cluster, "-t", topic, "-r", queues, "-w", queues).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "success") {
		t.Fatalf("mqadmin updateTopic %s: %v\n%s", topic, err, out)
	}
}

func rmqLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func producerHeader5(topic string, threads, size int, quantity int64, ri int) []string {
	return []string{
		fmt.Sprintf("topic: %s, threadCount: %d, messageSize: %d, keyEnable: false, propertySize: 0, tagCount: 0, traceEnable: false, "+
			"aclEnable: false, messageQuantity: %d, delayEnable: false, delayLevel: 1, asyncEnable: false", topic, threads, size, quantity),
		fmt.Sprintf(" compressEnable: false, reportInterval: %d", ri),
	}
}

func producerHeader49(topic string, threads, size int, quantity int64) []string {
	return []string{
		fmt.Sprintf("topic: %s threadCount: %d messageSize: %d keyEnable: false propertySize: 0 tagCount: 0 traceEnable: false "+
			"aclEnable: false messageQuantity: %d", topic, threads, size, quantity),
		"delayEnable: false delayLevel: 1",
		"asyncEnable: false",
	}
}

// checkProducerOutput checks a producer's stdout line by line: the header
// exactly, then periodic lines, then (with -q) one summary line, in either
// form. It returns Send Total and Send Failed of the summary.
func checkProducerOutput(t *testing.T, release string, stdout string, header []string, wantComplete bool) (total, failed int64, periodic int) {
	t.Helper()
	lines := rmqLines(stdout)
	if len(lines) < len(header) {
		t.Fatalf("stdout has %d lines, want the %d-line header first:\n%s", len(lines), len(header), stdout)
	}
	for i, h := range header {
		if lines[i] != h {
			t.Errorf("header line %d:\n%q\nwant\n%q", i+1, lines[i], h)
		}
	}
	line, complete := rmqProducerLine5, rmqComplete5
	if release == "4.9" {
		line, complete = rmqProducerLine49, rmqComplete49
	}
	body := lines[len(header):]
	if wantComplete {
		if len(body) == 0 {
			t.Fatalf("no [Complete] line:\n%s", stdout)
		}
		last := body[len(body)-1]
		body = body[:len(body)-1]
		m := complete.FindStringSubmatch(last)
		if m == nil {
			m = rmqCompleteShort.FindStringSubmatch(last)
		}
		if m == nil || !rmqF73OK(last) {
			t.Fatalf("last line is not a %s [Complete] line:\n%s", release, last)
		}
		total, _ = strconv.ParseInt(m[1], 10, 64)
		failed, _ = strconv.ParseInt(m[len(m)-2], 10, 64)
	}
	for _, l := range body {
		if !line.MatchString(l) || !rmqF73OK(l) {
			t.Errorf("not a %s periodic producer line:\n%q", release, l)
		}
	}
	return total, failed, len(body)
}

// TestCompatRocketMQProducerSeedQuantity runs seed 001's producer line
// (-s 3800 -w 256 against the harness's name server) bounded with -q, in
// both releases: the exact header, periodic lines of the right shape after
// the 10-snapshot gate (-ri 1000 in 5.x), the summary last, exit 0, nothing
// on stderr, and the broker's max offsets grown by exactly Send Total minus
// Send Failed, which the result file carries too.
//
// Other runs (scripts/run-all) also write to topic-01, so the counts are
// checked on a topic of this test's own, made with the admin tool with
// topic-01's queues.
func TestCompatRocketMQProducerSeedQuantity(t *testing.T) {
	r := newRMQ(t)
	topic := fmt.Sprintf("rmq-seed-%d", time.Now().UnixNano())
	r.createTopic(t, r.env.Namesrv, r.env.Cluster, topic, r.env.Queues)
	for _, tc := range []struct {
		release string
		q       int64
		extra   []string
	}{
		{"5.3", 70000, []string{"-ri", "1000"}},
		{"4.9", 6000, nil},
	} {
		t.Run(tc.release, func(t *testing.T) {
			before := r.maxOffsets(t, r.env.Namesrv, topic)
			args := append([]string{"-n", r.env.Namesrv, "-t", topic, "-s", "3800", "-w", "256", "-q", strconv.FormatInt(tc.q, 10)}, tc.extra...)
			run := r.run(t, tc.release, 0, 5*time.Minute, "producer", args...)
			if run.rc != 0 || run.stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", run.rc, run.stderr)
			}
			header := producerHeader5(topic, 256, 3800, tc.q, 1000)
			if tc.release == "4.9" {
				header = producerHeader49(topic, 256, 3800, tc.q)
			}
			total, failed, periodic := checkProducerOutput(t, tc.release, run.stdout, header, true)
			t.Logf("%s: %d sent in %s, %d periodic lines", tc.release, total, run.elapsed.Round(time.Millisecond), periodic)
			if total != tc.q {
				t.Errorf("Send Total %d, want -q %d", total, tc.q)
			}
			if tc.release == "5.3" && run.elapsed > 12*time.Second && periodic == 0 {
				t.Errorf("a %s run with -ri 1000 printed no periodic line", run.elapsed)
			}
			after := r.maxOffsets(t, r.env.Namesrv, topic)
			if after-before != total-failed {
				t.Errorf("broker max offsets grew by %d, want Send Total - Send Failed = %d", after-before, total-failed)
			}
			checkProducerResult(t, run, after-before)
		})
	}
}

// checkProducerResult checks the result file against the broker's count.
func checkProducerResult(t *testing.T, run rmqRun, stored int64) {
	t.Helper()
	if run.result == nil {
		t.Fatal("no result file")
	}
	if len(run.result.Tests) != 1 {
		t.Fatalf("result file has %d tests", len(run.result.Tests))
	}
	test := run.result.Tests[0]
	if test.Counts.Operations != stored {
		t.Errorf("result file: %d operations, broker stored %d", test.Counts.Operations, stored)
	}
	lat := test.Latency["send"]
	if lat == nil {
		t.Fatalf("result file has no send latency:\n%s", run.resultJSON)
	}
	h, err := resulttest.Histogram(lat)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != test.Counts.Operations || lat.Count != test.Counts.Operations {
		t.Errorf("send histogram holds %d (count %d), operations %d", h.TotalCount(), lat.Count, test.Counts.Operations)
	}
}

// TestCompatRocketMQProducerSeedSIGTERM runs the seed's producer line as
// users do, without -q, and stops it with SIGTERM as shutdown.sh does: exit
// 143, the header and periodic lines only (the original has no shutdown
// hook), and a result file whose count the broker's offsets confirm.
func TestCompatRocketMQProducerSeedSIGTERM(t *testing.T) {
	r := newRMQ(t)
	before := r.maxOffsets(t, r.env.Namesrv, r.env.Topic)
	run := r.run(t, "5.3", 13*time.Second, 2*time.Minute, "producer", "-n", r.env.Namesrv, "-t", r.env.Topic, "-s", "3800", "-w", "256")
	if run.rc != 143 {
		t.Fatalf("exit %d, want 143; stderr:\n%s", run.rc, run.stderr)
	}
	if run.stderr != "" {
		t.Errorf("stderr:\n%s", run.stderr)
	}
	_, _, periodic := checkProducerOutput(t, "5.3", run.stdout, producerHeader5(r.env.Topic, 256, 3800, 0, 10000), false)
	if periodic != 1 {
		t.Errorf("%d periodic lines in a 13 s run with the default 10 s interval, want 1:\n%s", periodic, run.stdout)
	}
	if run.result == nil || run.result.Ending != "interrupted" || run.result.ExitCode != 143 {
		t.Fatalf("result file: %+v", run.result)
	}
	// Sends in flight at the signal finish and are counted; other runs may
	// write to topic-01 meanwhile, so the broker holds at least the count.
	stored := r.maxOffsets(t, r.env.Namesrv, r.env.Topic) - before
	counted := run.result.Tests[0].Counts.Operations
	if counted == 0 || stored < counted {
		t.Errorf("broker stored %d, the result file counts %d", stored, counted)
	}
}

// TestCompatRocketMQConsumerSeed runs the seed's consumer line (-t topic-01
// -g group-01) while a producer writes, and a consumer of a fresh topic
// for exact accounting: header, "Consumer Started.", periodic lines of the
// release's shape, exit 143 on SIGTERM, and a consumer count equal to what
// the broker stored (the consumer starts at the empty topic's end and
// fails nothing, so it must deliver every message once).
func TestCompatRocketMQConsumerSeed(t *testing.T) {
	r := newRMQ(t)
	topic := fmt.Sprintf("rmq-compat-%d", time.Now().UnixNano())
	r.createTopic(t, r.env.Namesrv, r.env.Cluster, topic, "4")
	for _, tc := range []struct {
		release string
		topic   string
		group   string
		ri      []string
		line    *regexp.Regexp
		header  string
	}{
		{"5.3", r.env.Topic, r.env.Group, []string{"-ri", "1000"}, rmqConsumerLine5,
			"topic: topic-01, threadCount 20, group: group-01, suffix: false, filterType: null, expression: null, msgTraceEnable: false, aclEnable: false, reportInterval: 1000"},
		{"4.9", topic, "rmq-compat-group", nil, rmqConsumerLine49,
			"topic: " + topic + ", threadCount 20, group: rmq-compat-group, suffix: false, filterType: null, expression: null, msgTraceEnable: false, aclEnable: false"},
	} {
		t.Run(tc.release, func(t *testing.T) {
			const sent = 5000
			before := r.maxOffsets(t, r.env.Namesrv, tc.topic)
			done := make(chan rmqRun, 1)
			go func() {
				done <- r.run(t, tc.release, 24*time.Second, 2*time.Minute, "consumer",
					append([]string{"-n", r.env.Namesrv, "-t", tc.topic, "-g", tc.group}, tc.ri...)...)
			}()
			time.Sleep(6 * time.Second) // start and rebalance
			prod := r.run(t, "5.3", 0, 2*time.Minute, "producer", "-n", r.env.Namesrv, "-t", tc.topic, "-s", "1024", "-w", "16", "-q", strconv.Itoa(sent))
			if prod.rc != 0 {
				t.Fatalf("producer: exit %d\n%s%s", prod.rc, prod.stdout, prod.stderr)
			}
			run := <-done
			if run.rc != 143 || run.stderr != "" {
				t.Fatalf("consumer: exit %d, want 143; stderr:\n%s", run.rc, run.stderr)
			}
			lines := rmqLines(run.stdout)
			if len(lines) < 3 || lines[0] != tc.header || lines[1] != "Consumer Started." {
				t.Fatalf("consumer stdout:\n%s\nwant first\n%s\nConsumer Started.", run.stdout, tc.header)
			}
			for _, l := range lines[2:] {
				if !tc.line.MatchString(l) || !rmqF73OK(l) {
					t.Errorf("not a %s consumer line:\n%q", tc.release, l)
				}
			}
			stored := r.maxOffsets(t, r.env.Namesrv, tc.topic) - before
			// topic-01 is shared with other runs: it holds at least ours.
			if (tc.topic == topic && stored != sent) || stored < sent {
				t.Errorf("broker stored %d, producer sent %d", stored, sent)
			}
			if run.result == nil || len(run.result.Tests) != 1 {
				t.Fatalf("consumer result file: %+v", run.result)
			}
			got := run.result.Tests[0].Counts.Operations
			if tc.topic == topic && got != stored {
				t.Errorf("consumer counted %d, broker delivered %d", got, stored)
			}
			if tc.topic != topic && got == 0 {
				t.Errorf("the seed's consumer counted nothing of %d new messages", stored)
			}
			if h := run.result.Tests[0].Latency["store_to_consume"]; h == nil || h.Count != got {
				t.Errorf("store_to_consume histogram: %+v, want %d values", h, got)
			}
		})
	}
}

// TestCompatRocketMQErrors: the help and parse errors in both releases
// (5.x: the exception's message on stderr; 4.9: none), a bad number's
// uncaught exception, the release selector, and an unreachable name server
// for the producer (exit 0, the NaN summary, one stderr line instead of a
// stack trace per thread) and the consumer (exit 1, the header only).
func TestCompatRocketMQErrors(t *testing.T) {
	bin := ourTool(t, "rocketmq-benchmark")
	r := &rmqTools{bin: bin}
	usage5 := "usage: benchmarkProducer [-a <arg>] [-ak <arg>] [-c <arg>] [-ch <arg>] [-cl <arg>] [-ct <arg>] [-d <arg>] [-e\n"
	usage49 := "usage: benchmarkProducer [-a <arg>] [-ak <arg>] [-d <arg>] [-e <arg>] [-h] [-k <arg>] [-l <arg>] [-m <arg>]\n"
	for _, tc := range []struct {
		release string
		args    []string
		rc      int
		stdout  string // prefix
		stderr  string
	}{
		{"5.3", []string{"producer", "-h"}, 0, usage5, ""},
		{"4.9", []string{"producer", "-h"}, 0, usage49, ""},
		{"5.3", []string{"producer", "-x"}, 1, usage5, "Unrecognized option: -x\n"},
		{"4.9", []string{"producer", "-x"}, 1, usage49, ""},
		{"5.3", []string{"producer", "-t"}, 1, usage5, "Missing argument for option: t\n"},
		{"4.9", []string{"producer", "-t"}, 1, usage49, ""},
		{"5.3", []string{"producer", "--xyz=1"}, 1, usage5, "Unrecognized option: --xyz=1\n"},
		{"5.3", []string{"producer", "-k", "-q", "1"}, 1, usage5, "Missing argument for option: k\n"},
		{"5.3", []string{"consumer", "-x"}, 1, "usage: benchmarkConsumer [-a <arg>]", "Unrecognized option: -x\n"},
		// 4.9 has no -ri: PosixParser bursts it into -r "i", the fail rate.
		{"4.9", []string{"consumer", "-ri", "1000"}, 1, "", "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"i\"\n"},
		{"4.9", []string{"producer", "-ri", "1000"}, 1, usage49, ""},
		{"5.3", []string{"producer", "-s", "abc"}, 1, "", "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"abc\"\n"},
		{"4.9", []string{"producer", "-w", "x1"}, 1, "", "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"x1\"\n"},
		{"3.0", []string{"producer", "-h"}, 2, "", "perfclones: PERFCLONES_ROCKETMQ_VERSION=3.0 is not a release this tool emulates (known: 5.3, 4.9)\n"},
	} {
		run := r.run(t, tc.release, 0, 30*time.Second, tc.args[0], tc.args[1:]...)
		if run.rc != tc.rc || !strings.HasPrefix(run.stdout, tc.stdout) || (tc.stdout == "" && run.stdout != "") || run.stderr != tc.stderr {
			t.Errorf("%s %q: exit %d, stdout:\n%s\nstderr:\n%q\nwant exit %d, stdout starting %q, stderr %q",
				tc.release, tc.args, run.rc, run.stdout, run.stderr, tc.rc, tc.stdout, tc.stderr)
		}
	}

	// The unreachable name server of the issue: -n 127.0.0.1:1 -q 100.
	for _, release := range []string{"5.3", "4.9"} {
		run := r.run(t, release, 0, time.Minute, "producer", "-n", "127.0.0.1:1", "-q", "100")
		header := producerHeader5("BenchmarkTest", 64, 128, 100, 10000)
		want := "[Complete] Send Total: 0 | Send TPS: 0 | Max RT(ms): 0 | Average RT(ms):     NaN | Send Failed: 0 | Response Failed: 0"
		if release == "4.9" {
			header = producerHeader49("BenchmarkTest", 64, 128, 100)
			want = "[Complete] Send Total: 0 Send TPS: 0 Max RT(ms): 0 Average RT(ms):     NaN Send Failed: 0 Response Failed: 0"
		}
		wantOut := strings.Join(append(header, want), "\n") + "\n"
		if run.rc != 0 || run.stdout != wantOut || strings.Count(run.stderr, "\n") != 1 || !strings.Contains(run.stderr, "127.0.0.1:1") {
			t.Errorf("%s producer, no name server: exit %d after %s\nstdout:\n%s\nstderr:\n%s\nwant exit 0, stdout:\n%s",
				release, run.rc, run.elapsed, run.stdout, run.stderr, wantOut)
		}
		if run.elapsed > 20*time.Second {
			t.Errorf("%s producer took %s to give up", release, run.elapsed)
		}
		c := r.run(t, release, 0, time.Minute, "consumer", "-n", "127.0.0.1:1")
		wantC := "topic: BenchmarkTest, threadCount 20, group: benchmark_consumer, suffix: false, filterType: null, expression: null, msgTraceEnable: false, aclEnable: false"
		if release == "5.3" {
			wantC += ", reportInterval: 10000"
		}
		if c.rc != 1 || c.stdout != wantC+"\n" || strings.Count(c.stderr, "\n") != 1 || c.elapsed > 20*time.Second {
			t.Errorf("%s consumer, no name server: exit %d after %s\nstdout:\n%s\nstderr:\n%s", release, c.rc, c.elapsed, c.stdout, c.stderr)
		}
	}
}

// TestCompatRocketMQBrokerStoppedMidRun stops the fault group's broker four
// seconds into a -q run: the failures are counted, the run still ends with
// its summary (Send Total = -q, Send Failed = the result file's count) and
// exit 0, and it does not hang. The fault group is this test's alone.
func TestCompatRocketMQBrokerStoppedMidRun(t *testing.T) {
	r := newRMQ(t)
	node := func(args ...string) {
		out, err := exec.Command(r.env.NodeScript, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", r.env.NodeScript, args, err, out)
		}
	}
	node("start", "fault")
	t.Cleanup(func() { _ = exec.Command(r.env.NodeScript, "stop", "fault").Run() })
	for _, release := range []string{"5.3", "4.9"} {
		t.Run(release, func(t *testing.T) {
			node("start", "fault") // a no-op but for the second release: the broker starts again
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				time.Sleep(4 * time.Second)
				_ = exec.Command(r.env.NodeScript, "stop-broker", "fault").Run()
			}()
			const q = 40000
			run := r.run(t, release, 0, 3*time.Minute, "producer", "-n", r.env.FaultNamesrv, "-t", r.env.Topic, "-s", "1024", "-w", "8", "-q", strconv.Itoa(q))
			<-stopped
			if run.rc != 0 {
				t.Fatalf("exit %d; stderr:\n%s", run.rc, run.stderr)
			}
			header := producerHeader5(r.env.Topic, 8, 1024, q, 10000)
			if release == "4.9" {
				header = producerHeader49(r.env.Topic, 8, 1024, q)
			}
			total, failed, _ := checkProducerOutput(t, release, run.stdout, header, true)
			if total != q || failed == 0 {
				t.Errorf("Send Total %d (want %d), Send Failed %d (want > 0)", total, q, failed)
			}
			if run.result == nil || run.result.Tests[0].Counts.Errors["send_failed"] != failed ||
				run.result.Tests[0].Counts.Operations != total-failed {
				t.Errorf("result file counts %+v, the summary %d sent, %d failed", run.result.Tests[0].Counts, total, failed)
			}
			t.Logf("%s: ended %s after the start, %d of %d failed", release, run.elapsed.Round(time.Millisecond), failed, total)
		})
	}
}

var (
	rmqTxLine5 = regexp.MustCompile(`^` + rmqTime5 + ` \| Send TPS: {1,5}\d+ \| Max RT\(ms\): {1,5}\d+ \| AVG RT\(ms\): ( *\d+\.\d|NaN) \| Send Failed: \d+ \| ` +
		`Check: \d+ \| UnexpectedCheck: \d+ \| DuplicatedCheck: \d+$`)
	rmqTxLine49 = regexp.MustCompile(`^Current Time: \d{13} Send TPS: {1,4}\d+ Max RT\(ms\): {1,4}\d+ AVG RT\(ms\):( *\d+\.\d|NaN) Send Failed: \d+ ` +
		`check: \d+ unexpectedCheck: \d+ duplicatedCheck: \d+ $`)
)

// TestCompatRocketMQTransactionProducer runs tproducer.sh's program for 13 s
// on a topic of its own and stops it with SIGTERM: no start-up line, the
// release's periodic lines, exit 143, and every transaction it counts
// committed into the topic (none is rolled back or left unknown).
func TestCompatRocketMQTransactionProducer(t *testing.T) {
	r := newRMQ(t)
	topic := fmt.Sprintf("rmq-tx-%d", time.Now().UnixNano())
	r.createTopic(t, r.env.Namesrv, r.env.Cluster, topic, "4")
	for _, tc := range []struct {
		release string
		args    []string
		line    *regexp.Regexp
	}{
		{"5.3", []string{"-ri", "1000"}, rmqTxLine5},
		{"4.9", nil, rmqTxLine49},
	} {
		t.Run(tc.release, func(t *testing.T) {
			before := r.maxOffsets(t, r.env.Namesrv, topic)
			run := r.run(t, tc.release, 13*time.Second, time.Minute, "tproducer",
				append([]string{"-n", r.env.Namesrv, "-t", topic, "-w", "8"}, tc.args...)...)
			if run.rc != 143 || run.stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", run.rc, run.stderr)
			}
			lines := rmqLines(run.stdout)
			if len(lines) == 0 {
				t.Fatalf("no periodic line in 13 s")
			}
			for _, l := range lines {
				if !tc.line.MatchString(l) {
					t.Errorf("not a %s transaction line:\n%q", tc.release, l)
				}
			}
			time.Sleep(2 * time.Second) // the last commits are one-way requests
			stored := r.maxOffsets(t, r.env.Namesrv, topic) - before
			if run.result == nil || run.result.Tests[0].Counts.Operations != stored {
				t.Errorf("broker committed %d, result file: %+v", stored, run.result)
			}
		})
	}
}

var (
	rmqBatchLine5 = regexp.MustCompile(`^` + rmqTime5 + ` \| Send TPS: \d+ \| Send MPS: \d+ \| Max RT\(ms\): \d+ \| Average RT\(ms\): ` + rmqF73 +
		` \| Average Message RT\(ms\): ` + rmqF73 + ` \| Send Failed: \d+ \| Send Message Failed: \d+$`)
	rmqBatchLine49 = regexp.MustCompile(`^Current Time: \d{13} Send TPS: \d+ Send MPS: \d+ Max RT\(ms\): \d+ Average RT\(ms\): ` + rmqF73 +
		` Average Message RT\(ms\): ` + rmqF73 + ` Send Failed: \d+ Send Message Failed: \d+$`)
)

// TestCompatRocketMQBatchProducer runs batchproducer.sh's program for 13 s
// on a topic of its own and stops it with SIGTERM: the start-up lines, the
// periodic lines, exit 143, and the messages it counts are the topic's.
func TestCompatRocketMQBatchProducer(t *testing.T) {
	r := newRMQ(t)
	topic := fmt.Sprintf("rmq-batch-%d", time.Now().UnixNano())
	r.createTopic(t, r.env.Namesrv, r.env.Cluster, topic, "4")
	for _, tc := range []struct {
		release string
		args    []string
		header  []string
		line    *regexp.Regexp
	}{
		{"5.3", []string{"-ri", "1000"}, []string{
			"topic: " + topic + ", threadCount: 8, messageSize: 128, batchSize: 16, keyEnable: false, propertySize: 0, tagCount: 0, traceEnable: false, aclEnable: false",
			" compressEnable: false, reportInterval: 1000"}, rmqBatchLine5},
		{"4.9", nil, []string{
			"topic: " + topic + " threadCount: 8 messageSize: 128 batchSize: 16 keyEnable: false propertySize: 0 tagCount: 0 traceEnable: false aclEnable: false"},
			rmqBatchLine49},
	} {
		t.Run(tc.release, func(t *testing.T) {
			before := r.maxOffsets(t, r.env.Namesrv, topic)
			run := r.run(t, tc.release, 13*time.Second, time.Minute, "batchproducer",
				append([]string{"-n", r.env.Namesrv, "-t", topic, "-w", "8"}, tc.args...)...)
			if run.rc != 143 || run.stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", run.rc, run.stderr)
			}
			lines := rmqLines(run.stdout)
			if len(lines) <= len(tc.header) {
				t.Fatalf("stdout:\n%s", run.stdout)
			}
			for i, h := range tc.header {
				if lines[i] != h {
					t.Errorf("header line %d:\n%q\nwant\n%q", i+1, lines[i], h)
				}
			}
			for _, l := range lines[len(tc.header):] {
				if !tc.line.MatchString(l) || !rmqF73OK(l) {
					t.Errorf("not a %s batch line:\n%q", tc.release, l)
				}
			}
			stored := r.maxOffsets(t, r.env.Namesrv, topic) - before
			if run.result == nil || run.result.Tests[0].Counts.Operations != stored {
				t.Errorf("broker stored %d, result file: %+v", stored, run.result)
			}
		})
	}
}

// TestCompatRocketMQAcl runs the producer against the acl group's broker,
// which authenticates every request: with -a true and the default keys the
// sends are stored (the broker's offsets grow by the count); without -a, or
// with a wrong -sk, the broker refuses each send (Response Failed), and a
// -q run still ends with its summary.
func TestCompatRocketMQAcl(t *testing.T) {
	r := newRMQ(t)
	if out, err := exec.Command(r.env.NodeScript, "start", "acl").CombinedOutput(); err != nil {
		t.Fatalf("%s start acl: %v\n%s", r.env.NodeScript, err, out)
	}
	t.Cleanup(func() { _ = exec.Command(r.env.NodeScript, "stop", "acl").Run() })
	header := producerHeader5(r.env.Topic, 4, 128, 400, 10000)
	header[0] = strings.Replace(header[0], "aclEnable: false", "aclEnable: true", 1)
	before := r.maxOffsets(t, r.env.AclNamesrv, r.env.Topic)
	run := r.run(t, "5.3", 0, 2*time.Minute, "producer", "-n", r.env.AclNamesrv, "-t", r.env.Topic, "-w", "4", "-q", "400", "-a", "true")
	if run.rc != 0 || run.stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", run.rc, run.stderr)
	}
	total, failed, _ := checkProducerOutput(t, "5.3", run.stdout, header, true)
	stored := r.maxOffsets(t, r.env.AclNamesrv, r.env.Topic) - before
	ok := run.result.Tests[0].Counts.Operations
	if total != 400 || failed != 0 || ok == 0 || stored != ok {
		t.Errorf("with the keys: Send Total %d, Send Failed %d, %d sent, broker stored %d", total, failed, ok, stored)
	}
	for _, args := range [][]string{{}, {"-a", "true", "-sk", "wrong"}} {
		run := r.run(t, "5.3", 0, time.Minute, "producer", append([]string{"-n", r.env.AclNamesrv, "-t", r.env.Topic, "-w", "4", "-q", "4"}, args...)...)
		want := "[Complete] Send Total: 0 | Send TPS: 0 | Max RT(ms): 0 | Average RT(ms):     NaN | Send Failed: 0 | Response Failed: 4"
		lines := rmqLines(run.stdout)
		if run.rc != 0 || len(lines) == 0 || lines[len(lines)-1] != want {
			t.Errorf("%v: exit %d\n%s%s\nwant last line\n%s", args, run.rc, run.stdout, run.stderr, want)
		}
	}
}
