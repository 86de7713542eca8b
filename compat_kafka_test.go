package perfclones_test

// End-to-end compatibility tests of the Kafka clones: build
// kafka-producer-perf-test and kafka-consumer-perf-test, run the vendor
// docs' command lines (seeds 000 and 004) scaled down against the local
// brokers, each beside Kafka's own tool (scripts/kafka-tool: 4.4, and 3.9
// for the seed's --broker-list consumer line) on the same cluster, and
// compare line shapes (numbers and dates masked, everything else byte for
// byte) and exit codes. Then what shapes cannot show: the counts are exact
// (the topic's end offsets grow by the records reported sent; the consumer
// reports exactly what a fresh topic holds), and faults (an unreachable
// bootstrap server; a broker stopped or killed mid-run, started again
// afterwards) end as they should.
//
// Both tools run with COLUMNS=80, which sets the help's wrap width. The
// Java tools log WARN lines (log4j) and stack traces on stderr: those are
// left out of the comparison, and for an uncaught exception only the first
// stderr line is compared (ours prints only the exception line).
//
// The Java producer is slow here with the seed's batch.size=1024 (about 1000
// records/s on two cores next to four brokers), so a case gives the two
// tools different --num-records: ours the brief's 20000-50000, the Java tool
// what it sends in a few seconds. The output shapes do not depend on it.

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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/result"
	"github.com/perfclones/perfclones/internal/result/resulttest"
	"github.com/perfclones/perfclones/internal/shapes"
	"github.com/perfclones/perfclones/internal/testenv"
)

// kafkaRunTimeout bounds every run of either tool.
const kafkaRunTimeout = 60 * time.Second

// kafkaBins are our two binaries.
type kafkaBins struct{ producer, consumer string }

func ourKafkaTools(t *testing.T) kafkaBins {
	t.Helper()
	return kafkaBins{producer: ourTool(t, "kafka-producer-perf-test"), consumer: ourTool(t, "kafka-consumer-perf-test")}
}

// kafkaTools is what a test runs: ours and the originals.
type kafkaTools struct {
	env  testenv.KafkaEnv
	ours kafkaBins
}

func newKafkaTools(t *testing.T) *kafkaTools {
	t.Helper()
	env := testenv.Kafka(t)
	return &kafkaTools{env: env, ours: ourKafkaTools(t)}
}

// argv returns the command for tool: ours emulating 4.4 ("producer",
// "consumer", with PERFCLONES_KAFKA_VERSION=4.4) or 3.9, the default
// ("producer39", "consumer39", no variable), or Kafka's own
// ("java:producer", "java:consumer", "java:producer39", "java:consumer39",
// scripts/kafka-tool).
func (k *kafkaTools) argv(tool string, args []string) []string {
	as44 := []string{"env", "PERFCLONES_KAFKA_VERSION=4.4"}
	switch tool {
	case "producer":
		return append(append(as44, k.ours.producer), args...)
	case "consumer":
		return append(append(as44, k.ours.consumer), args...)
	case "producer39":
		return append([]string{k.ours.producer}, args...)
	case "consumer39":
		return append([]string{k.ours.consumer}, args...)
	}
	java, ok := strings.CutPrefix(tool, "java:")
	if !ok {
		panic("unknown tool " + tool)
	}
	return append([]string{k.env.ToolScript, java}, args...)
}

