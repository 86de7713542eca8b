// Package clock is the one place tools read time: wall-clock milliseconds
// as the originals print them, advanced by the monotonic clock so that a
// clock step never distorts a latency, and sleeping that a context ends.
package clock

import (
	"context"
	"time"
)

// Wall reads wall-clock milliseconds the way Java's
// System.currentTimeMillis() and C's gettimeofday() are read by the
// originals, but anchored once and advanced monotonically. Each run makes
// its own (no package-level clock), so runs in one process do not share it.
type Wall struct {
	base   time.Time
	baseNs int64 // base as Unix nanoseconds
}

// NewWall anchors a clock now.
func NewWall() Wall {
	now := time.Now()
	return Wall{base: now, baseNs: now.UnixNano()}
}

// Ms is milliseconds since the Unix epoch.
func (w Wall) Ms() int64 { return w.base.UnixMilli() + time.Since(w.base).Milliseconds() }

// Time is the wall-clock time, monotonic since the anchor.
func (w Wall) Time() time.Time { return w.base.Add(time.Since(w.base)) }

// UnixNano is Time as nanoseconds since the Unix epoch, for hot paths: one
// monotonic clock read and an addition, no time.Time to build.
func (w Wall) UnixNano() int64 { return w.baseNs + int64(time.Since(w.base)) }

// Sleep waits d or until ctx ends, whichever is first, and returns ctx's
// error in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
