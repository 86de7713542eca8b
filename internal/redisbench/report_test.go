package redisbench

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/lineout"
)

// snapshotOf records values (microseconds) the way a benchmark does.
func snapshotOf(precision int, values ...int64) *latency.Snapshot {
	h := latency.New(histogramLowest, histogramHighest, precision)
	for _, v := range values {
		h.Record(v)
	}
	return h.Snapshot()
}

// The spec's real 7.0.15 sample for -n 10 -c 1 -t get.
var smallGetValues = []int64{16, 17, 18, 19, 20, 21, 23, 55, 71, 3831}

func TestFormatReportDefault(t *testing.T) {
	o := defaultOptions()
	o.Clients = 1
	in := &reportInput{
		cfg:        newReportConfig(&o),
		result:     &benchmarkResult{spec: benchmarkSpec{title: "GET", payloadSize: 3}, finished: 10, elapsedMs: 5, latency: snapshotOf(3, smallGetValues...)},
		config:     &serverConfig{save: "", appendonly: "no"},
		cleanWidth: 59,
	}
	want := "                                                           \r====== GET ======\n" +
		"  10 requests completed in 0.00 seconds\n" +
		"  1 parallel clients\n" +
		"  3 bytes payload\n" +
		"  keep alive: 1\n" +
		"  host configuration \"save\": \n" +
		"  host configuration \"appendonly\": no\n" +
		"  multi-thread: no\n" +
		"\n" +
		"Latency by percentile distribution:\n" +
		"0.000% <= 0.023 milliseconds (cumulative count 7)\n" +
		"75.000% <= 0.055 milliseconds (cumulative count 8)\n" +
		"87.500% <= 0.071 milliseconds (cumulative count 9)\n" +
		"93.750% <= 3.831 milliseconds (cumulative count 10)\n" +
		"100.000% <= 3.831 milliseconds (cumulative count 10)\n" +
		"\n" +
		"Cumulative distribution of latencies:\n" +
		"90.000% <= 0.103 milliseconds (cumulative count 9)\n" +
		"100.000% <= 4.103 milliseconds (cumulative count 10)\n" +
		"\n" +
		"Summary:\n" +
		"  throughput summary: 2000.00 requests per second\n" +
		"  latency summary (msec):\n" +
		"          avg       min       p50       p95       p99       max\n" +
		"        0.409     0.016     0.023     3.831     3.831     3.831\n"
	if got := formatReport(in); got != want {
		t.Errorf("report:\n%q\nwant:\n%q", got, want)
	}
}

