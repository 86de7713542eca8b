package redisbench

import (
	"math"
	"testing"

	"github.com/perfclones/perfclones/internal/latency"
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
