package latency

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// totalNoEpoch reads the recorded total without taking a Snapshot (which
// would make Recorders flush early).
func (h *Histogram) totalNoEpoch() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.h.TotalCount()
}

// Our index arithmetic must agree with where hdrhistogram-go stores a value.
func TestGeometryMatchesHdrhistogramGo(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, lowest := range []int64{1, 2, 8, 10, 1000} {
		for sig := 1; sig <= 5; sig++ {
			const highest = 3_000_000
			raw := hdrhistogram.New(lowest, highest, sig)
			g := newGeometry(lowest, highest, sig)
			if n := len(raw.Export().Counts); n != int(g.countsLen) {
				t.Fatalf("lowest %d sig %d: %d counts, geometry says %d", lowest, sig, n, g.countsLen)
			}
			values := []int64{0, 1, 7, 8, 9, 10, 100, 2047, 2048, 16383, 16384, highest}
			for range 200 {
				values = append(values, r.Int63n(highest+1))
			}
			// Record every value into hdrhistogram-go and count it at our
			// index: the two counts arrays must be identical.
			mine := make([]int64, g.countsLen)
			for _, v := range values {
				if err := raw.RecordValue(v); err != nil {
					t.Fatal(err)
				}
				mine[g.countsIndex(v)]++
				lo := g.valueAtIndex(g.countsIndex(v))
				if lo != g.lowestEquivalent(v) || v < lo || v > g.highestEquivalent(v) {
					t.Fatalf("lowest %d sig %d value %d: bucket [%d, %d]", lowest, sig, v, lo, g.highestEquivalent(v))
				}
			}
			for i, c := range raw.Export().Counts {
				if c != mine[i] {
					t.Fatalf("lowest %d sig %d: index %d holds %d values in hdrhistogram-go, %d by our geometry", lowest, sig, i, c, mine[i])
				}
			}
		}
	}
}

func TestGeometryRedis(t *testing.T) {
	// Spec 3.4: lowest 10 gives unit magnitude 3 (steps of 8); sub-bucket
	// counts 32, 256, 2048, 32768 for 1 to 4 significant figures.
	for sig, want := range map[int]int32{1: 32, 2: 256, 3: 2048, 4: 32768} {
		g := newGeometry(10, 3_000_000, sig)
		if g.unitMag != 3 || g.subCount != want {
			t.Errorf("sig %d: unit magnitude %d, sub-bucket count %d", sig, g.unitMag, g.subCount)
		}
	}
	g := newGeometry(10, 3_000_000, 3)
	for _, c := range []struct{ v, lo, hi, med int64 }{
		{0, 0, 7, 4}, {16, 16, 23, 20}, {100, 96, 103, 100}, {16383, 16376, 16383, 16380},
		{16384, 16384, 16399, 16392}, {17100, 17088, 17103, 17096}, {33100, 33088, 33119, 33104},
		{3_000_000, 2998272, 3000319, 2999296},
	} {
		if lo, hi, med := g.lowestEquivalent(c.v), g.highestEquivalent(c.v), g.medianEquivalent(c.v); lo != c.lo || hi != c.hi || med != c.med {
			t.Errorf("%d: [%d, %d] median %d, want [%d, %d] median %d", c.v, lo, hi, med, c.lo, c.hi, c.med)
		}
	}
}

func TestRecordClamps(t *testing.T) {
	h := New(10, 3_000_000, 3)
	h.Record(-5)
	h.Record(5_000_000)
	h.Record(3_000_000)
	s := h.Snapshot()
	if s.TotalCount() != 3 || s.Min() != 0 || s.Max() != 3000319 {
		t.Errorf("total %d min %d max %d", s.TotalCount(), s.Min(), s.Max())
	}
	if got := s.ValueAtPercentile(50); got != 3000319 {
		t.Errorf("p50 %d", got)
	}
}

func TestResetAndSnapshotAndReset(t *testing.T) {
	h := New(10, 3_000_000, 3)
	h.RecordValues([]int64{100, 200, 300})
	s := h.SnapshotAndReset()
	if s.TotalCount() != 3 || s.Max() != 303 {
		t.Errorf("snapshot total %d max %d", s.TotalCount(), s.Max())
	}
	after := h.Snapshot()
	if after.TotalCount() != 0 || after.Max() != 0 || after.Min() != 1<<63-1 {
		t.Errorf("after reset: total %d max %d min %d", after.TotalCount(), after.Max(), after.Min())
	}
	// The earlier snapshot is unaffected by later recording.
	h.Record(5000)
	if s.TotalCount() != 3 || s.Max() != 303 {
		t.Error("snapshot changed after recording")
	}
	h.Reset()
	if got := h.Snapshot(); got.TotalCount() != 0 || got.Max() != 0 {
		t.Errorf("after Reset: total %d max %d", got.TotalCount(), got.Max())
	}
}

