package throttle

import (
	"context"
	"testing"
	"time"
)

func TestShouldThrottle(t *testing.T) {
	tests := []struct {
		target  float64
		i       int64
		elapsed int64 // ms since start
		want    bool
	}{
		{target: -1, i: 1_000_000, elapsed: 1, want: false},
		{target: 100, i: 5, elapsed: 0, want: false},      // no time has passed: never ahead
		{target: 100, i: 50, elapsed: 1000, want: false},  // 50/s is below 100/s
		{target: 100, i: 101, elapsed: 1000, want: true},  // above
		{target: 100, i: 100, elapsed: 1000, want: false}, // equal is not ahead
		{target: 0.5, i: 1, elapsed: 1000, want: true},    // fractional targets (3.9+)
	}
	for _, tt := range tests {
		th := New(tt.target, 1000, nil)
		if got := th.ShouldThrottle(tt.i, 1000+tt.elapsed); got != tt.want {
			t.Errorf("target %v, i %d after %d ms: %v, want %v", tt.target, tt.i, tt.elapsed, got, tt.want)
		}
	}
}

func TestThrottleBatchesSleepsOf2ms(t *testing.T) {
	th := New(1000, 0, nil) // 1 ms per record
	var slept []time.Duration
	th.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	for range 5 {
		if err := th.Throttle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(slept) != 2 || slept[0] != 2*time.Millisecond || slept[1] != 2*time.Millisecond {
		t.Errorf("sleeps = %v, want two of 2ms (the 5th ms is still owed)", slept)
	}
}

func TestZeroTargetWaitsForContext(t *testing.T) {
	th := New(0, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := th.Throttle(ctx); err == nil {
		t.Fatal("a zero target must block until the context ends")
	}
	if time.Since(start) < 15*time.Millisecond {
		t.Error("returned too early")
	}
}
