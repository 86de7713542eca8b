// Package latency records latencies for every tool in this module and reads
// them back with the exact semantics of HdrHistogram_c, the C library that
// redis-benchmark (and several other C benchmark tools) vendor.
//
// Storage and recording use github.com/HdrHistogram/hdrhistogram-go, whose
// counts array has the same layout as HdrHistogram_c's (same unit magnitude,
// sub-bucket count and index formula). Every query, however, is computed here
// from that counts array, because hdrhistogram-go's own Min, Max, Mean,
// ValueAtPercentile and iterators differ from the C ones in small ways that
// change printed numbers (the C hdr_min ignores the zero bucket's value,
// hdr_max tracks the raw maximum, the C iterators report a final
// "100%" line, and so on).
//
// The shape is:
//
//	h := latency.New(10, 3_000_000, 3) // values are whatever unit the tool uses, e.g. microseconds
//	rec := h.NewRecorder()              // one per worker goroutine
//	rec.Record(us)                      // hot path: no lock, no allocation
//	rec.Flush()                         // when the worker stops
//	s := h.Snapshot()                   // immutable, for reporters
//	s.PercentileLines()                 // the reporter only formats
package latency

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram is safe for concurrent use: a mutex around an hdrhistogram-go
// histogram. Workers should record through a Recorder, which batches values so
// the lock is taken once per batch rather than once per value.
type Histogram struct {
	// epoch changes on every Snapshot, SnapshotAndReset and Reset. A Recorder
	// that sees it change flushes, so readers lag behind busy workers by at
	// most one snapshot instead of up to a whole batch. Every Recorder.Record
	// reads it, so it sits alone in its cache line, away from the lock that
	// flushes write.
	epoch atomic.Uint64
	_     [56]byte

	lowest, highest int64
	sigFigs         int
	geo             geometry

	mu sync.Mutex
	h  *hdrhistogram.Histogram
	// max is the largest value recorded since the last reset (after clamping),
	// HdrHistogram_c's max_value. It cannot be derived from the counts: a
	// histogram holding only zeros has hdr_max 0, while one holding a 5 has
	// hdr_max 7, and both have their count in index 0.
	max int64
}

// New returns an empty histogram that tracks values from lowest (the lowest
// discernible value, which sets the resolution: 10 gives steps of 8) to
// highest with sigFigs significant decimal digits, like HdrHistogram_c's
// hdr_init. redis-benchmark uses New(10, 3_000_000, precision) with values in
// microseconds.
//
// As hdrhistogram-go does, sigFigs is clamped to [1, 5] and lowest to at least
// 1; HdrHistogram_c rejects such arguments instead. New panics if highest is
// below lowest, where neither library has a usable histogram.
func New(lowest, highest int64, sigFigs int) *Histogram {
	if lowest < 1 {
		lowest = 1
	}
	if sigFigs < 1 {
		sigFigs = 1
	} else if sigFigs > 5 {
		sigFigs = 5
	}
	if highest < lowest {
		panic(fmt.Sprintf("latency: highest %d is below lowest %d", highest, lowest))
	}
	hh := hdrhistogram.New(lowest, highest, sigFigs)
	g := newGeometry(lowest, highest, sigFigs)
	// Our index arithmetic must describe hdrhistogram-go's counts array; if a
	// future version lays it out differently, fail loudly rather than print
	// wrong numbers.
	if n := len(hh.Export().Counts); n != int(g.countsLen) {
		panic(fmt.Sprintf("latency: hdrhistogram-go has %d counts, expected %d", n, g.countsLen))
	}
	return &Histogram{lowest: lowest, highest: highest, sigFigs: sigFigs, geo: g, h: hh}
}

// clamp brings v into [0, highest]: redis-benchmark records
// min(latency, highest) so that slow requests count as "highest" instead of
// being dropped by hdr_record_value. HdrHistogram_c would drop a negative
// value; monotonic clocks never produce one, so we record it as 0.
func (h *Histogram) clamp(v int64) int64 {
	if v < 0 {
		return 0
	}
	if v > h.highest {
		return h.highest
	}
	return v
}

// recordLocked records one value; h.mu must be held.
func (h *Histogram) recordLocked(v int64) {
	v = h.clamp(v)
	// Cannot fail: v is in [0, highest] and the counts array covers highest.
	_ = h.h.RecordValue(v)
	if v > h.max {
		h.max = v
	}
}

