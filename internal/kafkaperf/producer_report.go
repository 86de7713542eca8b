package kafkaperf

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/result"
)

// maxLatencySamples bounds the latencies kept for the printed percentiles,
// as in the original: every sampling-th completion is kept, at most about
// 500,000.
const maxLatencySamples = 500000

// Latencies are recorded in microseconds, from 1 µs up to a day (a longer
// one counts as a day).
const (
	histogramLowest  = 1
	histogramHighest = 24 * 3600 * 1_000_000
	histogramDigits  = 3
)

// sendStats is what ProducerPerformance's Stats counts: the whole run, or
// the steady state after the warm-up records. Only the goroutine that
// receives acknowledgements writes it (record), under a lock that the
// reader of the snapshot takes too; the printer reads the window cuts it
// sends.
type sendStats struct {
	startMs  int64
	startNs  int64 // the same in Unix nanoseconds: records sent from then on belong here
	interval int64 // ms between window lines

	// Totals of the successful sends, in Java's integer milliseconds.
	count, bytes, totalLatency, maxLatency int64
	// hist holds every acknowledged send's latency in microseconds; rec
	// is the acknowledging goroutine's recorder.
	hist *latency.Histogram
	rec  *latency.Recorder
	// Java's sample of integer-ms latencies for the printed percentiles:
	// every sampling-th successful completion, the first one included;
	// untilSample counts the completions before the next kept one.
	sampling    int64
	samples     []int32
	nSamples    int
	untilSample int64

	// window is the current reporting window, the acknowledging
	// goroutine's alone; cut hands a finished one to the printer.
	window windowCut
	cuts   chan<- windowCut
	// quiet stops this Stats' window lines (the whole run's, once the
	// steady state has begun); its windows are still cut and recorded.
	quiet atomic.Bool
	// banner is printed once before the first window line ("In steady
	// state."); the printer alone reads and clears it.
	banner string
	// intervals are the windows cut, appended by the printer.
	intervals []windowCut
}

// windowCut is one finished reporting window.
type windowCut struct {
	stats                              *sendStats
	startMs, endMs                     int64 // the window's start; the ack that ended it
	count, bytes, totalLatency, maxLat int64
	print                              bool
}

func newSendStats(numRecords, intervalMs int64, now time.Time, cuts chan<- windowCut) *sendStats {
	nowMs := now.UnixMilli()
	sampling := int64(1)
	if numRecords > 0 {
		sampling = numRecords / min(numRecords, maxLatencySamples)
	}
	h := latency.New(histogramLowest, histogramHighest, histogramDigits)
	return &sendStats{
		startMs:  nowMs,
		startNs:  now.UnixNano(),
		interval: intervalMs,
		hist:     h,
		rec:      h.NewRecorder(),
		sampling: sampling,
		samples:  make([]int32, max(numRecords/sampling+1, 0)),
		window:   windowCut{startMs: nowMs},
		cuts:     cuts,
	}
}

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

// snapshot reads the Stats once the run is over, at nowMs, holding the
// lock its writer holds.
func (s *sendStats) snapshot(nowMs int64) sendSnapshot {
	snap := sendSnapshot{
		count: s.count, bytes: s.bytes, totalLatency: s.totalLatency, maxLatency: s.maxLatency,
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
// metric names where franz-go's hooks measure the same thing. The Java
// client has many more; which names appear cannot match it, only the
// layout does.
func producerMetrics(clientID string, completed, failed int64, h hookSnapshot) []metric {
	tags := [][2]string{{"client-id", clientID}}
	m := func(name string, v any) metric {
		return metric{group: "producer-metrics", name: name, tags: tags, value: v}
	}
	secs := h.elapsed.Seconds()
	rate := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	out := []metric{
		m("record-send-total", float64(completed)),
		m("record-error-total", float64(failed)),
		m("record-send-rate", rate(completed)),
	}
	if h.batches > 0 {
		out = append(out, m("batch-size-avg", h.batchSizeAvg), m("batch-size-max", h.batchSizeMax),
			m("compression-rate-avg", h.compressionRate))
	}
	if h.produceRequests > 0 {
		out = append(out, m("records-per-request-avg", float64(h.batchRecords)/float64(h.produceRequests)),
			m("request-latency-avg", h.requestLatencyAvgMs), m("request-latency-max", h.requestLatencyMaxMs))
	}
	for _, c := range []struct {
		name string
		n    int64
	}{{"outgoing-byte", h.outgoingBytes}, {"incoming-byte", h.incomingBytes}, {"request", h.requests}, {"response", h.responses}} {
		out = append(out, m(c.name+"-rate", rate(c.n)), m(c.name+"-total", float64(c.n)))
	}
	return out
}
