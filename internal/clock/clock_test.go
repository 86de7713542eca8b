package clock

import (
	"context"
	"testing"
	"time"
)

func TestWallAdvancesWithTheMonotonicClock(t *testing.T) {
	w := NewWall()
	a := w.Ms()
	if d := a - time.Now().UnixMilli(); d < -5 || d > 5 {
		t.Fatalf("wall clock %d ms away from time.Now", d)
	}
	time.Sleep(20 * time.Millisecond)
	if b := w.Ms(); b-a < 20 {
		t.Fatalf("advanced %d ms over a 20 ms sleep", b-a)
	}
}

func TestWallUnixNanoIsTimeInNanoseconds(t *testing.T) {
	w := NewWall()
	before := w.Time().UnixNano()
	ns := w.UnixNano()
	after := w.Time().UnixNano()
	if ns < before || ns > after {
		t.Fatalf("UnixNano %d outside [%d, %d] of Time", ns, before, after)
	}
	if ms := w.Ms(); ns/1e6 < ms-1 || ns/1e6 > ms+1 {
		t.Fatalf("UnixNano %d is not near Ms %d", ns, ms)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); err == nil || time.Since(start) > time.Second {
		t.Fatalf("Sleep on a cancelled context: %v after %s", err, time.Since(start))
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
