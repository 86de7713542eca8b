package kafkaperf

import (
	"fmt"
	"slices"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"

	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/result"
)

// printWindows is the printer goroutine: it prints each window the
// acknowledging goroutine cuts, as ProducerPerformance's printWindow,
// keeps it for the result file, and returns when cuts is closed. nowMs
// is read at print time: Java's window line measures its elapsed time to
// when it is printed, not to the ack that ended the window.
func printWindows(cuts <-chan windowCut, nowMs func() int64, out func(string)) {
	for c := range cuts {
		s := c.stats
		s.intervals = append(s.intervals, c)
		if !c.print {
			continue
		}
		if s.banner != "" {
			out(s.banner)
			s.banner = ""
		}
		out(windowLine(c, nowMs()))
	}
}

// windowLine is the progress line of one window, printed at nowMs.
func windowLine(c windowCut, nowMs int64) string {
	elapsed := nowMs - c.startMs
	recsPerSec := 1000.0 * float64(c.count) / float64(elapsed)
	mbPerSec := 1000.0 * float64(c.bytes) / float64(elapsed) / (1024.0 * 1024.0)
	return fmt.Sprintf("%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency.",
		c.count, javafmt.Fixed(recsPerSec, 1), javafmt.Fixed(mbPerSec, 2),
		javafmt.Fixed(float64(c.totalLatency)/float64(c.count), 1), javafmt.Fixed(float64(c.maxLat), 1))
}

// sendSnapshot is one Stats at the end of the run.
type sendSnapshot struct {
	count, bytes, totalLatency, maxLatency int64
	elapsedMs                              int64
	// percentiles are Java's, from its sampled integer-ms latencies:
	// 50th, 95th, 99th and 99.9th.
	percentiles [4]int32
	latency     *latency.Snapshot // every ack, in microseconds
}

// printedPercentiles are the percentiles the final line prints.
var printedPercentiles = []float64{0.5, 0.95, 0.99, 0.999}

// snapshot reads the Stats once the run is over, at nowMs.
func (s *sendStats) snapshot(nowMs int64) sendSnapshot {
	snap := sendSnapshot{
		count: s.count.Load(), bytes: s.bytes.Load(), totalLatency: s.totalLatency.Load(), maxLatency: s.maxLatency.Load(),
		elapsedMs: nowMs - s.startMs,
		latency:   s.hist.Snapshot(),
	}
	copy(snap.percentiles[:], percentiles(s.samples[:s.nSamples], printedPercentiles...))
	return snap
}

// finalLine is the summary line; suffix is "" or " steady state".
func finalLine(s sendSnapshot, suffix string) string {
	recsPerSec := 1000.0 * float64(s.count) / float64(s.elapsedMs)
	mbPerSec := 1000.0 * float64(s.bytes) / float64(s.elapsedMs) / (1024.0 * 1024.0)
	p := s.percentiles
	return fmt.Sprintf("%d%s records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		s.count, suffix, javafmt.Fixed(recsPerSec, 6), javafmt.Fixed(mbPerSec, 2),
		javafmt.Fixed(float64(s.totalLatency)/float64(s.count), 2), javafmt.Fixed(float64(s.maxLatency), 2),
		p[0], p[1], p[2], p[3])
}

// percentiles sorts the samples and picks the value at floor(p*size), the
// original's nearest-rank rule; no samples give 0.
func percentiles(samples []int32, ps ...float64) []int32 {
	out := make([]int32, len(ps))
	if len(samples) == 0 {
		return out
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	for i, p := range ps {
		out[i] = sorted[int(p*float64(len(sorted)))]
	}
	return out
}

// producerTest is one Stats as a test of the result file. errors are the
// failures by exception class (the whole run's; nil for the steady state).
func producerTest(name string, s *sendStats, snap sendSnapshot, errs map[string]int64) (result.Test, error) {
	t := result.Test{
		Name:           name,
		Start:          msTime(s.startMs),
		End:            msTime(s.startMs + snap.elapsedMs),
		ElapsedSeconds: float64(snap.elapsedMs) / 1000,
		Counts:         result.Counts{Operations: snap.count, Bytes: snap.bytes, Errors: errs},
	}
	for _, c := range s.intervals {
		t.Intervals = append(t.Intervals, result.Interval{
			EndSeconds:      float64(c.endMs-s.startMs) / 1000,
			DurationSeconds: float64(c.endMs-c.startMs) / 1000,
			Operations:      c.count,
			Bytes:           c.bytes,
		})
	}
	lat, err := result.LatencyOf(snap.latency)
	if err != nil {
		return t, err
	}
	t.Latency = map[string]*result.Latency{"send": lat}
	return t, nil
}

// producerMetrics reports the producer's numbers under the Java client's
// metric names where sarama measures the same thing. The Java client has
// many more; which names appear cannot match it, only the layout does.
func producerMetrics(r *producerRun, cfg *sarama.Config) []metric {
	tags := [][2]string{{"client-id", cfg.ClientID}}
	m := func(name string, v any) metric {
		return metric{group: "producer-metrics", name: name, tags: tags, value: v}
	}
	out := []metric{
		m("record-send-total", float64(r.acked.Load()+r.failed.Load())),
		m("record-error-total", float64(r.failed.Load())),
	}
	reg := cfg.MetricRegistry
	if h, ok := reg.Get("batch-size").(metrics.Histogram); ok {
		out = append(out, m("batch-size-avg", h.Mean()), m("batch-size-max", float64(h.Max())))
	}
	if h, ok := reg.Get("records-per-request").(metrics.Histogram); ok {
		out = append(out, m("records-per-request-avg", h.Mean()))
	}
	if h, ok := reg.Get("request-latency-in-ms").(metrics.Histogram); ok {
		out = append(out, m("request-latency-avg", h.Mean()), m("request-latency-max", float64(h.Max())))
	}
	if h, ok := reg.Get("compression-ratio").(metrics.Histogram); ok {
		out = append(out, m("compression-rate-avg", h.Mean()/100))
	}
	for java, sarama := range map[string]string{
		"record-send": "record-send-rate", "outgoing-byte": "outgoing-byte-rate", "incoming-byte": "incoming-byte-rate",
		"request": "request-rate", "response": "response-rate",
	} {
		if meter, ok := reg.Get(sarama).(metrics.Meter); ok {
			out = append(out, m(java+"-rate", meter.RateMean()))
			if java != "record-send" {
				out = append(out, m(java+"-total", float64(meter.Count())))
			}
		}
	}
	return out
}
