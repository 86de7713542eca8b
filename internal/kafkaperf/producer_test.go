package kafkaperf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/javaprops"
)

// recordAll feeds acks (latency ms, ack time ms) into a Stats built at
// startMs and returns the lines its printer prints, each window line
// printed at the time of the ack that ended the window.
func recordAll(s *sendStats, cuts chan windowCut, acks [][2]int64) []string {
	var lines []string
	for _, a := range acks {
		s.record(a[0], a[0]*1000, 100, a[1])
		select {
		case c := <-cuts:
			one := make(chan windowCut, 1)
			one <- c
			close(one)
			printWindows(one, func() int64 { return a[1] }, func(l string) { lines = append(lines, l) })
		default:
		}
	}
	return lines
}

func TestProducerStatsLines(t *testing.T) {
	cuts := make(chan windowCut, 8)
	s := newSendStats(4, 5000, time.UnixMilli(1000), cuts)
	// The window is over when the second completion arrives, at 6000.
	lines := recordAll(s, cuts, [][2]int64{{2, 1500}, {4, 6000}, {3, 7000}, {9, 8000}})
	s.rec.Flush()
	lines = append(lines, finalLine(s.snapshot(11000), ""))
	want := []string{
		"2 records sent, 0.4 records/sec (0.00 MB/sec), 3.0 ms avg latency, 4.0 ms max latency.",
		"4 records sent, 0.400000 records/sec (0.00 MB/sec), 4.50 ms avg latency, 9.00 ms max latency, 4 ms 50th, 9 ms 95th, 9 ms 99th, 9 ms 99.9th.",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines:\n%q\nwant\n%q", lines, want)
	}
	if len(s.intervals) != 1 || s.intervals[0].count != 2 || s.intervals[0].endMs != 6000 {
		t.Errorf("intervals = %+v", s.intervals)
	}
	// Every ack is in the histogram, in microseconds.
	if h := s.hist.Snapshot(); h.TotalCount() != 4 || h.Max() < 9000 || h.Max() > 9010 {
		t.Errorf("histogram: %d values, max %d", h.TotalCount(), h.Max())
	}
}