// runKafka runs argv with COLUMNS=80 for at most timeout; a run that does
// not end by then fails the test.
func runKafka(t *testing.T, timeout time.Duration, argv []string) toolRun {
	t.Helper()
	r := runCommand(t, argv, timeout, false, "", []string{"COLUMNS=80"})
	if r.timedOut {
		t.Fatalf("%s: no exit within %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), timeout, r.stdout, r.stderr)
	}
	return r
}

// splitKafkaArgs splits a command line at spaces; a double-quoted part
// keeps its spaces (date formats). $VARS are replaced from vars.
func splitKafkaArgs(t *testing.T, line string, vars map[string]string) []string {
	t.Helper()
	var args []string
	var cur strings.Builder
	inQuote, has := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote = !inQuote
			has = true
		case r == ' ' && !inQuote:
			if has {
				args = append(args, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if inQuote {
		t.Fatalf("command line %q: unbalanced quote", line)
	}
	if has {
		args = append(args, cur.String())
	}
	for i, a := range args {
		args[i] = os.Expand(a, func(k string) string {
			v, ok := vars[k]
			if !ok {
				t.Fatalf("command line %q: unknown $%s", line, k)
			}
			return v
		})
	}
	return args
}

// ---- output normalisation -------------------------------------------------

var (
	// log4jLineRe is a line of the Java tools' log4j layout
	// "[%d] %p %m (%c)%n"; stackLineRe a line of a stack trace after its
	// first line.
	log4jLineRe = regexp.MustCompile(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) `)
	stackLineRe = regexp.MustCompile(`^(\tat |\t\.\.\. \d+ more|Caused by: |\tSuppressed: |\t\tat )`)
	// exceptionLineRe is the first line of a Java stack trace, as the
	// producer callback prints it for a failed send.
	exceptionLineRe = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*\.[A-Z]\w*(Exception|Error): `)

	// defaultDate is SimpleDateFormat("yyyy-MM-dd HH:mm:ss:SSS").
	defaultDate = shapes.Rule{Re: regexp.MustCompile(`\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}\b`), Placeholder: "<DATE>"}
	// englishDateFormat and englishDate: a --date-format with words, a
	// zone and spaces, and what it prints.
	englishDateFormat = `"EEE, d MMM yyyy HH:mm:ss.SSS z"`
	englishDate       = shapes.Rule{
		Re:          regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d\.\d{3} [A-Z]{2,5}\b`),
		Placeholder: "<DATE>",
	}

	kafkaMasker = shapes.Masker{Rules: []shapes.Rule{defaultDate, englishDate}}

	// The line shapes, made by masking real lines.
	producerWindowShape = kafkaMasker.Mask("1811 records sent, 359.0 records/sec (0.35 MB/sec), 2660.9 ms avg latency, 3551.0 ms max latency.")
	producerFinalShape  = kafkaMasker.Mask("20000 records sent, 938.394407 records/sec (0.92 MB/sec), 10679.72 ms avg latency, " +
		"18761.00 ms max latency, 11119 ms 50th, 18330 ms 95th, 18691 ms 99th, 18758 ms 99.9th.")
	consumerDetailedShape = kafkaMasker.Mask("2026-11-29 23:56:08:272, 0, 5.2099, 23.7852, 5463, 24940.6393, 0, 219, 23.7852, 24940.6393")
	consumerSummaryShape  = kafkaMasker.Mask("2026-11-29 23:56:08:272, 2026-11-29 23:56:09:272, 5.2099, 23.7852, 5463, 24940.6393, 0, 219, 23.7852, 24940.6393")
)

const (
	producerPropsNotice = "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead."
	messagesNotice      = "Warning: --messages is deprecated. Use --num-records instead."
	consumerHeaderLine  = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	detailedHeaderLine  = "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)

// javaStderr drops the log4j lines and the stack trace lines after an
// exception's first line.
func javaStderr(stderr string) []string {
	var out []string
	for _, l := range shapes.Lines(stderr) {
		if log4jLineRe.MatchString(l) || stackLineRe.MatchString(l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// kafkaOutput is a run's stdout, masked, with the lines whose number depends
// on timing (producer window lines, consumer detailed lines) taken out and
// counted.
type kafkaOutput struct {
	stdout  []string // masked, without the loose lines
	raw     []string // unmasked, all lines
	windows int      // producer window lines
	details int      // consumer --show-detailed-stats lines
}

func kafkaNormalise(r toolRun) kafkaOutput {
	o := kafkaOutput{raw: shapes.Lines(r.stdout)}
	for _, l := range kafkaMasker.MaskLines(o.raw) {
		switch l {
		case producerWindowShape:
			o.windows++
		case consumerDetailedShape:
			o.details++
		default:
			o.stdout = append(o.stdout, l)
		}
	}
	return o
}

// lastLine is the last line of text.
func lastLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// finalSent is the record count of the producer's final line.
func finalSent(t *testing.T, lines []string) (int64, bool) {
	t.Helper()
	for i := len(lines) - 1; i >= 0; i-- {
		if kafkaMasker.Mask(lines[i]) == producerFinalShape {
			n, err := strconv.ParseInt(strings.Fields(lines[i])[0], 10, 64)
			if err != nil {
				t.Fatalf("final line %q: %v", lines[i], err)
			}
			return n, true
		}
	}
	return 0, false
}

// consumerSummary returns the eight numbers of the consumer's CSV summary
// line (data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
// rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec), taken
// from the end of the line: a --date-format may hold ", " too.
func consumerSummary(lines []string) ([]string, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		if kafkaMasker.Mask(lines[i]) == consumerSummaryShape {
			f := strings.Split(lines[i], ", ")
			return f[len(f)-8:], true
		}
	}
	return nil, false
}

// ---- Kafka helpers ----------------------------------------------------------

// kafkaAdmin is an admin client on addrs; the caller closes it.
func kafkaAdmin(t *testing.T, addrs []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ClientID("perfclones-compat-test"))
	if err != nil {
		t.Fatalf("kafka client %v: %v", addrs, err)
	}
	return kadm.NewClient(cl)
}

// adminCtx bounds one admin call.
func adminCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// endOffsets sums the topic's end offsets over its partitions.
func endOffsets(t *testing.T, addrs []string, topic string) int64 {
	t.Helper()
	return sumOffsets(t, addrs, topic, true)
}

// sumOffsets sums the end (end set) or start offsets of the topic's
// partitions.
func sumOffsets(t *testing.T, addrs []string, topic string, end bool) int64 {
	t.Helper()
	adm := kafkaAdmin(t, addrs)
	defer adm.Close()
	ctx, cancel := adminCtx()
	defer cancel()
	list := adm.ListStartOffsets
	if end {
		list = adm.ListEndOffsets
	}
	// A broker that has just become a partition's leader (a new topic, a
	// restart) may still answer UNKNOWN_TOPIC_OR_PARTITION for a moment.
	var offsets kadm.ListedOffsets
	var err error
	for try := 0; ; try++ {
		offsets, err = list(ctx, topic)
		if err == nil {
			err = offsets.Error()
		}
		if err == nil || try == 20 || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("offsets of %s: %v", topic, err)
	}
	var sum int64
	n := 0
	offsets.Each(func(o kadm.ListedOffset) {
		sum += o.Offset
		n++
	})
	if n == 0 {
		t.Fatalf("offsets of %s: no partitions", topic)
	}
	return sum
}

// endOffsetsGrowth is how much the topic's end offsets grew since before,
// once they settle: the end offset is the high watermark, which lags behind
// the leader's log until the followers have the records (acks=1 with 3
// replicas). It waits until the growth reaches want, or stays the same for
// 2 s, for at most 20 s.
func endOffsetsGrowth(t *testing.T, addrs []string, topic string, before, want int64) int64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	grew := endOffsets(t, addrs, topic) - before
	stable := time.Now()
	for grew != want && time.Now().Before(deadline) && time.Since(stable) < 2*time.Second {
		time.Sleep(200 * time.Millisecond)
		if g := endOffsets(t, addrs, topic) - before; g != grew {
			grew, stable = g, time.Now()
		}
	}
	return grew
}

// topicDetail is the topic's metadata.
func topicDetail(t *testing.T, addrs []string, topic string) (kadm.TopicDetail, error) {
	t.Helper()
	adm := kafkaAdmin(t, addrs)
	defer adm.Close()
	ctx, cancel := adminCtx()
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	d, ok := md.Topics[topic]
	if !ok {
		return d, fmt.Errorf("no metadata for %s", topic)
	}
	return d, d.Err
}

// requireTopic fails unless topic exists with its partitions and replicas:
// a tool must not auto-create a seed topic with the broker's defaults
// (scripts/services would then delete and recreate it).
func requireTopic(t *testing.T, addrs []string, topic string, partitions, replicas int) {
	t.Helper()
	d, err := topicDetail(t, addrs, topic)
	if err != nil {
		t.Fatalf("topic %s on %v: %v (run scripts/services start kafka)", topic, addrs, err)
	}
	if len(d.Partitions) != partitions || len(d.Partitions[0].Replicas) != replicas {
		t.Fatalf("topic %s on %v has %d partitions x %d replicas, want %d x %d (run scripts/services start kafka)",
			topic, addrs, len(d.Partitions), len(d.Partitions[0].Replicas), partitions, replicas)
	}
}

// createTopic creates a topic with a unique name, waits until every
// partition has a leader and its whole replica set in sync, and deletes it
// when the test ends.
func createTopic(t *testing.T, addrs []string, prefix string, partitions int32, replicas int16, configs map[string]*string) string {
	t.Helper()
	name := fmt.Sprintf("compat-%s-%d", prefix, time.Now().UnixNano())
	adm := kafkaAdmin(t, addrs)
	defer adm.Close()
	ctx, cancel := adminCtx()
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, replicas, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	t.Cleanup(func() {
		adm := kafkaAdmin(t, addrs)
		defer adm.Close()
		ctx, cancel := adminCtx()
		defer cancel()
		resps, err := adm.DeleteTopics(ctx, name)
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			t.Logf("delete topic %s: %v", name, err)
		}
	})
	waitInSync(t, addrs, name, int(replicas), 60*time.Second)
	return name
}

// waitInSync waits until every partition of topic has a leader and replicas
// in-sync replicas.
func waitInSync(t *testing.T, addrs []string, topic string, replicas int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		last = inSyncState(t, addrs, topic, replicas)
		if last == "" {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("topic %s not fully replicated after %v: %s", topic, timeout, last)
}

// inSyncState is "" when every partition of topic has a leader and
// replicas in-sync replicas, otherwise what is missing.
func inSyncState(t *testing.T, addrs []string, topic string, replicas int) string {
	d, err := topicDetail(t, addrs, topic)
	if err != nil {
		return err.Error()
	}
	if len(d.Partitions) == 0 {
		return "no partitions"
	}
	for _, p := range d.Partitions {
		if p.Err != nil || p.Leader < 0 || len(p.ISR) < replicas {
			return fmt.Sprintf("partition %d: leader %d, isr %v, err %v", p.Partition, p.Leader, p.ISR, p.Err)
		}
	}
	return ""
}

// ---- side by side -----------------------------------------------------------

// kafkaCase is one command line run by both tools.
type kafkaCase struct {
	name string
	// seed is the vendor doc's command line verbatim (without the script
	// name); args is what runs: seed's addresses replaced by $SINGLE or
	// $CLUSTER, and the record count by $N. $GROUP is a fresh group id per
	// run; $TOPIC a topic given by the test.
	seed, args string
	java       string // "java:producer", "java:consumer", "java:producer39", "java:consumer39"
	ours       string // "producer", "consumer" (as 4.4), "producer39", "consumer39" (the default)
	ourN       int    // $N for ours
	javaN      int    // $N for the Java tool
	rc         int

	// Where the topic lives, and its shape, for the offset check of
	// producer runs (requireTopic first).
	topic                string
	cluster              bool
	partitions, replicas int

	// oursOnly are stdout lines that ours prints and this Java tool does
	// not, by design (4.x lines where the reference is 3.9); ours must print
	// each, and they are left out of the comparison.
	oursOnly []string
	// detailed: both must print at least one --show-detailed-stats line
	// (when the Java tool does).
	detailed bool
}

// vars are the addresses and names of a case's command line.
func (k *kafkaTools) vars(n int, topic string) map[string]string {
	return map[string]string{
		"SINGLE":  k.env.Bootstrap,
		"CLUSTER": k.env.ClusterBootstrap,
		"N":       strconv.Itoa(n),
		"GROUP":   fmt.Sprintf("group-1-%d", time.Now().UnixNano()),
		"TOPIC":   topic,
	}
}

// compareKafkaRuns checks exit codes and line shapes of a Java run and ours.
func compareKafkaRuns(t *testing.T, tc kafkaCase, j, o toolRun) (jo, oo kafkaOutput) {
	t.Helper()
	if j.rc != tc.rc || o.rc != tc.rc {
		t.Errorf("exit code: Java %d, ours %d, want %d\nJava stderr: %q\nour stderr: %q", j.rc, o.rc, tc.rc, j.stderr, o.stderr)
	}
	jo, oo = kafkaNormalise(j), kafkaNormalise(o)
	ours := oo.stdout
	for _, want := range tc.oursOnly {
		masked := kafkaMasker.Mask(want)
		var kept []string
		found := false
		for _, l := range ours {
			if l == masked && !found {
				found = true
				continue
			}
			kept = append(kept, l)
		}
		if !found {
			t.Errorf("our stdout lacks %q (4.x)", want)
		}
		ours = kept
	}
	if d := shapes.Diff(jo.stdout, ours); d != "" {
		t.Errorf("stdout shapes differ (want Java, got ours):\n%s\nJava stdout:\n%s\nour stdout:\n%s", d, j.stdout, o.stdout)
	}
	js := kafkaMasker.MaskLines(javaStderr(j.stderr))
	ourErr := kafkaMasker.MaskLines(javaStderr(o.stderr))
	if d := shapes.Diff(js, ourErr); d != "" {
		t.Errorf("stderr shapes differ, log4j lines left out (want Java, got ours):\n%s\nJava stderr:\n%s\nour stderr:\n%s", d, j.stderr, o.stderr)
	}
	for _, l := range shapes.Lines(o.stderr) {
		if log4jLineRe.MatchString(l) {
			t.Logf("our log line: %s", l)
		}
	}
	// A window line is printed at a completion at least 5 s after the
	// window began, so a run has at most elapsed/5 s of them.
	if limit := int(o.elapsed / (5 * time.Second)); oo.windows > limit {
		t.Errorf("ours printed %d window lines in %v, at most %d expected", oo.windows, o.elapsed.Round(time.Millisecond), limit)
	}
	if tc.detailed && jo.details > 0 && oo.details == 0 {
		t.Errorf("ours printed no --show-detailed-stats line, Java %d", jo.details)
	}
	t.Logf("Java %v (%d window, %d detailed lines), ours %v (%d window, %d detailed lines)",
		j.elapsed.Round(time.Millisecond), jo.windows, jo.details, o.elapsed.Round(time.Millisecond), oo.windows, oo.details)
	return jo, oo
}

// runProducerCase runs a producer case with both tools and checks that the
// topic's end offsets grew by what each reports sent.
func (k *kafkaTools) runProducerCase(t *testing.T, tc kafkaCase) {
	addrs := []string{k.env.Bootstrap}
	if tc.cluster {
		addrs = k.env.ClusterAddrs
	}
	requireTopic(t, addrs, tc.topic, tc.partitions, tc.replicas)
	run := func(tool string, n int) (toolRun, int64) {
		before := endOffsets(t, addrs, tc.topic)
		r := runKafka(t, kafkaRunTimeout, k.argv(tool, splitKafkaArgs(t, tc.args, k.vars(n, tc.topic))))
		sent, _ := finalSent(t, shapes.Lines(r.stdout))
		return r, endOffsetsGrowth(t, addrs, tc.topic, before, sent)
	}
	j, jGrew := run(tc.java, tc.javaN)
	o, oGrew := run(tc.ours, tc.ourN)
	compareKafkaRuns(t, tc, j, o)
	if tc.rc != 0 {
		return
	}
	jSent, ok := finalSent(t, shapes.Lines(j.stdout))
	if !ok {
		t.Errorf("Java printed no final line")
	} else if jGrew != jSent {
		// Ours is checked below; a Java mismatch means somebody else
		// writes to the topic meanwhile.
		t.Logf("Java: %s end offsets grew by %d, Java reported %d sent (another writer?)", tc.topic, jGrew, jSent)
	}
	oSent, ok := finalSent(t, shapes.Lines(o.stdout))
	if !ok {
		t.Fatalf("ours printed no final line:\n%s", o.stdout)
	}
	if oGrew != oSent {
		t.Errorf("ours: %s end offsets grew by %d, ours reported %d sent", tc.topic, oGrew, oSent)
	}
	if oSent != int64(tc.ourN) {
		t.Errorf("ours sent %d of --num-records %d\nstderr:\n%s", oSent, tc.ourN, o.stderr)
	}
}

// seedLocal turns a seed command line into a local one: the seed's broker
// addresses become $SINGLE or $CLUSTER, the count of --num-records or
// --messages $N, and --group's value $GROUP.
func seedLocal(seed string, cluster bool) string {
	addr := "$SINGLE"
	if cluster {
		addr = "$CLUSTER"
	}
	s := regexp.MustCompile(`(bootstrap\.servers=|--broker-list )\S+`).ReplaceAllString(seed, "${1}$"+addr)
	s = regexp.MustCompile(`(--num-records|--messages) \d+`).ReplaceAllString(s, "$1 $$N")
	return regexp.MustCompile(`--group \S+`).ReplaceAllString(s, "--group $$GROUP")
}

func TestCompatKafkaProducerSeeds(t *testing.T) {
	k := newKafkaTools(t)
	const huawei = "--producer-props bootstrap.servers=192.168.0.69:9092,192.168.0.42:9092,192.168.0.66:9092 "
	tests := []kafkaCase{
		// Seed 000 (Huawei DMS, Kafka 2.7.2 tools), scenarios 1, 2 and 3:
		// batch.size=1KB, same AZ, 1 replica.
		{
			name: "seed000 batch.size=1024",
			seed: huawei + "acks=1 batch.size=1024 linger.ms=0 --topic Topic-01 --num-records 8000000 --record-size 1024 --throughput 102400",
			ourN: 20000, javaN: 4000, topic: "Topic-01", cluster: true, partitions: 3, replicas: 1,
		},
		// Scenario 1: batch.size=16KB.
		{
			name: "seed000 batch.size=16384",
			seed: huawei + "acks=1 batch.size=16384 linger.ms=0 --topic Topic-01 --num-records 100000000 --record-size 1024 --throughput 102400",
			ourN: 50000, javaN: 10000, topic: "Topic-01", cluster: true, partitions: 3, replicas: 1,
		},
		// Scenario 2: cross-AZ, the same line with 4000000 records.
		{
			name: "seed000 cross-AZ",
			seed: huawei + "acks=1 batch.size=1024 linger.ms=0 --topic Topic-01 --num-records 4000000 --record-size 1024 --throughput 102400",
			ourN: 20000, javaN: 2000, topic: "Topic-01", cluster: true, partitions: 3, replicas: 1,
		},
		// Scenarios 3 and 4: 3 replicas, acks=1 (asynchronous replication).
		{
			name: "seed000 3 replicas acks=1",
			seed: huawei + "acks=1 batch.size=1024 linger.ms=0 --topic Topic-02 --num-records 4000000 --record-size 1024 --throughput 102400",
			ourN: 20000, javaN: 3000, topic: "Topic-02", cluster: true, partitions: 3, replicas: 3,
		},
		// Scenario 4: synchronous replication, acks=-1 on
		// min.insync.replicas=2.
		{
			name: "seed000 3 replicas acks=-1",
			seed: huawei + "acks=-1 batch.size=1024 linger.ms=0 --topic Topic-03 --num-records 1000000 --record-size 1024 --throughput 102400",
			ourN: 20000, javaN: 2000, topic: "Topic-03", cluster: true, partitions: 3, replicas: 3,
		},
		// The doc's template ("测试脚本") with ${batch.size}=16384 and
		// ${Topic名称}=Topic-02.
		{
			name: "seed000 template",
			seed: "--producer-props bootstrap.servers=${连接地址} acks=1 batch.size=${batch.size} linger.ms=0 --topic ${Topic名称} --num-records ${num-records} --record-size 1024 --throughput 102400",
			args: "--producer-props bootstrap.servers=$CLUSTER acks=1 batch.size=16384 linger.ms=0 --topic Topic-02 --num-records $N --record-size 1024 --throughput 102400",
			ourN: 50000, javaN: 5000, topic: "Topic-02", cluster: true, partitions: 3, replicas: 3,
		},
		// Seed 004 (Volcengine, Kafka 2.2.2 tools), the default endpoint:
		// one broker here.
		{
			name: "seed004",
			seed: "--topic topic-1 --num-records 100000 --throughput 20000 --record-size 1000 --producer-props bootstrap.servers=kafka-xxxc5y.kafka.ivolces.com:9092",
			ourN: 20000, javaN: 10000, topic: "topic-1", partitions: 3, replicas: 1,
		},
		// The same with 4.2's --bootstrap-server and --command-property.
		{
			name: "seed004 4.x spellings",
			args: "--topic topic-1 --num-records $N --throughput 20000 --record-size 1000 --bootstrap-server $SINGLE --command-property acks=1",
			ourN: 20000, javaN: 10000, topic: "topic-1", partitions: 3, replicas: 1,
		},
	}
	for _, tc := range tests {
		// Each seed line beside the 3.9.2 tool with ours as it runs by
		// default, and beside the 4.4.0 tool with ours as 4.4; the 4.x
		// spellings only beside 4.4 (3.9 refuses them).
		for _, rel := range []struct{ name, java, ours string }{{"3.9", "java:producer39", "producer39"}, {"4.4", "java:producer", "producer"}} {
			if tc.seed == "" && rel.name == "3.9" {
				continue
			}
			t.Run(tc.name+" "+rel.name, func(t *testing.T) {
				tc := tc
				if tc.args == "" {
					tc.args = seedLocal(tc.seed, tc.cluster)
				}
				tc.java, tc.ours = rel.java, rel.ours
				k.runProducerCase(t, tc)
			})
		}
	}
}

// ensureRecords makes sure topic on the single broker holds at least n
// records, producing the missing ones with ours.
func (k *kafkaTools) ensureRecords(t *testing.T, topic string, n int, size int) {
	t.Helper()
	single := []string{k.env.Bootstrap}
	if have := endOffsets(t, single, topic) - sumOffsets(t, single, topic, false); have >= int64(n) {
		return
	}
	r := runKafka(t, kafkaRunTimeout, k.argv("producer", []string{"--topic", topic, "--num-records", strconv.Itoa(n),
		"--record-size", strconv.Itoa(size), "--throughput", "-1", "--bootstrap-server", k.env.Bootstrap}))
	if r.rc != 0 {
		t.Fatalf("filling %s: rc %d\n%s%s", topic, r.rc, r.stdout, r.stderr)
	}
}

func TestCompatKafkaConsumerSeeds(t *testing.T) {
	k := newKafkaTools(t)
	requireTopic(t, []string{k.env.Bootstrap}, k.env.SeedTopic, 3, 1)
	const n = 20000
	k.ensureRecords(t, k.env.SeedTopic, 2*n, 1000)
	const seed = "--topic topic-1 --fetch-size 1048576 --messages 100000 --group group-1 --broker-list kafka-xxxc5y.kafka.ivolces.com:9092"
	tests := []kafkaCase{
		// Seed 004 verbatim: --broker-list is gone in 4.0, so the reference is
		// 3.9, and ours runs as by default (3.9): no deprecation notice.
		{name: "seed004 3.9", seed: seed, java: "java:consumer39", ours: "consumer39"},
		// Ours as 4.4 still takes --broker-list, and prints 4.4's notice.
		{name: "seed004 as 4.4 beside 3.9", seed: seed, java: "java:consumer39", oursOnly: []string{messagesNotice}},
		{
			name: "seed004 --bootstrap-server 3.9", java: "java:consumer39", ours: "consumer39",
			args: "--topic topic-1 --fetch-size 1048576 --messages $N --group $GROUP --bootstrap-server $SINGLE",
		},
		// The same with 4.x's --bootstrap-server, still with --messages.
		{
			name: "seed004 --bootstrap-server --messages",
			args: "--topic topic-1 --fetch-size 1048576 --messages $N --group $GROUP --bootstrap-server $SINGLE",
		},
		{
			name: "seed004 4.x spellings",
			args: "--topic topic-1 --fetch-size 1048576 --num-records $N --group $GROUP --bootstrap-server $SINGLE",
		},
		{
			name: "show-detailed-stats", detailed: true,
			args: "--topic topic-1 --fetch-size 1048576 --num-records $N --group $GROUP --bootstrap-server $SINGLE --show-detailed-stats --reporting-interval 10",
		},
		{name: "hide-header", args: "--topic topic-1 --num-records $N --bootstrap-server $SINGLE --hide-header"},
		{name: "date-format", args: "--topic topic-1 --num-records $N --bootstrap-server $SINGLE --date-format " + englishDateFormat},
		{
			name: "detailed hide-header date-format", detailed: true,
			args: "--topic topic-1 --num-records $N --bootstrap-server $SINGLE --show-detailed-stats --reporting-interval 10 --hide-header --date-format " + englishDateFormat,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args == "" {
				tc.args = seedLocal(tc.seed, false)
			}
			if tc.java == "" {
				tc.java = "java:consumer"
			}
			if tc.ours == "" {
				tc.ours = "consumer"
			}
			tc.ourN, tc.javaN = n, n
			j := runKafka(t, kafkaRunTimeout, k.argv(tc.java, splitKafkaArgs(t, tc.args, k.vars(n, ""))))
			o := runKafka(t, kafkaRunTimeout, k.argv(tc.ours, splitKafkaArgs(t, tc.args, k.vars(n, ""))))
			_, oo := compareKafkaRuns(t, tc, j, o)
			wantHeader := consumerHeaderLine
			if strings.Contains(tc.args, "--show-detailed-stats") {
				wantHeader = detailedHeaderLine
			}
			hasHeader := false
			for _, l := range oo.raw {
				hasHeader = hasHeader || l == wantHeader
			}
			if hide := strings.Contains(tc.args, "--hide-header"); hasHeader == hide {
				t.Errorf("ours: header present %v with --hide-header %v", hasHeader, hide)
			}
			if strings.Contains(tc.args, "--show-detailed-stats") {
				return
			}
			f, ok := consumerSummary(oo.raw)
			if !ok {
				t.Fatalf("ours printed no summary line:\n%s", o.stdout)
			}
			// The topic holds more than n records: at least n are read (the
			// last poll's whole batch counts, so maybe more).
			if got, _ := strconv.ParseInt(f[2], 10, 64); got < n {
				t.Errorf("ours: data.consumed.in.nMsg %d < %d", got, n)
			}
		})
	}
}

// TestCompatKafkaCounts checks that the numbers are exact on a fresh topic:
// the end offsets grow by the records the producer reports sent, and the
// consumer reports what the topic holds, in records and in MB.
func TestCompatKafkaCounts(t *testing.T) {
	k := newKafkaTools(t)
	single := []string{k.env.Bootstrap}
	topic := createTopic(t, single, "counts", 3, 1, nil)
	const n, size = 30000, 700
	r := runKafka(t, kafkaRunTimeout, k.argv("producer", []string{"--topic", topic, "--num-records", strconv.Itoa(n),
		"--record-size", strconv.Itoa(size), "--throughput", "-1", "--bootstrap-server", k.env.Bootstrap}))
	if r.rc != 0 {
		t.Fatalf("producer rc %d\n%s%s", r.rc, r.stdout, r.stderr)
	}
	sent, ok := finalSent(t, shapes.Lines(r.stdout))
	if !ok || sent != n {
		t.Fatalf("producer sent %d (final line found: %v), want %d\n%s%s", sent, ok, n, r.stdout, r.stderr)
	}
	if got := endOffsets(t, single, topic); got != n {
		t.Fatalf("end offsets of %s sum to %d after sending %d", topic, got, n)
	}
	wantMB := strconv.FormatFloat(float64(n*size)/1048576, 'f', 4, 64)

	tests := []struct {
		name    string
		args    string
		timeout bool // asks for more than the topic holds
	}{
		{name: "exact", args: "--bootstrap-server $SINGLE --topic $TOPIC --num-records $N"},
		{name: "messages", args: "--bootstrap-server $SINGLE --topic $TOPIC --messages $N"},
		{name: "timeout", args: "--bootstrap-server $SINGLE --topic $TOPIC --num-records $N --timeout 3000", timeout: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := n
			if tc.timeout {
				want = n + 1
			}
			j := runKafka(t, kafkaRunTimeout, k.argv("java:consumer", splitKafkaArgs(t, tc.args, k.vars(want, topic))))
			o := runKafka(t, kafkaRunTimeout, k.argv("consumer", splitKafkaArgs(t, tc.args, k.vars(want, topic))))
			jo, oo := compareKafkaRuns(t, kafkaCase{name: tc.name}, j, o)
			for _, side := range []struct {
				tool string
				out  kafkaOutput
				fail func(string, ...any)
			}{{"Java", jo, t.Logf}, {"ours", oo, t.Errorf}} {
				f, ok := consumerSummary(side.out.raw)
				if !ok {
					side.fail("%s printed no summary line", side.tool)
					continue
				}
				if f[2] != strconv.Itoa(n) {
					side.fail("%s: data.consumed.in.nMsg %s, want %d", side.tool, f[2], n)
				}
				if f[0] != wantMB {
					side.fail("%s: data.consumed.in.MB %s, want %s (%d x %d bytes)", side.tool, f[0], wantMB, n, size)
				}
			}
			warned := false
			for _, l := range oo.raw {
				warned = warned || strings.HasPrefix(l, "WARNING: Exiting before consuming the expected number of records: timeout (3000 ms) exceeded.")
			}
			if warned != tc.timeout {
				t.Errorf("ours: timeout warning %v, want %v", warned, tc.timeout)
			}
		})
	}
}

// ---- errors, help, version --------------------------------------------------

// stderrCheck says how the stderr of an error case is compared.
type stderrCheck int

const (
	stderrEqual     stderrCheck = iota // every line, byte for byte (log4j lines left out)
	stderrFirstLine                    // the first line: Java follows it with a stack trace
	stderrJoptHelp                     // the first line, then the jopt-simple help table row by row
)

// The consumer's help is each release's byte for byte: ours hides the
// other releases' options.
var (
	joptRowRe = regexp.MustCompile(`^--([a-z][a-z0-9.-]*)`)
)

// joptRows splits a jopt-simple help table (after the message line) into
// the header and a row per option, each line with its padding removed.
func joptRows(lines []string) (header []string, rows map[string][]string, order []string) {
	rows = map[string][]string{}
	cur := ""
	for _, l := range lines {
		trimmed := strings.TrimRight(l, " ")
		if m := joptRowRe.FindStringSubmatch(l); m != nil {
			cur = m[1]
			order = append(order, cur)
		}
		if cur == "" {
			header = append(header, trimmed)
			continue
		}
		rows[cur] = append(rows[cur], trimmed)
	}
	return header, rows, order
}

// compareJoptHelp compares the consumer's help tables: the padding width,
// the header, and every row both have.
func compareJoptHelp(t *testing.T, j, o []string) {
	t.Helper()
	width := func(lines []string) int {
		w := 0
		for _, l := range lines {
			w = max(w, len(l))
		}
		return w
	}
	if len(j) < 2 || len(o) < 2 {
		t.Errorf("help table missing: Java %d lines, ours %d", len(j), len(o))
		return
	}
	if jw, ow := width(j[1:]), width(o[1:]); jw != ow {
		t.Errorf("help table lines padded to %d columns, Java %d (e.g. ours %q, Java %q)", ow, jw, o[1], j[1])
	}
	jh, jr, jorder := joptRows(j[1:])
	oh, or, oorder := joptRows(o[1:])
	if d := shapes.Diff(jh, oh); d != "" {
		t.Errorf("help table header differs (trailing spaces removed):\n%s", d)
	}
	for _, name := range jorder {
		orow, ok := or[name]
		if !ok {
			t.Errorf("help: ours has no --%s row", name)
			continue
		}
		if d := shapes.Diff(kafkaMasker.MaskLines(jr[name]), kafkaMasker.MaskLines(orow)); d != "" {
			t.Errorf("help: --%s row differs (trailing spaces removed):\n%s", name, d)
		}
	}
	for _, name := range oorder {
		if _, ok := jr[name]; !ok {
			t.Errorf("help: ours has an extra --%s row", name)
		}
	}
}

func TestCompatKafkaErrors(t *testing.T) {
	k := newKafkaTools(t)
	const props = "--producer-props bootstrap.servers=$SINGLE"
	tests := []struct {
		name   string
		java   string // the Java tool; ours is the same kind
		args   string
		rc     int
		stderr stderrCheck
		// shapeOnly compares stdout masked (a version), not byte for byte.
		shapeOnly bool
		// only44: the command line uses an option the 3.9 tools refuse, or
		// 3.9 runs it (--record-size 0); it is checked beside 4.4 only.
		// Beside 3.9 every consumer case runs with --messages for
		// --num-records.
		only44 bool
	}{
		// Producer (argparse4j): usage and message on stderr, exit 1.
		{name: "producer missing --throughput", java: "producer", args: "--topic t --num-records 10 --record-size 10 " + props, rc: 1},
		{name: "producer missing everything", java: "producer", args: "--record-size 10", rc: 1},
		{name: "producer missing payload", java: "producer", args: "--topic t --num-records 10 --throughput -1 " + props, rc: 1},
		{name: "producer bad prop", java: "producer", args: "--producer-props a --topic t --num-records 10 --record-size 10 --throughput -1", rc: 1, stderr: stderrFirstLine},
		{name: "producer prop with =", java: "producer", args: "--producer-props bootstrap.servers=$SINGLE sasl.jaas.config=a=b --topic t --num-records 10 --record-size 10 --throughput -1", rc: 1, stderr: stderrFirstLine},
		{name: "producer ambiguous prefix", java: "producer", args: "--producer x --topic t --num-records 10 --record-size 10 --throughput -1", rc: 1},
		{name: "producer --num abc", java: "producer", args: "--num abc --topic t --record-size 10 --throughput -1 " + props, rc: 1},
		{name: "producer unknown option did you mean", java: "producer", args: "--topicc t --num-records 10 --record-size 10 --throughput -1 " + props, rc: 1},
		{name: "producer unknown option far", java: "producer", args: "--zzzzzzzzzzzz --topic t --num-records 10 --record-size 10 --throughput -1 " + props, rc: 1},
		{name: "producer --help", java: "producer", args: "--help", rc: 1},
		{name: "producer -h after options", java: "producer", args: "--topic t -h", rc: 1},
		{name: "producer no args", java: "producer", args: "", rc: 0},
		{name: "producer --num-records 0", java: "producer", args: "--topic t --num-records 0 --record-size 10 --throughput -1 " + props, rc: 1},
		{name: "producer --record-size 0", java: "producer", args: "--topic t --num-records 10 --record-size 0 --throughput -1 " + props, rc: 1, only44: true},
		{name: "producer warmup = num-records", java: "producer", args: "--topic t --num-records 10 --warmup-records 10 --record-size 10 --throughput -1 " + props, rc: 1, only44: true},
		{name: "producer warmup > num-records", java: "producer", args: "--topic t --num-records 10 --warmup-records 11 --record-size 10 --throughput -1 " + props, rc: 1, only44: true},
		{name: "producer throughput -1.5", java: "producer", args: "--topic t --num-records 10 --record-size 10 --throughput -1.5 " + props, rc: 1},
		{name: "producer record-size and payload-file", java: "producer", args: "--topic t --num-records 10 --record-size 10 --payload-file /nonexistent --throughput -1 " + props, rc: 1},

		// Consumer (jopt-simple): message, then the help table, on stderr.
		{name: "consumer no args", java: "consumer", args: "", rc: 1, stderr: stderrJoptHelp},
		{name: "consumer --help", java: "consumer", args: "--help", rc: 1, stderr: stderrJoptHelp},
		{name: "consumer unknown option", java: "consumer", args: "--bootstrap-server $SINGLE --topic t --num-records 10 --foo", rc: 1, stderr: stderrJoptHelp},
		{name: "consumer missing argument", java: "consumer", args: "--bootstrap-server $SINGLE --topic t --num-records", rc: 1, stderr: stderrJoptHelp},
		{name: "consumer --version", java: "consumer", args: "--version", rc: 0, shapeOnly: true},
		{name: "consumer neither messages nor num-records", java: "consumer", args: "--bootstrap-server $SINGLE --topic t", rc: 1, stderr: stderrJoptHelp},
		{name: "consumer messages and num-records", java: "consumer", args: "--bootstrap-server $SINGLE --topic t --messages 10 --num-records 10", rc: 1, stderr: stderrJoptHelp, only44: true},
		{name: "consumer neither topic nor include", java: "consumer", args: "--bootstrap-server $SINGLE --num-records 10", rc: 1, stderr: stderrJoptHelp},
		{name: "consumer bad number", java: "consumer", args: "--bootstrap-server $SINGLE --topic t --num-records abc", rc: 1, stderr: stderrFirstLine},
		// The seeds' host names do not resolve here: the Java clients fail
		// at construction.
		{name: "producer unresolvable bootstrap server", java: "producer", args: "--topic t --num-records 10 --record-size 10 --throughput -1 --bootstrap-server kafka-xxxc5y.kafka.ivolces.com:9092 --command-property max.block.ms=3000", rc: 1, stderr: stderrFirstLine, only44: true},
		{name: "consumer unresolvable bootstrap server", java: "consumer", args: "--topic t --num-records 10 --bootstrap-server kafka-xxxc5y.kafka.ivolces.com:9092", rc: 1, stderr: stderrFirstLine},
		{name: "consumer reporting interval 0", java: "consumer", args: "--bootstrap-server $SINGLE --topic t --num-records 10 --reporting-interval 0", rc: 1, stderr: stderrFirstLine},
	}
	for _, tc := range tests {
		for _, rel := range []string{"3.9", "4.4"} {
			if tc.only44 && rel == "3.9" {
				continue
			}
			t.Run(tc.name+" "+rel, func(t *testing.T) {
				t.Parallel()
				kafkaErrorCase(t, k, tc.java, rel, tc.args, tc.rc, tc.stderr, tc.shapeOnly)
			})
		}
	}
}

// kafkaErrorCase runs one error case of TestCompatKafkaErrors with the Java
// tool of release rel and ours emulating it.
func kafkaErrorCase(t *testing.T, k *kafkaTools, tool, rel, line string, rc int, check stderrCheck, shapeOnly bool) {
	tc := struct {
		rc        int
		stderr    stderrCheck
		shapeOnly bool
	}{rc, check, shapeOnly}
	java, ours := "java:"+tool, tool
	if rel == "3.9" {
		java, ours = java+"39", ours+"39"
		if tool == "consumer" {
			line = strings.ReplaceAll(line, "--num-records", "--messages")
		}
	}
	{
		{
			args := splitKafkaArgs(t, line, k.vars(0, ""))
			j := runKafka(t, kafkaRunTimeout, k.argv(java, args))
			o := runKafka(t, kafkaRunTimeout, k.argv(ours, args))
			if j.rc != tc.rc || o.rc != tc.rc {
				t.Errorf("exit code: Java %d, ours %d, want %d", j.rc, o.rc, tc.rc)
			}
			if tc.shapeOnly {
				if d := shapes.Diff(kafkaMasker.MaskLines(shapes.Lines(j.stdout)), kafkaMasker.MaskLines(shapes.Lines(o.stdout))); d != "" {
					t.Errorf("stdout shapes differ (want Java, got ours):\n%s", d)
				}
			} else if j.stdout != o.stdout {
				t.Errorf("stdout differs (want Java, got ours):\n%s\nJava: %q\nours: %q",
					shapes.Diff(shapes.Lines(j.stdout), shapes.Lines(o.stdout)), j.stdout, o.stdout)
			}
			js, ourErr := javaStderr(j.stderr), javaStderr(o.stderr) // log4j lines and stack frames aside, on both sides
			switch tc.stderr {
			case stderrEqual:
				if d := shapes.Diff(js, ourErr); d != "" {
					t.Errorf("stderr differs (want Java, got ours):\n%s", d)
				}
			case stderrFirstLine, stderrJoptHelp:
				if first(js) != first(ourErr) {
					t.Errorf("first stderr line: Java %q, ours %q", first(js), first(ourErr))
				}
				// The exception line, and its cause where Java has one;
				// Java's stack trace in between is not reproduced.
				if tc.stderr == stderrFirstLine {
					for _, l := range ourErr[1:] {
						if !strings.HasPrefix(l, "Caused by: ") || !slices.Contains(shapes.Lines(j.stderr), l) {
							t.Errorf("ours printed more than the exception line and Java's cause:\n%s", o.stderr)
							break
						}
					}
				}
				if tc.stderr == stderrJoptHelp {
					compareJoptHelp(t, js, ourErr)
				}
			}
		}
	}
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// ---- faults -----------------------------------------------------------------

// TestCompatKafkaZFaults (Z: Go runs the tests in file order, and this one
// stops a broker, so it comes last) checks an unreachable bootstrap server
// and a broker stopped in the middle of a run; the broker is started again
// and the cluster's topics are back in sync before the test ends.
// failoverSlack bounds how long a partition of the cluster has no leader
// after its leader is killed (the KRaft controller's broker session
// timeout, 9 s by default), plus the retry's round trip.
const failoverSlack = 15 * time.Second

func TestCompatKafkaZFaults(t *testing.T) {
	k := newKafkaTools(t)

	t.Run("unreachable bootstrap server", func(t *testing.T) {
		port := closedPort(t)
		args := []string{"--topic", "t", "--num-records", "10", "--record-size", "10", "--throughput", "-1",
			"--bootstrap-server", "127.0.0.1:" + port, "--command-property", "max.block.ms=3000"}
		o := runKafka(t, 30*time.Second, k.argv("producer", args))
		lines := shapes.Lines(o.stderr)
		t.Logf("ours: rc %d in %v, stdout %q, stderr %q", o.rc, o.elapsed.Round(time.Millisecond), o.stdout, o.stderr)
		if o.rc == 0 {
			t.Errorf("exit code 0, want non-zero")
		}
		if len(lines) != 1 || strings.TrimSpace(lines[0]) == "" {
			t.Errorf("stderr has %d lines, want one clear line: %q", len(lines), o.stderr)
		}
		if o.elapsed >= 10*time.Second || o.elapsed < 2500*time.Millisecond {
			t.Errorf("ended after %v, want about max.block.ms=3000 (and < 10 s)", o.elapsed)
		}
	})

	// A broker stopped 2 s into an 8 s run at --throughput 2000, on a
	// topic with 3 replicas: with SIGTERM (a controlled shutdown, as
	// scripts/services stop does) the leaders move and the client retries;
	// with SIGKILL and short request and delivery timeouts records fail
	// while the partitions it led have no leader. Either way the run ends
	// with its summary, every record is counted once, as sent or as a
	// failure, and the topic holds what was reported sent.
	//
	// With the default delivery.timeout.ms (120 s) the Java producer
	// retries every record until the partition has a new leader (about
	// 10 s after a kill) and its close() waits for them all: every record
	// is delivered (allDelivered).
	for _, v := range []struct {
		name         string
		sig          syscall.Signal
		props        []string
		allDelivered bool
		// deliveryTimeout: no record completes later than this after its
		// send, plus the partition's leader failover (failoverSlack). The
		// Java producer expires a record whose request was in flight to
		// the dead leader at delivery.timeout.ms, though the broker may
		// have written it; ours (franz-go, idempotent) fails a record only
		// when no unanswered request may have written it, so such a record
		// completes when the new leader answers the retry.
		deliveryTimeout time.Duration
	}{
		{name: "broker stopped mid-run", sig: syscall.SIGTERM, allDelivered: true},
		{name: "broker killed mid-run", sig: syscall.SIGKILL, allDelivered: true},
		{name: "broker killed mid-run short timeouts", sig: syscall.SIGKILL, props: []string{"--command-property", "request.timeout.ms=1500", "delivery.timeout.ms=3000"}, deliveryTimeout: 3 * time.Second},
	} {
		sig := v.sig
		t.Run(v.name, func(t *testing.T) {
			cluster := k.env.ClusterAddrs
			topic := createTopic(t, cluster, "fault", 3, 3, nil)
			const n, rate = 16000, 2000 // 8 s
			before := endOffsets(t, cluster, topic)

			// The broker that leads partition 0.
			d, err := topicDetail(t, cluster, topic)
			if err != nil || d.Partitions[0].Leader < 0 {
				t.Fatalf("leader of %s-0: %v", topic, err)
			}
			node := fmt.Sprintf("cluster-%d", d.Partitions[0].Leader)

			ctx, cancel := context.WithTimeout(context.Background(), kafkaRunTimeout)
			defer cancel()
			argv := k.argv("producer", append([]string{"--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", "512",
				"--throughput", strconv.Itoa(rate), "--bootstrap-server", k.env.ClusterBootstrap}, v.props...))
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), "COLUMNS=80")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			stopBroker(t, node, sig)
			t.Logf("sent %v to %s (leader of %s-0) %v into the run", sig, node, topic, time.Since(start).Round(time.Millisecond))
			err = cmd.Wait()
			elapsed := time.Since(start)
			rc := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				rc = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			t.Logf("ours: rc %d in %v\nstdout:\n%s", rc, elapsed.Round(time.Millisecond), stdout.String())
			failures := 0
			kinds := map[string]int{}
			for _, l := range shapes.Lines(stderr.String()) {
				if exceptionLineRe.MatchString(l) {
					failures++
					kinds[kafkaMasker.Mask(l)]++
				} else {
					t.Logf("stderr: %s", l)
				}
			}
			for l, c := range kinds {
				t.Logf("stderr: %d x %s", c, l)
				// A Java exception's message, not the Go client's ("kafka: ...").
				if strings.Contains(l, ": kafka: ") {
					t.Errorf("failure line is not one the Java tool prints (the Go client's text): %d x %q", c, l)
				}
			}
			if v.allDelivered && failures > 0 {
				t.Errorf("%d records failed; with delivery.timeout.ms=120000 the Java producer retries them until the new leader takes them, and close() waits", failures)
			}
			if rc != 0 {
				t.Errorf("exit code %d, want 0", rc)
			}
			out := shapes.Lines(stdout.String())
			sent, ok := finalSent(t, out)
			if !ok || kafkaMasker.Mask(lastLine(out)) != producerFinalShape {
				t.Fatalf("the run did not end with its final line:\n%s", stdout.String())
			}
			if v.deliveryTimeout > 0 {
				// "..., X ms avg latency, Y ms max latency, ..."
				f := strings.Split(lastLine(out), ", ")
				maxMs, err := strconv.ParseFloat(strings.TrimSuffix(f[3], " ms max latency"), 64)
				if err != nil {
					t.Fatalf("max latency of %q: %v", lastLine(out), err)
				}
				if limit := v.deliveryTimeout + failoverSlack; time.Duration(maxMs*float64(time.Millisecond)) > limit {
					t.Errorf("max latency %.0f ms with delivery.timeout.ms=%d: a record acknowledged later than its delivery timeout and the leader's failover",
						maxMs, v.deliveryTimeout.Milliseconds())
				}
			}
			if sent+int64(failures) != n {
				t.Errorf("sent %d + failures %d = %d, want --num-records %d", sent, failures, sent+int64(failures), n)
			}
			// Every record reported sent is in the topic. A record reported
			// failed was not acknowledged, but one whose acknowledgement the
			// dying leader never sent may have been replicated and so be
			// written all the same (Java's producer reports those as
			// expired too): the topic grew by the records sent, plus at
			// most the failed ones.
			grew := endOffsetsGrowth(t, cluster, topic, before, sent)
			switch {
			case grew < sent || grew > sent+int64(failures):
				t.Errorf("end offsets grew by %d, ours reported %d sent and %d failed", grew, sent, failures)
			default:
				t.Logf("end offsets grew by %d: %d sent, %d failed (%d of them written before the failover)", grew, sent, failures, grew-sent)
			}
		})
	}
}

// servicesRoot is the checkout whose scripts/services started the local
// servers: the one scripts/kafka-tool (PERF_KAFKA_TOOL) belongs to, which
// is this one unless the tests run from another work tree of the
// repository.
func servicesRoot(t *testing.T) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(testenv.Kafka(t).ToolScript))
}

// brokerPids are the pids of the JVMs running a node of the local cluster,
// found by the node's config path (scripts/lib/kafka.sh starts each node as
// `java ... kafka.Kafka .services/kafka/<node>/server.properties`).
func brokerPids(t *testing.T, node string) []int {
	t.Helper()
	cfg := filepath.Join(servicesRoot(t), ".services", "kafka", node, "server.properties")
	out, err := exec.Command("pgrep", "-f", "--", "kafka\\.Kafka "+regexp.QuoteMeta(cfg)+"$").Output()
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
		t.Fatalf("pgrep: %v", err)
	}
	var pids []int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopBroker sends sig to node's JVM and returns at once (the run goes on
// in its own process). A cleanup waits until the JVM is gone, starts it
// again with scripts/services and waits until the cluster's topics are
// fully replicated again.
func stopBroker(t *testing.T, node string, sig syscall.Signal) {
	t.Helper()
	pids := brokerPids(t, node)
	if len(pids) != 1 {
		t.Fatalf("%s: found pids %v, want one", node, pids)
	}
	pid := pids[0]
	// Found now: in the cleanup a broker is down, and testenv.Kafka would
	// skip the test there instead of restarting it.
	root := servicesRoot(t)
	t.Cleanup(func() {
		start := time.Now()
		for syscall.Kill(pid, 0) == nil {
			if time.Since(start) > 60*time.Second {
				t.Errorf("%s (pid %d) still running 60 s after %v; killing it", node, pid, sig)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				time.Sleep(2 * time.Second)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		restartBrokers(t, root)
	})
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill -%v %d (%s): %v", sig, pid, node, err)
	}
}

// restartBrokers starts the stopped node again (scripts/services start kafka
// starts what is not running, then waits until its topics are fully in sync)
// and waits for the topics of the cluster.
func restartBrokers(t *testing.T, root string) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "services"), "start", "kafka")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("scripts/services start kafka: %v\n%s", err, out)
		return
	}
	env := testenv.Kafka(t)
	for _, topic := range []string{env.Topic3x3, env.Topic3x3ISR2} {
		waitInSync(t, env.ClusterAddrs, topic, 3, 2*time.Minute)
	}
	t.Logf("cluster restored in %v", time.Since(start).Round(time.Millisecond))
}

// ---- result file ------------------------------------------------------------

// TestCompatKafkaResultFile runs seed 004's lines with PERFCLONES_RESULT and
// checks the file against the schema and the printed lines. The producer's
// percentiles are printed from Java's sampled integer-ms latencies; with
// fewer than 1,000,000 records every ack is sampled, so the printed p-th
// percentile is the (floor(p*n)+1)-th smallest of n integer-ms latencies.
// Each of those is within 1.001 ms of the same ack's latency in the
// histogram (wall-clock ms are floored at both ends; microseconds
// truncated), so the two order statistics are within 1001 µs of each
// other, and the histogram reports its value at that rank to within its
// 3 significant digits (at most 1/1024 above).
func TestCompatKafkaResultFile(t *testing.T) {
	k := newKafkaTools(t)
	requireTopic(t, []string{k.env.Bootstrap}, k.env.SeedTopic, 3, 1)
	dir := t.TempDir()

	t.Run("producer", func(t *testing.T) {
		const n = 20000
		file := filepath.Join(dir, "producer.json")
		args := splitKafkaArgs(t, seedLocal("--topic topic-1 --num-records 100000 --throughput 20000 --record-size 1000 --producer-props bootstrap.servers=kafka-xxxc5y.kafka.ivolces.com:9092", false), k.vars(n, ""))
		r := runCommand(t, append([]string{k.ours.producer}, args...), kafkaRunTimeout, false, "", []string{"PERFCLONES_RESULT=" + file})
		if r.rc != 0 {
			t.Fatalf("rc %d\n%s%s", r.rc, r.stdout, r.stderr)
		}
		run := readResult(t, file, "kafka-producer-perf-test")
		final := lastLine(shapes.Lines(r.stdout))
		sent, ok := finalSent(t, shapes.Lines(r.stdout))
		if !ok || len(run.Tests) != 1 {
			t.Fatalf("final line %q, %d tests", final, len(run.Tests))
		}
		test := run.Tests[0]
		if test.Name != "produce" || test.Counts.Operations != sent || test.Counts.Bytes != sent*1000 {
			t.Errorf("test %q: operations %d, bytes %d; printed %d records sent of 1000 bytes", test.Name, test.Counts.Operations, test.Counts.Bytes, sent)
		}
		lat := test.Latency["send"]
		if lat == nil {
			t.Fatal("no send latency")
		}
		h, err := resulttest.Histogram(lat)
		if err != nil {
			t.Fatal(err)
		}
		if h.TotalCount() != test.Counts.Operations {
			t.Errorf("histogram holds %d values, operations %d", h.TotalCount(), test.Counts.Operations)
		}
		// "..., 1 ms 50th, 84 ms 95th, 139 ms 99th, 155 ms 99.9th."
		f := strings.Split(strings.TrimSuffix(final, "."), ", ")
		for i, p := range []float64{0.5, 0.95, 0.99, 0.999} {
			printed, err := strconv.ParseInt(strings.Fields(f[4+i])[0], 10, 64)
			if err != nil {
				t.Fatalf("percentile in %q: %v", final, err)
			}
			rank := int64(p*float64(sent)) + 1
			got := h.ValueAtPercentile(100 * float64(rank) / float64(sent))
			if lo, hi := printed*1000-1001, (printed*1000+1001)*1025/1024+1; got < lo || got > hi {
				t.Errorf("p%v: printed %d ms, histogram %d µs at rank %d, want within [%d, %d]", p*100, printed, got, rank, lo, hi)
			}
		}
		if len(test.Intervals) != strings.Count(r.stdout, "ms max latency.\n") {
			t.Errorf("%d intervals, %d window lines", len(test.Intervals), strings.Count(r.stdout, "ms max latency.\n"))
		}
	})

	t.Run("consumer", func(t *testing.T) {
		const n = 20000
		k.ensureRecords(t, k.env.SeedTopic, n, 1000)
		file := filepath.Join(dir, "consumer.json")
		args := splitKafkaArgs(t, seedLocal("--topic topic-1 --fetch-size 1048576 --messages 100000 --group group-1 --broker-list kafka-xxxc5y.kafka.ivolces.com:9092", false), k.vars(n, ""))
		r := runCommand(t, append([]string{k.ours.consumer}, args...), kafkaRunTimeout, false, "", []string{"PERFCLONES_RESULT=" + file})
		if r.rc != 0 {
			t.Fatalf("rc %d\n%s%s", r.rc, r.stdout, r.stderr)
		}
		run := readResult(t, file, "kafka-consumer-perf-test")
		f, ok := consumerSummary(shapes.Lines(r.stdout))
		if !ok || len(run.Tests) != 1 {
			t.Fatalf("summary found %v, %d tests\n%s", ok, len(run.Tests), r.stdout)
		}
		test := run.Tests[0]
		if got := strconv.FormatInt(test.Counts.Operations, 10); test.Name != "consume" || got != f[2] {
			t.Errorf("test %q: operations %s, printed nMsg %s", test.Name, got, f[2])
		}
		if mb := strconv.FormatFloat(float64(test.Counts.Bytes)/1048576, 'f', 4, 64); mb != f[0] {
			t.Errorf("bytes %d = %s MB, printed %s", test.Counts.Bytes, mb, f[0])
		}
	})
}

// readResult reads and validates a result file of tool emulating 3.9.
func readResult(t *testing.T, file, tool string) *result.Run {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	run, err := resulttest.Validate(b)
	if err != nil {
		t.Fatalf("%s: %v\n%s", file, err, b)
	}
	if run.Tool != tool || run.Release != "3.9" || run.Ending != "completed" || run.ExitCode != 0 {
		t.Errorf("run: tool %q release %q ending %q exit %d", run.Tool, run.Release, run.Ending, run.ExitCode)
	}
	return run
}

// TestCompatKafkaSignals ends runs of ours by SIGINT and SIGTERM: as the
// Java tools (checked by hand: 3.9.2's producer exits 130 on SIGINT and
// prints nothing more), nothing is printed after the signal, the exit code
// is 128 + the signal, and the result file still holds what was measured.
func TestCompatKafkaSignals(t *testing.T) {
	k := newKafkaTools(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		bin  string
		args string
		sig  syscall.Signal
		// lastLine must not be the final line of this shape.
		final string
	}{
		{name: "producer SIGINT", bin: k.ours.producer, sig: syscall.SIGINT, final: producerFinalShape,
			args: "--topic topic-1 --num-records 100000 --throughput 1000 --record-size 100 --producer-props bootstrap.servers=$SINGLE"},
		{name: "producer SIGTERM", bin: k.ours.producer, sig: syscall.SIGTERM, final: producerFinalShape,
			args: "--topic topic-1 --num-records 100000 --throughput 1000 --record-size 100 --producer-props bootstrap.servers=$SINGLE"},
		{name: "consumer SIGINT", bin: k.ours.consumer, sig: syscall.SIGINT, final: consumerSummaryShape,
			args: "--topic compat-no-such-topic --messages 10 --timeout 60000 --broker-list $SINGLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			cmd := exec.Command(tc.bin, splitKafkaArgs(t, tc.args, k.vars(0, ""))...)
			cmd.Env = append(os.Environ(), "PERFCLONES_RESULT="+file)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("no exit within 15 s of %v", tc.sig)
			}
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 128+int(tc.sig) {
				t.Errorf("exit: %v, want status %d", err, 128+int(tc.sig))
			}
			if l := kafkaMasker.Mask(lastLine(shapes.Lines(stdout.String()))); l == tc.final {
				t.Errorf("printed its final line after %v:\n%s", tc.sig, stdout.String())
			}
			for _, l := range shapes.Lines(stderr.String()) {
				if !log4jLineRe.MatchString(l) {
					t.Errorf("stderr: %q (Java prints nothing on a signal)", l)
				}
			}
			b, rerr := os.ReadFile(file)
			if rerr != nil {
				t.Fatal(rerr)
			}
			run, verr := resulttest.Validate(b)
			if verr != nil {
				t.Fatalf("%v\n%s", verr, b)
			}
			if run.Ending != "interrupted" || run.ExitCode != 128+int(tc.sig) || len(run.Tests) != 1 {
				t.Errorf("result: ending %q, exit %d, %d tests", run.Ending, run.ExitCode, len(run.Tests))
			}
			if tc.bin == k.ours.producer && run.Tests[0].Counts.Operations == 0 {
				t.Errorf("no acknowledged record in the result after 3 s at 1000 records/s")
			}
		})
	}
}
