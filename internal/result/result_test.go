package result_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/result"
	"github.com/perfclones/perfclones/internal/result/resulttest"
)

func TestRunRoundTripsThroughSchema(t *testing.T) {
	h := latency.New(1, 60_000_000, 3)
	for _, us := range []int64{0, 5, 120, 1500, 1500, 99_000} {
		h.Record(us)
	}
	snap := h.Snapshot()
	lat, err := result.LatencyOf(snap)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := result.LatencyOf(latency.New(1, 60_000_000, 3).Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	run := result.New("kafka-producer-perf-test", "3.9", []string{"--topic", "t"})
	start := time.Now()
	run.Tests = append(run.Tests, result.Test{
		Name: "produce", Start: start, End: start.Add(time.Second), ElapsedSeconds: 1,
		Counts:    result.Counts{Operations: 6, Bytes: 600, Errors: map[string]int64{"TimeoutException": 2}},
		Intervals: []result.Interval{{EndSeconds: 1, DurationSeconds: 1, Operations: 6, Bytes: 600}},
		Latency:   map[string]*result.Latency{"send": lat, "none": empty},
	})
	run.Finish("completed", 0, nil)
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	if err := run.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	b, err := run.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := resulttest.Validate(b)
	if err != nil {
		t.Fatalf("schema: %v\n%s", err, b)
	}
	if _, err := result.Read(path); err != nil {
		t.Fatal(err)
	}
	tst := got.Tests[0]
	if tst.Counts.Failed() != 2 || tst.Counts.Operations != 6 {
		t.Errorf("counts %+v", tst.Counts)
	}
	back, err := resulttest.Histogram(tst.Latency["send"])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []float64{0, 50, 90, 99, 100} {
		if a, b := back.ValueAtPercentile(p), snap.ValueAtPercentile(p); a != b {
			t.Errorf("p%v: decoded %d, recorded %d", p, a, b)
		}
	}
	if back.TotalCount() != 6 || back.Max() != snap.Max() || back.Min() != snap.Min() {
		t.Errorf("decoded count %d max %d min %d; recorded max %d min %d", back.TotalCount(), back.Max(), back.Min(), snap.Max(), snap.Min())
	}
}

func TestSchemaRejectsWhatIsNotAResult(t *testing.T) {
	for _, doc := range []string{
		`{}`,
		`{"schema":"perfclones-result/0","tool":"x","release":"1","args":[],"host":"h","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","ending":"completed","exit_code":0,"tests":[]}`,
		`{"schema":"perfclones-result/1","tool":"x","release":"1","args":[],"host":"h","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","ending":"done","exit_code":0,"tests":[]}`,
	} {
		if _, err := resulttest.Validate([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
}
