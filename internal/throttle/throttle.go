// Package throttle paces a send loop to a target rate the way Kafka's
// ThroughputThrottler does: the rate is an average since the start, checked
// after every send, and sleeps are batched until they add up to 2 ms. After a
// stall the loop therefore sends flat out until it has caught up, which is
// what users of the original tools see and expect.
package throttle

import (
	"context"
	"time"
)

// minSleep is the smallest sleep the throttler takes; shorter waits accumulate.
const minSleep = 2 * time.Millisecond

// Throttler paces sends to TargetPerSec. A negative target never throttles.
// A zero target blocks until the context ends, which is what the original's
// --throughput 0 does (it waits forever).
type Throttler struct {
	target     float64
	sleepNs    int64 // nanoseconds one send is worth: 1e9/target
	deficitNs  int64
	startMs    int64
	nowMs      func() int64
	sleep      func(context.Context, time.Duration) error
	unthrottle bool
}

// New creates a throttler whose clock starts at startMs (wall milliseconds
// from nowMs).
func New(targetPerSec float64, startMs int64, nowMs func() int64) *Throttler {
	t := &Throttler{target: targetPerSec, startMs: startMs, nowMs: nowMs, sleep: sleepCtx}
	if targetPerSec > 0 {
		t.sleepNs = int64(1e9 / targetPerSec)
	}
	t.unthrottle = targetPerSec < 0
	return t
}

// ShouldThrottle reports whether the loop is ahead of its target after
// sending the record with 0-based index i, which started at sendStartMs.
// The elapsed time is float32 seconds, as in the original.
func (t *Throttler) ShouldThrottle(i int64, sendStartMs int64) bool {
	if t.unthrottle {
		return false
	}
	elapsedSec := float32(sendStartMs-t.startMs) / 1000
	return elapsedSec > 0 && float64(i)/float64(elapsedSec) > t.target
}

// Throttle waits for the accumulated deficit once it reaches 2 ms. With a
// zero target it waits until ctx is done.
func (t *Throttler) Throttle(ctx context.Context) error {
	if t.target == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	t.deficitNs += t.sleepNs
	if t.deficitNs < int64(minSleep) {
		return nil
	}
	d := time.Duration(t.deficitNs)
	t.deficitNs = 0
	return t.sleep(ctx, d)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
