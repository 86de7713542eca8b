package redisbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfclones/perfclones/internal/latency"
)

// reportInput is everything a report prints; formatting never touches the network.
type reportInput struct {
	opts        *Options
	result      *benchmarkResult
	payloadSize int
	config      *serverConfig   // standalone: the server's CONFIG, nil when unavailable
	cluster     []*serverConfig // cluster: each master's CONFIG (nil entries are skipped)
	threads     int
	cleanWidth  int // bytes of the last progress line, overwritten before the report
}

// summary holds the numbers of the summary table, each computed in float32
// exactly as the C tool does, so that the printed digits agree.
type summary struct {
	rps                          float32
	avg, min, p50, p95, p99, max float32
}

func summarize(res *benchmarkResult) summary {
	h := res.latency
	if h.TotalCount() == 0 {
		// Only -n 0 gets here (the C tool never finishes such a run): report
		// zero latencies rather than HdrHistogram's sentinels for "no value".
		return summary{rps: float32(res.finished) / (float32(res.elapsedMs) / 1000.0)}
	}
	return summary{
		rps: float32(res.finished) / (float32(res.elapsedMs) / 1000.0),
		avg: float32(h.Mean() / 1000.0),
		min: float32(h.Min()) / 1000.0,
		p50: float32(h.ValueAtPercentile(50.0)) / 1000.0,
		p95: float32(h.ValueAtPercentile(95.0)) / 1000.0,
		p99: float32(h.ValueAtPercentile(99.0)) / 1000.0,
		max: float32(h.Max()) / 1000.0,
	}
}

// formatReport renders the lines printed after a benchmark: the full report,
// the -q line or the --csv row.
func formatReport(in *reportInput) string {
	o := in.opts
	res := in.result
	s := summarize(res)
	var b strings.Builder
	switch {
	case o.CSV:
		fmt.Fprintf(&b, "\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"\n", res.title,
			cFloat(float64(s.rps), 2), cFloat(float64(s.avg), 3), cFloat(float64(s.min), 3),
			cFloat(float64(s.p50), 3), cFloat(float64(s.p95), 3), cFloat(float64(s.p99), 3), cFloat(float64(s.max), 3))
	case o.Quiet:
		b.WriteString(cleanLine(in.cleanWidth))
		fmt.Fprintf(&b, "%s: %s requests per second, p50=%s msec\n", res.title, cFloat(float64(s.rps), 2), cFloat(float64(s.p50), 3))
	default:
		b.WriteString(cleanLine(in.cleanWidth))
		fmt.Fprintf(&b, "====== %s ======\n", res.title)
		fmt.Fprintf(&b, "  %d requests completed in %s seconds\n", res.finished, cFloat(float64(float32(res.elapsedMs)/1000), 2))
		fmt.Fprintf(&b, "  %d parallel clients\n", o.Clients)
		fmt.Fprintf(&b, "  %d bytes payload\n", in.payloadSize)
		fmt.Fprintf(&b, "  keep alive: %d\n", o.KeepAlive)
		if o.Cluster {
			fmt.Fprintf(&b, "  cluster mode: yes (%d masters)\n", len(in.cluster))
			for i, cfg := range in.cluster {
				if cfg == nil {
					continue
				}
				save := cfg.save
				if save == "" {
					save = "NONE"
				}
				fmt.Fprintf(&b, "  node [%d] configuration:\n    save: %s\n    appendonly: %s\n", i, save, cfg.appendonly)
			}
		} else if in.config != nil {
			fmt.Fprintf(&b, "  host configuration \"save\": %s\n", in.config.save)
			fmt.Fprintf(&b, "  host configuration \"appendonly\": %s\n", in.config.appendonly)
		}
		if in.threads > 0 {
			fmt.Fprintf(&b, "  multi-thread: yes\n  threads: %d\n", in.threads)
		} else {
			b.WriteString("  multi-thread: no\n")
		}
		b.WriteString("\nLatency by percentile distribution:\n")
		writeLatencyLines(&b, res.latency.PercentileLines())
		b.WriteString("\nCumulative distribution of latencies:\n")
		writeLatencyLines(&b, res.latency.CumulativeLines(100))
		b.WriteString("\nSummary:\n")
		fmt.Fprintf(&b, "  throughput summary: %s requests per second\n", cFloat(float64(s.rps), 2))
		b.WriteString("  latency summary (msec):\n")
		fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n", "avg", "min", "p50", "p95", "p99", "max")
		fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n",
			cFloat(float64(s.avg), 3), cFloat(float64(s.min), 3), cFloat(float64(s.p50), 3),
			cFloat(float64(s.p95), 3), cFloat(float64(s.p99), 3), cFloat(float64(s.max), 3))
	}
	return b.String()
}

func writeLatencyLines(b *strings.Builder, lines []latency.Line) {
	for _, l := range lines {
		// The value is float32 arithmetic in C (int64 / 1000.0f), then printed as a double.
		v := float64(float32(l.Value) / 1000.0)
		fmt.Fprintf(b, "%s%% <= %s milliseconds (cumulative count %d)\n", cFloat(l.Percent, 3), cFloat(v, 3), l.Count)
	}
}

// cFloat formats v as glibc's printf("%.<prec>f") does. Finite values round
// the exact binary value to nearest, as both glibc and Go do; infinities
// print as "inf"/"-inf" and NaN as "-nan", the sign x86's 0/0 produces.
func cFloat(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "-nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
