package kafkaperf

import (
	"fmt"
	"slices"
	"sync"

	"github.com/perfclones/perfclones/internal/javafmt"
)

// maxLatencySamples bounds the latencies kept for percentiles, as in the
// original: every sampling-th completion is kept, at most about 500,000.
const maxLatencySamples = 500000

// producerStats is ProducerPerformance's Stats: counts, bytes and integer-ms
// latencies of completed sends, a reporting window, and a sample of the
// latencies for the final percentiles. Completions arrive on one goroutine,
// but the final line is read from another, hence the lock.
type producerStats struct {
	mu sync.Mutex

	out      func(string) // writes one whole line
	nowMs    func() int64
	interval int64  // ms between window lines
	suffix   string // "" or " steady state" on the final line

	startMs       int64
	windowStartMs int64
	iteration     int64 // successful completions so far (3.5+ semantics)
	sampling      int64
	latencies     []int32
	index         int

	count        int64
	bytes        int64
	totalLatency int64
	maxLatency   int64

	windowCount        int64
	windowMaxLatency   int64
	windowTotalLatency int64
	windowBytes        int64

	// suppressed stops window lines (the whole-run stats once steady state starts).
	suppressed bool
	// steadyBanner is printed once before the first window line ("In steady state.").
	steadyBanner string
}

func newProducerStats(numRecords, intervalMs int64, nowMs func() int64, out func(string)) *producerStats {
	now := nowMs()
	sampling := int64(1)
	if numRecords > 0 {
		sampling = numRecords / min(numRecords, maxLatencySamples)
	}
	return &producerStats{
		out:           out,
		nowMs:         nowMs,
		interval:      intervalMs,
		startMs:       now,
		windowStartMs: now,
		sampling:      sampling,
		latencies:     make([]int32, numRecords/sampling+1),
	}
}

// record adds one successful completion observed at nowMs, and prints the
// window line when the window is over.
func (s *producerStats) record(latencyMs int64, bytes int64, nowMs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.bytes += bytes
	s.totalLatency += latencyMs
	s.maxLatency = max(s.maxLatency, latencyMs)
	s.windowCount++
	s.windowBytes += bytes
	s.windowTotalLatency += latencyMs
	s.windowMaxLatency = max(s.windowMaxLatency, latencyMs)
	if s.iteration%s.sampling == 0 && s.index < len(s.latencies) {
		s.latencies[s.index] = int32(latencyMs)
		s.index++
	}
	s.iteration++
	if nowMs-s.windowStartMs >= s.interval {
		if !s.suppressed {
			s.printWindowLocked()
		}
		s.newWindowLocked()
	}
}

func (s *producerStats) suppress() {
	s.mu.Lock()
	s.suppressed = true
	s.mu.Unlock()
}

// printWindowLocked prints the window line; its elapsed time runs to now,
// not to the completion that triggered it, as in the original.
func (s *producerStats) printWindowLocked() {
	if s.steadyBanner != "" {
		s.out(s.steadyBanner)
		s.steadyBanner = ""
	}
	elapsed := s.nowMs() - s.windowStartMs
	recsPerSec := 1000.0 * float64(s.windowCount) / float64(elapsed)
	mbPerSec := 1000.0 * float64(s.windowBytes) / float64(elapsed) / (1024.0 * 1024.0)
	s.out(fmt.Sprintf("%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency.",
		s.windowCount, javafmt.Fixed(recsPerSec, 1), javafmt.Fixed(mbPerSec, 2),
		javafmt.Fixed(float64(s.windowTotalLatency)/float64(s.windowCount), 1), javafmt.Fixed(float64(s.windowMaxLatency), 1)))
}

func (s *producerStats) newWindowLocked() {
	s.windowStartMs = s.nowMs()
	s.windowCount = 0
	s.windowMaxLatency = 0
	s.windowTotalLatency = 0
	s.windowBytes = 0
}

// totalLine is the final summary line, computed now.
func (s *producerStats) totalLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	elapsed := s.nowMs() - s.startMs
	recsPerSec := 1000.0 * float64(s.count) / float64(elapsed)
	mbPerSec := 1000.0 * float64(s.bytes) / float64(elapsed) / (1024.0 * 1024.0)
	p := percentiles(s.latencies[:s.index], 0.5, 0.95, 0.99, 0.999)
	return fmt.Sprintf("%d%s records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		s.count, s.suffix, javafmt.Fixed(recsPerSec, 6), javafmt.Fixed(mbPerSec, 2),
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