func TestFormatReportVariants(t *testing.T) {
	snap := snapshotOf(3, smallGetValues...)
	tests := []struct {
		name string
		edit func(o *reportConfig, in *reportInput)
		want string
	}{
		{"quiet", func(o *reportConfig, in *reportInput) { o.quiet = true },
			" \rGET: 2000.00 requests per second, p50=0.023 msec\n"},
		{"csv", func(o *reportConfig, in *reportInput) { o.csv = true },
			`"GET","2000.00","0.409","0.016","0.023","3.831","3.831","3.831"` + "\n"},
		{"csv title is not escaped", func(o *reportConfig, in *reportInput) {
			o.csv = true
			in.result.spec.title = `set k "v"`
		}, `"set k "v"","2000.00","0.409","0.016","0.023","3.831","3.831","3.831"` + "\n"},
		{"zero elapsed gives inf", func(o *reportConfig, in *reportInput) { o.quiet = true; in.result.elapsedMs = 0 },
			" \rGET: inf requests per second, p50=0.023 msec\n"},
		{"float32 rps", func(o *reportConfig, in *reportInput) {
			o.quiet = true
			in.result.finished, in.result.elapsedMs = 20000, 34
		}, " \rGET: 588235.25 requests per second, p50=0.023 msec\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			in := &reportInput{cfg: newReportConfig(&o), result: &benchmarkResult{spec: benchmarkSpec{title: "GET"}, finished: 10, elapsedMs: 5, latency: snap}}
			tt.edit(&in.cfg, in)
			if got := formatReport(in); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestFormatReportClusterAndThreads(t *testing.T) {
	o := defaultOptions()
	o.Cluster = true
	in := &reportInput{
		cfg:     newReportConfig(&o),
		result:  &benchmarkResult{spec: benchmarkSpec{title: "SET", payloadSize: 3}, finished: 1, elapsedMs: 0, latency: snapshotOf(3, 39)},
		cluster: []*serverConfig{{save: "", appendonly: "no"}, nil, {save: "3600 1", appendonly: "yes"}},
		threads: 3,
	}
	want := " \r====== SET ======\n" +
		"  1 requests completed in 0.00 seconds\n" +
		"  50 parallel clients\n" +
		"  3 bytes payload\n" +
		"  keep alive: 1\n" +
		"  cluster mode: yes (3 masters)\n" +
		"  node [0] configuration:\n" +
		"    save: NONE\n" +
		"    appendonly: no\n" +
		"  node [2] configuration:\n" +
		"    save: 3600 1\n" +
		"    appendonly: yes\n" +
		"  multi-thread: yes\n" +
		"  threads: 3\n" +
		"\n" +
		"Latency by percentile distribution:\n" +
		"0.000% <= 0.039 milliseconds (cumulative count 1)\n" +
		"100.000% <= 0.039 milliseconds (cumulative count 1)\n" +
		"\n" +
		"Cumulative distribution of latencies:\n" +
		"100.000% <= 0.103 milliseconds (cumulative count 1)\n" +
		"\n" +
		"Summary:\n" +
		"  throughput summary: inf requests per second\n" +
		"  latency summary (msec):\n" +
		"          avg       min       p50       p95       p99       max\n" +
		"        0.036     0.032     0.039     0.039     0.039     0.039\n"
	if got := formatReport(in); got != want {
		t.Errorf("report:\n%q\nwant:\n%q", got, want)
	}
}

func TestCFloat(t *testing.T) {
	tests := []struct {
		v    float64
		prec int
		want string
	}{
		{math.NaN(), 3, "-nan"},
		{math.Inf(1), 2, "inf"},
		{math.Inf(-1), 1, "-inf"},
		{0.125, 2, "0.12"}, // an exact binary tie rounds to even, as glibc does
		{0.375, 2, "0.38"}, // likewise, upwards to even
		{2.675, 2, "2.67"}, // 2.675 is just below in binary
		{rps(20000, 34), 2, "588235.25"},
		{1e6 / 3, 1, "333333.3"},
	}
	for _, tt := range tests {
		if got := cFloat(tt.v, tt.prec); got != tt.want {
			t.Errorf("cFloat(%v, %d) = %q, want %q", tt.v, tt.prec, got, tt.want)
		}
	}
}

func TestCleanLine(t *testing.T) {
	if cleanLine(0) != " \r" || cleanLine(3) != "   \r" {
		t.Errorf("cleanLine = %q %q", cleanLine(0), cleanLine(3))
	}
}

// rps computes requests per second in float32 as the C tool does.
func rps(finished, ms int64) float64 {
	return float64(float32(finished) / (float32(ms) / 1000.0))
}

func TestClusterBanner(t *testing.T) {
	nodes := []*clusterNode{
		{name: "aaa", ep: endpoint{host: "127.0.0.1", port: 7101}},
		{name: "bbb", ep: endpoint{host: "10.0.0.2", port: 7102}},
	}
	want := "Cluster has 2 master nodes:\n\nMaster 0: aaa 127.0.0.1:7101\nMaster 1: bbb 10.0.0.2:7102\n\n"
	if got := clusterBanner(nodes); got != want {
		t.Errorf("banner %q, want %q", got, want)
	}
	if idleBanner(0) != "Creating 0 idle connections and waiting forever (Ctrl+C when done)\n" || idleTick(3) != "clients: 3\r" {
		t.Errorf("idle lines %q %q", idleBanner(0), idleTick(3))
	}
}

func TestProgressIntervals(t *testing.T) {
	tests := []struct {
		name     string
		csv      bool
		ticks    []progressSnapshot
		replies  int64 // counted when the test stopped
		wantOps  []int64
		wantLine string // the last progress line printed, "" for none
	}{
		{name: "two ticks and the rest", ticks: []progressSnapshot{{finished: 10, tickSum: 1000, tickCount: 10}, {finished: 25, tickSum: 300, tickCount: 15}},
			replies: 40, wantOps: []int64{10, 15, 15}, wantLine: "avg_msec=0.020 (overall: 0.052)\r"},
		{name: "csv prints nothing but counts", csv: true, ticks: []progressSnapshot{{finished: 7}}, replies: 9, wantOps: []int64{7, 2}},
		{name: "no tick", replies: 5, wantOps: []int64{5}},
		{name: "nothing after the last tick", ticks: []progressSnapshot{{finished: 3, tickSum: 30, tickCount: 3}},
			replies: 3, wantOps: []int64{3, 0}, wantLine: "avg_msec=0.010 (overall: 0.010)\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			wall := clock.NewWall()
			p := newProgressPrinter(lineout.New(&out), wall, tt.csv)
			p.beginTest(benchmarkSpec{title: "SET", requestBytes: 3}, 0)
			p.runStartMs, p.lastTickMs, p.startMs = wall.Ms(), wall.Ms(), wall.Ms()
			for _, s := range tt.ticks {
				p.tick(s)
			}
			iv := p.endTest(&benchmarkResult{replies: tt.replies, elapsedMs: 0})
			var ops []int64
			for _, i := range iv {
				ops = append(ops, i.Operations)
				if i.Bytes != 3*i.Operations || i.DurationSeconds < 0 || i.EndSeconds < 0 {
					t.Errorf("interval %+v", i)
				}
			}
			if !reflect.DeepEqual(ops, tt.wantOps) {
				t.Errorf("interval operations %v, want %v", ops, tt.wantOps)
			}
			if tt.wantLine == "" {
				if out.Len() != 0 {
					t.Errorf("printed %q", out.String())
				}
			} else if !strings.HasSuffix(out.String(), tt.wantLine) || !strings.HasPrefix(out.String(), " \rSET: rps=") {
				t.Errorf("printed %q, want it to end with %q", out.String(), tt.wantLine)
			}
		})
	}
}

func TestResultTest(t *testing.T) {
	res := &benchmarkResult{
		spec:     benchmarkSpec{title: "MSET (10 keys)", requestBytes: 30},
		finished: 10, replies: 10, elapsedMs: 1500,
		latency:  snapshotOf(3, smallGetValues...),
		failures: []*requestFailure{{what: serverReply, reply: "ERR unknown command 'x'"}, {what: nodeReply, reply: "WRONGTYPE Operation"}, {what: serverClosed}},
	}
	got, err := resultTest(res, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := got.Latency["request"]
	if got.Name != "MSET (10 keys)" || got.Counts.Operations != 10 || got.Counts.Bytes != 300 || !reflect.DeepEqual(got.Counts.Errors, map[string]int64{"ERR": 1, "WRONGTYPE": 1, "connection closed": 1}) ||
		got.ElapsedSeconds != 1.5 || l == nil || l.Count != 10 || l.Max != res.latency.Max() || l.Percentiles["50"] != res.latency.ValueAtPercentile(50) {
		t.Errorf("result test %+v, latency %+v", got, l)
	}
}

func TestFailureText(t *testing.T) {
	ep := endpoint{host: "127.0.0.1", port: 7001}
	tests := []struct {
		f          requestFailure
		text, kind string
	}{
		{requestFailure{what: serverReply, reply: "NOAUTH Authentication required."}, "Error from server: NOAUTH Authentication required.", "NOAUTH"},
		{requestFailure{what: nodeReply, ep: ep, reply: "ERR x"}, "Error from server 127.0.0.1:7001: ERR x", "ERR"},
		{requestFailure{what: clusterDown, ep: ep, reply: "CLUSTERDOWN The cluster is down"}, "Error from server 127.0.0.1:7001: CLUSTERDOWN The cluster is down.", ""},
		{requestFailure{what: serverClosed}, "Error: Server closed the connection", "connection closed"},
		{requestFailure{what: protocolError}, "Error: Protocol error", "protocol error"},
		{requestFailure{what: connectionError, err: syscall.ECONNRESET}, "Error: Connection reset by peer", "connection error"},
		{requestFailure{what: writeError, err: syscall.ECONNRESET}, "Error writing to the server: Connection reset by peer", ""},
		{requestFailure{what: allDisconnected}, "All clients disconnected... aborting.", "connection error"},
		{requestFailure{what: slotsChanged}, "WARNING: Cluster slots configuration changed, fetching new one...", ""},
		{requestFailure{what: setupFailed, err: &connectError{addr: "h:1", reason: "Connection refused"}}, "Could not connect to Redis at h:1: Connection refused", "connect"},
	}
	for _, tt := range tests {
		if got := tt.f.Error(); got != tt.text {
			t.Errorf("text %q, want %q", got, tt.text)
		}
		if got := tt.f.kind(); got != tt.kind {
			t.Errorf("%q: kind %q, want %q", tt.text, got, tt.kind)
		}
	}
}