// Record records one value, clamped to [0, highest]. It takes the lock; hot
// paths should use a Recorder.
func (h *Histogram) Record(v int64) {
	h.mu.Lock()
	h.recordLocked(v)
	h.mu.Unlock()
}

// RecordValues records every value in vs (each clamped to [0, highest]) under
// one lock acquisition.
func (h *Histogram) RecordValues(vs []int64) {
	if len(vs) == 0 {
		return
	}
	h.mu.Lock()
	for _, v := range vs {
		h.recordLocked(v)
	}
	h.mu.Unlock()
}

// Reset empties the histogram, like hdr_reset.
func (h *Histogram) Reset() {
	h.mu.Lock()
	h.h.Reset()
	h.max = 0
	h.mu.Unlock()
	h.epoch.Add(1)
}

// Snapshot returns an immutable copy of the histogram's current state for
// reporters. Values still buffered in Recorders are not included (see
// Recorder).
func (h *Histogram) Snapshot() *Snapshot {
	return h.snapshot(false)
}

// SnapshotAndReset atomically takes a snapshot and empties the histogram, so
// that no value recorded in between is lost. It serves interval histograms,
// such as redis-benchmark's per-tick one that feeds avg_msec.
func (h *Histogram) SnapshotAndReset() *Snapshot {
	return h.snapshot(true)
}

func (h *Histogram) snapshot(reset bool) *Snapshot {
	h.mu.Lock()
	exp := h.h.Export()
	total := h.h.TotalCount()
	max := h.max
	if reset {
		h.h.Reset()
		h.max = 0
	}
	h.mu.Unlock()
	h.epoch.Add(1)
	return &Snapshot{
		lowest:  h.lowest,
		highest: h.highest,
		sigFigs: h.sigFigs,
		geo:     h.geo,
		counts:  exp.Counts,
		total:   total,
		max:     max,
	}
}

// Merge adds a snapshot's values into h, for tools that keep one histogram per
// worker or per interval and combine them for a report. The snapshot must come
// from a histogram with the same lowest, highest and significant figures.
func (h *Histogram) Merge(s *Snapshot) error {
	if s.lowest != h.lowest || s.highest != h.highest || s.sigFigs != h.sigFigs {
		return fmt.Errorf("latency: cannot merge a (%d, %d, %d) snapshot into a (%d, %d, %d) histogram",
			s.lowest, s.highest, s.sigFigs, h.lowest, h.highest, h.sigFigs)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, c := range s.counts {
		if c != 0 {
			// valueAtIndex maps back to index i, so counts add index by index.
			if err := h.h.RecordValues(h.geo.valueAtIndex(int32(i)), c); err != nil {
				return fmt.Errorf("latency: merge: %w", err)
			}
		}
	}
	if s.max > h.max {
		h.max = s.max
	}
	return nil
}

// RecorderBatch is how many values a Recorder buffers before it flushes into
// its Histogram: enough that the lock is rare, few enough that a tool with
// thousands of connections (one Recorder each) keeps them small (1 KiB).
const RecorderBatch = 128

// Recorder is a per-worker buffer in front of a Histogram. It is not safe for
// concurrent use: give each goroutine its own. Record neither locks nor
// allocates; the buffer is flushed into the Histogram (one lock for the whole
// batch) when it holds RecorderBatch values, on the first Record after the
// Histogram was snapshotted or reset (so a periodic reader sees a busy
// worker's values at most one snapshot late), and on Flush. A worker must call
// Flush when it stops, before the final Snapshot.
type Recorder struct {
	h     *Histogram
	n     int
	epoch uint64
	buf   [RecorderBatch]int64
}

// NewRecorder returns a Recorder that flushes into h.
func (h *Histogram) NewRecorder() *Recorder {
	return &Recorder{h: h, epoch: h.epoch.Load()}
}

// Record buffers one value (clamped when flushed, as Histogram.Record does).
func (r *Recorder) Record(v int64) {
	r.buf[r.n] = v
	r.n++
	if r.n == len(r.buf) || r.h.epoch.Load() != r.epoch {
		r.Flush()
	}
}

// Flush moves every buffered value into the Histogram.
func (r *Recorder) Flush() {
	r.epoch = r.h.epoch.Load()
	if r.n == 0 {
		return
	}
	r.h.RecordValues(r.buf[:r.n])
	r.n = 0
}