func TestMerge(t *testing.T) {
	a, b := New(10, 3_000_000, 3), New(10, 3_000_000, 3)
	a.RecordValues([]int64{20, 30})
	b.RecordValues([]int64{5, 40_000})
	if err := a.Merge(b.Snapshot()); err != nil {
		t.Fatal(err)
	}
	s := a.Snapshot()
	if s.TotalCount() != 4 || s.Min() != 0 || s.Max() != 40031 {
		t.Errorf("merged: total %d min %d max %d", s.TotalCount(), s.Min(), s.Max())
	}
	if err := a.Merge(New(10, 3_000_000, 2).Snapshot()); err == nil {
		t.Error("merging a different geometry should fail")
	}
}

func TestRecorderFlush(t *testing.T) {
	h := New(10, 3_000_000, 3)
	r := h.NewRecorder()
	for i := range RecorderBatch - 1 {
		r.Record(int64(i))
	}
	if got := h.totalNoEpoch(); got != 0 {
		t.Fatalf("%d values flushed before the batch was full", got)
	}
	r.Record(1) // fills the batch
	if got := h.totalNoEpoch(); got != RecorderBatch {
		t.Fatalf("after a full batch: %d values, want %d", got, RecorderBatch)
	}
	r.Record(2)
	r.Record(3)
	if got := h.totalNoEpoch(); got != RecorderBatch {
		t.Fatalf("partial batch flushed early: %d", got)
	}
	r.Flush()
	r.Flush() // idempotent
	if got := h.totalNoEpoch(); got != RecorderBatch+2 {
		t.Fatalf("after Flush: %d", got)
	}

	// After a Snapshot, the next Record flushes what was buffered, so a
	// periodic reader is at most one snapshot behind a busy worker.
	r.Record(4)
	if got := h.Snapshot().TotalCount(); got != RecorderBatch+2 {
		t.Fatalf("buffered value visible too early: %d", got)
	}
	r.Record(5)
	if got := h.totalNoEpoch(); got != RecorderBatch+4 {
		t.Fatalf("after snapshot, Record should flush: %d", got)
	}
}

func TestRecorderDoesNotAllocate(t *testing.T) {
	h := New(10, 3_000_000, 3)
	r := h.NewRecorder()
	v := int64(0)
	if n := testing.AllocsPerRun(10_000, func() {
		r.Record(v % 5000)
		v++
	}); n != 0 {
		t.Errorf("Recorder.Record allocates %v times per call", n)
	}
}

// Run with -race: workers record through Recorders while readers take
// snapshots and interval snapshots; nothing is lost.
func TestConcurrent(t *testing.T) {
	const workers, perWorker = 8, 5_000
	total := New(10, 3_000_000, 3)
	interval := New(10, 3_000_000, 3)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var intervalSum int64
	readers.Add(2)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := total.Snapshot()
			_ = s.PercentileLines()
			_ = s.Mean()
		}
	}()
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			intervalSum += interval.SnapshotAndReset().TotalCount()
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt, ri := total.NewRecorder(), interval.NewRecorder()
			for i := range perWorker {
				v := int64((w*perWorker + i) % 10_000)
				rt.Record(v)
				ri.Record(v)
			}
			rt.Flush()
			ri.Flush()
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	intervalSum += interval.Snapshot().TotalCount()
	if got := total.Snapshot().TotalCount(); got != workers*perWorker {
		t.Errorf("total %d, want %d", got, workers*perWorker)
	}
	if intervalSum != workers*perWorker {
		t.Errorf("interval snapshots add up to %d, want %d", intervalSum, workers*perWorker)
	}
	// Direct recording is safe too.
	var wg2 sync.WaitGroup
	for range 4 {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			for i := range 1000 {
				total.Record(int64(i))
			}
		}()
	}
	wg2.Wait()
	if got := total.Snapshot().TotalCount(); got != workers*perWorker+4000 {
		t.Errorf("total %d after direct records", got)
	}
}

func BenchmarkRecorder(b *testing.B) {
	h := New(10, 3_000_000, 3)
	r := h.NewRecorder()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Record(int64(i & 0xffff))
	}
	r.Flush()
}

func BenchmarkRecorderParallel(b *testing.B) {
	h := New(10, 3_000_000, 3)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := h.NewRecorder()
		i := 0
		for pb.Next() {
			r.Record(int64(i & 0xffff))
			i++
		}
		r.Flush()
	})
}

func BenchmarkSnapshotLines(b *testing.B) {
	h := New(10, 3_000_000, 3)
	r := rand.New(rand.NewSource(1))
	for range 100_000 {
		h.Record(int64(r.ExpFloat64() * 500))
	}
	b.ReportAllocs()
	for b.Loop() {
		s := h.Snapshot()
		_ = s.PercentileLines()
		_ = s.CumulativeLines(100)
	}
}