func TestProducerStatsEmpty(t *testing.T) {
	s := newSendStats(10, 5000, time.UnixMilli(0), make(chan windowCut, 1))
	want := "0 records sent, 0.000000 records/sec (0.00 MB/sec), NaN ms avg latency, 0.00 ms max latency, 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th."
	if got := finalLine(s.snapshot(2000), ""); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestSteadyStateBannerAndSuffix(t *testing.T) {
	cuts := make(chan windowCut, 8)
	s := newSendStats(2, 5000, time.UnixMilli(0), cuts)
	s.banner = "In steady state."
	lines := recordAll(s, cuts, [][2]int64{{1, 5000}, {1, 5500}})
	lines = append(lines, finalLine(s.snapshot(6000), " steady state"))
	if len(lines) != 3 || lines[0] != "In steady state." || !strings.HasPrefix(lines[2], "2 steady state records sent,") {
		t.Errorf("lines = %q", lines)
	}
	// A quiet whole-run Stats prints no window lines, but cuts its windows.
	w := newSendStats(2, 1, time.UnixMilli(0), cuts)
	w.quiet.Store(true)
	if lines := recordAll(w, cuts, [][2]int64{{1, 1_000_000}}); len(lines) != 0 || len(w.intervals) != 1 {
		t.Errorf("quiet stats printed %q, %d intervals", lines, len(w.intervals))
	}
}

func TestSamplingAndPercentiles(t *testing.T) {
	tests := []struct {
		numRecords   int64
		wantSampling int64
		wantSlots    int
	}{
		{10, 1, 11},
		{999_999, 1, 1_000_000},
		{1_000_000, 2, 500_001},
		{1_499_999, 2, 750_000},
		{50_000_000, 100, 500_001},
	}
	for _, tt := range tests {
		s := newSendStats(tt.numRecords, 5000, time.UnixMilli(0), nil)
		if s.sampling != tt.wantSampling || len(s.samples) != tt.wantSlots {
			t.Errorf("%d records: sampling %d with %d slots, want %d and %d", tt.numRecords, s.sampling, len(s.samples), tt.wantSampling, tt.wantSlots)
		}
	}
	// Nearest rank, floor index: size 10 picks index 5, 9, 9, 9.
	samples := []int32{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	if got := percentiles(samples, 0.5, 0.95, 0.99, 0.999); !reflect.DeepEqual(got, []int32{6, 10, 10, 10}) {
		t.Errorf("percentiles = %v", got)
	}
	if got := percentiles([]int32{7}, 0.5, 0.999); !reflect.DeepEqual(got, []int32{7, 7}) {
		t.Errorf("one sample: %v", got)
	}
	if samples[0] != 10 {
		t.Error("percentiles must not reorder the caller's samples")
	}
}

func TestParseProducerOptions(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.properties")
	if err := os.WriteFile(cfg, []byte("bootstrap.servers=file:9092\nacks=0\nlinger.ms=7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "--topic t --num-records 100 --throughput -1 --record-size 1024"
	tests := []struct {
		name      string
		args      string
		props     map[string]string
		notices   int
		txn       bool
		txnMs     int64
		throttle  float64
		errSubstr string
	}{
		{name: "seed 000 line", args: base + " --producer-props bootstrap.servers=h:9092 acks=1 batch.size=16384",
			props: map[string]string{"bootstrap.servers": "h:9092", "acks": "1", "batch.size": "16384", "client.id": "perf-producer-client"}, notices: 1, throttle: -1},
		{name: "4.2 spellings", args: base + " --bootstrap-server b:1 --command-property acks=all bootstrap.servers=x:1",
			props: map[string]string{"bootstrap.servers": "b:1", "acks": "all"}, throttle: -1},
		{name: "config file then props", args: base + " --producer.config " + cfg + " --producer-props acks=1",
			props: map[string]string{"bootstrap.servers": "file:9092", "acks": "1", "linger.ms": "7"}, notices: 2, throttle: -1},
		{name: "client id kept", args: base + " --bootstrap-server b:1 --command-property client.id=mine",
			props: map[string]string{"client.id": "mine"}, throttle: -1},
		{name: "fractional throughput", args: "--topic t --num-records 5 --throughput 0.5 --payload-monotonic --bootstrap-server b:1", throttle: 0.5},
		{name: "transactions by duration", args: base + " --bootstrap-server b:1 --transaction-duration-ms 50", txn: true, txnMs: 50, throttle: -1},
		{name: "transactions by id", args: base + " --bootstrap-server b:1 --transactional-id tx",
			props: map[string]string{"transactional.id": "tx"}, txn: true, txnMs: 3000, throttle: -1},
		{name: "transactions by prop", args: base + " --bootstrap-server b:1 --command-property transactional.id=p",
			props: map[string]string{"transactional.id": "p"}, txn: true, txnMs: 3000, throttle: -1},

		{name: "invalid property", args: base + " --producer-props a", errSubstr: "Invalid property: a"},
		{name: "value with equals", args: base + " --producer-props sasl.jaas.config=a=b", errSubstr: "Invalid property: sasl.jaas.config=a=b"},
		{name: "no client config", args: base, errSubstr: "At least one of --bootstrap-server"},
		{name: "zero records", args: "--topic t --num-records 0 --throughput -1 --record-size 1 --bootstrap-server b:1", errSubstr: "should be greater"},
		{name: "warmup too large", args: base + " --bootstrap-server b:1 --warmup-records 100", errSubstr: "--warmup-records"},
		{name: "both prop options", args: base + " --producer-props a=1 --command-property b=2", errSubstr: "cannot be specified together"},
		{name: "bad choice", args: base + " --bootstrap-server b:1 --key-distribution x", errSubstr: "invalid choice"},
		{name: "missing key range", args: base + " --bootstrap-server b:1 --key-distribution random", errSubstr: "--record-key-range is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseProducerOptions(strings.Fields(tt.args), 1000, &kafka44.producer)
			if err == nil {
				err = o.readProps(&kafka44.producer)
			}
			if tt.errSubstr != "" {
				if err == nil || !strings.Contains(fatalText(err), tt.errSubstr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(fatalText(err))
			}
			for k, v := range tt.props {
				if got, _ := o.props.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if len(o.notices) != tt.notices || o.transactional != tt.txn || o.transactionMs != tt.txnMs || o.throughput != tt.throttle {
				t.Errorf("notices %d txn %v/%d throughput %v", len(o.notices), o.transactional, o.transactionMs, o.throughput)
			}
			if tt.name == "transactions by duration" {
				if id, _ := o.props.Get("transactional.id"); !strings.HasPrefix(id, "performance-producer-") || len(id) != len("performance-producer-")+36 {
					t.Errorf("generated transactional.id = %q", id)
				}
			}
		})
	}
}

func fatalText(err error) string {
	var exit *javaopts.Exit
	if errors.As(err, &exit) {
		return exit.Stdout + exit.Stderr
	}
	return err.Error()
}

func TestJavaSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"a=b": {"a", "b"}, "a": {"a"}, "a=": {"a"}, "a=b=c": {"a", "b", "c"}, "=b": {"", "b"}, "": {""}, "=": {}, "a=b=": {"a", "b"},
	} {
		if got := javaopts.JavaSplit(in, "="); !reflect.DeepEqual(got, want) {
			t.Errorf("JavaSplit(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadPayloadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "payloads.txt")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out []string
	values, err := readPayloadFile(path, "\n", "Number of messages read: %d", javaStringSplit, func(l string) { out = append(out, l) })
	if err != nil {
		t.Fatal(err)
	}
	if len(values) != 3 || string(values[2]) != "three" {
		t.Errorf("values = %q", values)
	}
	if len(out) != 2 || out[0] != "Reading payloads from: "+path || out[1] != "Number of messages read: 3" {
		t.Errorf("stdout = %q", out)
	}
	if _, err := readPayloadFile(filepath.Join(dir, "missing"), "\n", "%d", javaStringSplit, func(string) {}); err == nil ||
		fatalText(err) != "Exception in thread \"main\" java.lang.IllegalArgumentException: File does not exist or empty file provided.\n" {
		t.Errorf("missing file: %v", err)
	}
}

// The token counts the real tools print for these files ("Number of
// messages read" in 3.9.2, "Number of records read" in 4.4.0).
func TestPayloadTokens(t *testing.T) {
	for _, tt := range []struct {
		text, delim string
		v39, v44    []string
	}{
		{"a\n\nbb\n\n\n", "\n", []string{"a", "", "bb"}, []string{"a", "", "bb", "", ""}},
		{"\n\n", "\n", nil, []string{""}},
		{"\n", "\n", nil, nil},
		{"x,,y,", ",", []string{"x", "", "y"}, []string{"x", "", "y"}},
		{",x", ",", []string{"", "x"}, []string{"x"}},
		{"a\nb", "\n", []string{"a", "b"}, []string{"a", "b"}},
	} {
		re := regexp.MustCompile(tt.delim)
		if got := javaStringSplit(tt.text, re); !slices.Equal(got, tt.v39) {
			t.Errorf("String.split(%q, %q) = %q, want %q", tt.text, tt.delim, got, tt.v39)
		}
		if got := javaScanner(tt.text, re); !slices.Equal(got, tt.v44) {
			t.Errorf("Scanner(%q, %q) = %q, want %q", tt.text, tt.delim, got, tt.v44)
		}
	}
}

func TestRandomPayloads(t *testing.T) {
	p := newRandomPayloads(100, 0)
	a, b := p.payload(0), p.payload(1)
	if len(a) != 100 || cap(a) != 100 || string(a) == string(b) {
		t.Fatalf("payloads not fresh windows: %q %q", a[:10], b[:10])
	}
	for _, c := range a {
		if c < 'A' || c > 'Z' {
			t.Fatalf("byte %q is not A-Z", c)
		}
	}
	if got := string(monotonicPayloads{}.payload(42)); got != "42" {
		t.Errorf("monotonic payload = %q", got)
	}
}

func TestProducerSettings(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]string
		check func(t *testing.T, s *clientSettings, pc *producerPlan)
		err   string
	}{
		{"java 4.x defaults", nil, func(t *testing.T, s *clientSettings, pc *producerPlan) {
			if pc.acks != -1 || !pc.idempotent || pc.inFlight != 5 {
				t.Errorf("acks=all with idempotence and 5 in flight expected, got acks %d idempotent %v in flight %d", pc.acks, pc.idempotent, pc.inFlight)
			}
			if pc.batchSize != 16384 || pc.maxBatchBytes != 16384 || pc.linger.Milliseconds() != 5 || pc.maxBlock.Milliseconds() != 60000 ||
				pc.deliveryTimeout.Milliseconds() != 120000 || pc.bufferMemory != 33554432 || pc.compressionName != "none" {
				t.Errorf("batch %d/%d linger %v maxBlock %v delivery %v buffer %d compression %s", pc.batchSize, pc.maxBatchBytes,
					pc.linger, pc.maxBlock, pc.deliveryTimeout, pc.bufferMemory, pc.compressionName)
			}
			if !pc.adaptivePartitioning || pc.ignoreKeys || pc.roundRobin {
				t.Errorf("partitioner: adaptive %v ignore keys %v round robin %v", pc.adaptivePartitioning, pc.ignoreKeys, pc.roundRobin)
			}
		}, ""},
		{"seed settings", map[string]string{"acks": "1", "batch.size": "1024", "compression.type": "lz4", "linger.ms": "0"},
			func(t *testing.T, s *clientSettings, pc *producerPlan) {
				// linger.ms=0: send at once; a batch holds one 1 KiB record;
				// five requests in flight, as Java's default.
				if pc.acks != 1 || pc.idempotent || pc.linger != 0 || pc.maxBatchBytes != 1024+batchOverhead ||
					pc.compressionName != "lz4" || pc.inFlight != 5 {
					t.Errorf("acks %d idempotent %v linger %v batch %d compression %s in flight %d", pc.acks, pc.idempotent,
						pc.linger, pc.maxBatchBytes, pc.compressionName, pc.inFlight)
				}
			}, ""},
		{"timeouts", map[string]string{"delivery.timeout.ms": "5000", "request.timeout.ms": "3000", "retries": "3", "max.block.ms": "700"},
			func(t *testing.T, s *clientSettings, pc *producerPlan) {
				if pc.deliveryTimeout.Milliseconds() != 5000 || pc.requestTimeout.Milliseconds() != 3000 || pc.retries != 3 || pc.maxBlock.Milliseconds() != 700 {
					t.Errorf("delivery %v request %v retries %d max block %v", pc.deliveryTimeout, pc.requestTimeout, pc.retries, pc.maxBlock)
				}
			}, ""},
		{"partitioner settings", map[string]string{"partitioner.ignore.keys": "true", "partitioner.adaptive.partitioning.enable": "false",
			"partitioner.class": "org.apache.kafka.clients.producer.RoundRobinPartitioner"},
			func(t *testing.T, s *clientSettings, pc *producerPlan) {
				if pc.adaptivePartitioning || !pc.ignoreKeys || !pc.roundRobin {
					t.Errorf("partitioner: adaptive %v ignore keys %v round robin %v", pc.adaptivePartitioning, pc.ignoreKeys, pc.roundRobin)
				}
			}, ""},
		{"transactional", map[string]string{"transactional.id": "tx-1", "acks": "all"},
			func(t *testing.T, s *clientSettings, pc *producerPlan) {
				if !pc.idempotent || pc.transactionalID != "tx-1" {
					t.Errorf("transactional: idempotent %v id %q", pc.idempotent, pc.transactionalID)
				}
			}, ""},
		{"sasl scram", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p\"w";`},
			func(t *testing.T, s *clientSettings, _ *producerPlan) {
				if s.sasl == nil || s.sasl.Name() != "SCRAM-SHA-512" || s.saslUser != "u" || s.saslPw != `p\"w` {
					t.Errorf("sasl = %v %q %q", s.sasl, s.saslUser, s.saslPw)
				}
			}, ""},
		{"sasl plain over tls", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`},
			func(t *testing.T, s *clientSettings, _ *producerPlan) {
				if s.sasl == nil || s.sasl.Name() != "PLAIN" || s.tls == nil {
					t.Errorf("sasl %v tls %v", s.sasl, s.tls)
				}
			}, ""},
		{"bad acks", map[string]string{"acks": "2"}, nil, "Invalid value 2 for configuration acks"},
		{"bad number", map[string]string{"batch.size": "x"}, nil, "Invalid value x for configuration batch.size: Not a number of type INT"},
		{"idempotence needs acks all", map[string]string{"acks": "1", "enable.idempotence": "true"}, nil, "Must set acks to all"},
		{"bad protocol", map[string]string{"security.protocol": "TLS"}, nil, "Invalid value TLS for configuration security.protocol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := javaprops.New()
			p.Set("bootstrap.servers", "127.0.0.1:9092")
			for k, v := range tt.props {
				p.Set(k, v)
			}
			s, err := newClientSettings(producerClient, p, func() string { return "T" })
			pc := &producerPlan{}
			if err == nil {
				err = s.applyProducer(pc, 1024, &kafka44.producer)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pc.client, pc.topic = s, "t"
			if _, verr := kgo.NewClient(pc.producerClientOptions()...); verr != nil {
				t.Fatalf("franz-go rejects the configuration: %v", verr)
			}
			tt.check(t, s, pc)
		})
	}
}

func TestUnknownConfigWarning(t *testing.T) {
	p := javaprops.New()
	p.Set("bootstrap.servers", "h:1")
	p.Set("linger.ms", "1")
	p.Set("foo.bar", "1")
	p.Set("ssl.truststore.type", "PEM")
	s, err := newClientSettings(producerClient, p, func() string { return "2026-01-01 00:00:00,000" })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[2026-01-01 00:00:00,000] WARN The configuration 'foo.bar' was supplied but isn't a known config. (org.apache.kafka.clients.producer.ProducerConfig)"}
	if !reflect.DeepEqual(s.warnings, want) {
		t.Errorf("warnings = %q", s.warnings)
	}
}

func TestFormatMetrics(t *testing.T) {
	got := formatMetrics([]metric{
		{group: "producer-metrics", name: "record-send-total", tags: [][2]string{{"client-id", "c"}}, value: 3.0},
		{group: "app-info", name: "version", tags: [][2]string{{"client-id", "c"}}, value: "1.0"},
	})
	want := "\n" +
		"Metric Name                                        Value\n" +
		"app-info:version:{client-id=c}                   : 1.0\n" +
		"producer-metrics:record-send-total:{client-id=c} : 3.000\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// buffer.memory bounds the bytes of records sent and not yet completed: a
// send that would overflow it waits for completions, at most max.block.ms.
func TestWaitForSpace(t *testing.T) {
	r := &producerRun{plan: &producerPlan{bufferMemory: 100, maxBlock: 80 * time.Millisecond}, space: make(chan struct{}, 1)}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	r.outstanding.Store(90)
	start := time.Now()
	if r.waitForSpace(context.Background(), 20, timer) {
		t.Fatal("110 bytes fit in a buffer.memory of 100")
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > time.Second {
		t.Errorf("gave up after %v, want max.block.ms = 80 ms", d)
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		for !r.waiting.Load() {
			time.Sleep(time.Millisecond)
		}
		r.outstanding.Add(-50) // a completion, as complete() signals it
		r.space <- struct{}{}
	}()
	if !r.waitForSpace(context.Background(), 20, timer) {
		t.Error("a completion made room, but the send still gave up")
	}
	if r.waiting.Load() {
		t.Error("still waiting")
	}
}

// The settings the Java producer refuses, with its texts (checked against
// the 3.9.2 and 4.4.0 jars): ConfigDef's bounds, its boolean parse, and the
// checks made while the producer is built.
func TestProducerConfigExceptions(t *testing.T) {
	const ce = `Exception in thread "main" org.apache.kafka.common.config.ConfigException: `
	both := []string{"3.9", "4.4"}
	tests := []struct {
		prop string
		rels []string
		want []string // stderr lines, in order
	}{
		{"batch.size=-1", both, []string{ce + "Invalid value -1 for configuration batch.size: Value must be at least 0"}},
		{"linger.ms=-1", both, []string{ce + "Invalid value -1 for configuration linger.ms: Value must be at least 0"}},
		{"max.in.flight.requests.per.connection=0", both, []string{ce + "Invalid value 0 for configuration max.in.flight.requests.per.connection: Value must be at least 1"}},
		{"enable.idempotence=maybe", both, []string{ce + "Invalid value maybe for configuration enable.idempotence: Expected value to be either true or false"}},
		{"retries=-1", both, []string{ce + "Invalid value -1 for configuration retries: Value must be at least 0"}},
		{"max.block.ms=-1", both, []string{ce + "Invalid value -1 for configuration max.block.ms: Value must be at least 0"}},
		{"buffer.memory=-1", both, []string{ce + "Invalid value -1 for configuration buffer.memory: Value must be at least 0"}},
		{"request.timeout.ms=-1", both, []string{ce + "Invalid value -1 for configuration request.timeout.ms: Value must be at least 0"}},
		{"delivery.timeout.ms=1000", both, []string{
			`Exception in thread "main" org.apache.kafka.common.KafkaException: Failed to construct kafka producer`,
			"Caused by: org.apache.kafka.common.config.ConfigException: delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms"}},
		{"max.in.flight.requests.per.connection=6", []string{"4.4"}, []string{ce + "To use the idempotent producer, max.in.flight.requests.per.connection must be set to at most 5. Current value is 6."}},
		{"max.in.flight.requests.per.connection=6 enable.idempotence=true", []string{"3.9"}, []string{ce + "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."}},
	}
	for _, tt := range tests {
		for _, rel := range tt.rels {
			t.Run(rel+" "+tt.prop, func(t *testing.T) {
				t.Parallel()
				args := append(strings.Fields("--topic t --num-records 10 --record-size 10 --throughput -1 --producer-props bootstrap.servers=127.0.0.1:1"), strings.Fields(tt.prop)...)
				_, errOut, code := runMain(t, ProducerMain, map[string]string{"PERFCLONES_KAFKA_VERSION": rel}, args...)
				if code != 1 || !strings.Contains(errOut, strings.Join(tt.want, "\n")+"\n") {
					t.Errorf("code %d (want 1)\nstderr %q\nwant it to hold %q", code, errOut, tt.want)
				}
			})
		}
	}
	// 3.9 turns the default idempotence off instead, with a warning.
	settings := javaprops.New()
	settings.Set("bootstrap.servers", "127.0.0.1:1")
	settings.Set("max.in.flight.requests.per.connection", "6")
	s, err := newClientSettings(producerClient, settings, func() string { return "T" })
	if err != nil {
		t.Fatal(err)
	}
	pc := &producerPlan{}
	if err := s.applyProducer(pc, 10, &kafka39.producer); err != nil || pc.idempotent ||
		len(s.warnings) != 1 || !strings.Contains(s.warnings[0], "WARN Idempotence will be disabled because max.in.flight.requests.per.connection is set to 6") {
		t.Errorf("3.9, 6 in flight: err %v idempotent %v warnings %q", err, pc.idempotent, s.warnings)
	}
}

// The properties decide whether a run is transactional (4.x: a
// transactional id alone makes it so); the plan must follow them.
func TestProducerPlanTransactional(t *testing.T) {
	for _, tt := range []struct {
		rel, args string
		want      bool
	}{
		{"4.4", "--transaction-duration-ms 500", true},
		{"4.4", "--transactional-id tx-2", true},
		{"4.4", "", false},
		{"3.9", "--transaction-duration-ms 500", true},
		{"3.9", "", false},
	} {
		rel := &Releases.Must(tt.rel).Diff.producer
		args := append(strings.Fields("--topic t --num-records 10 --record-size 10 --throughput -1 --producer-props bootstrap.servers=127.0.0.1:1"), strings.Fields(tt.args)...)
		o, err := parseProducerOptions(args, 80, rel)
		if err != nil {
			t.Fatal(fatalText(err))
		}
		p, err := newProducerPlan(o, rel, func(string) {}, func(string) {})
		if err != nil {
			t.Fatal(fatalText(err))
		}
		if p.transactional != tt.want || (p.transactionalID != "") != tt.want || p.idempotent != (tt.rel != "2.7") {
			t.Errorf("%s %q: transactional %v id %q idempotent %v, want transactional %v", tt.rel, tt.args, p.transactional, p.transactionalID, p.idempotent, tt.want)
		}
	}
}
