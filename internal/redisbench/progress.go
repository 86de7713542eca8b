package redisbench

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// Progress timing of the C tool: the timer first fires 1 ms after it is
// created, then every 250 ms.
const (
	firstTickMs = 1
	tickMs      = 250
)

// progressPrinter reproduces the C tool's live "title: rps=... \r" line.
//
// Without --threads one timer is created at start-up and lives across all
// tests; it only fires while a test runs, so an overdue tick fires at once
// when the next test starts. With --threads each test gets a new timer.
// previousTick is never reset: the first rps of a test covers the time since
// the previous test's last tick, and the very first one the time since the
// epoch, which is why it always reads rps=0.0. Scripts see these quirks, so
// we keep them.
type progressPrinter struct {
	env *runEnv

	mu             sync.Mutex
	nextTickMs     int64
	previousTickMs int64
	lastBytes      int
	prevFinished   int64
	overallSum     int64
	overallCount   int64
	title          string
	startMs        int64
}

func newProgressPrinter(env *runEnv) *progressPrinter {
	return &progressPrinter{env: env, nextTickMs: env.clock.nowMs() + firstTickMs}
}

// beginTest resets the per-test state.
func (p *progressPrinter) beginTest(title string, _ *benchmarkRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.title = title
	p.lastBytes = 0
	p.prevFinished = 0
	p.overallSum, p.overallCount = 0, 0
	if p.env.threads > 0 {
		p.nextTickMs = p.env.clock.nowMs() + firstTickMs
	}
}

func (p *progressPrinter) lastPrintedBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastBytes
}

// tickerHandle stops a running ticker and waits for it.
type tickerHandle struct {
	quit chan struct{}
	done chan struct{}
}

func (t *tickerHandle) stop() {
	close(t.quit)
	<-t.done
}

// run starts the ticker for benchmark r.
func (p *progressPrinter) run(r *benchmarkRun) *tickerHandle {
	p.mu.Lock()
	p.startMs = p.env.clock.nowMs()
	p.mu.Unlock()
	t := &tickerHandle{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		for {
			p.mu.Lock()
			wait := p.nextTickMs - p.env.clock.nowMs()
			p.mu.Unlock()
			if wait > 0 {
				timer := time.NewTimer(time.Duration(wait) * time.Millisecond)
				select {
				case <-t.quit:
					timer.Stop()
					return
				case <-r.done:
					timer.Stop()
					return
				case <-timer.C:
				}
			}
			select {
			case <-t.quit:
				return
			case <-r.done:
				return
			default:
			}
			p.tick(r)
		}
	}()
	return t
}

// tick prints one progress line (none with --csv) and schedules the next tick.
func (p *progressPrinter) tick(r *benchmarkRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.env.clock.nowMs()
	p.nextTickMs = now + tickMs
	if p.env.opts.CSV {
		return
	}
	finished := r.finished.Load()
	tickSum, tickCount := r.tickSum.Swap(0), r.tickCount.Swap(0)
	p.overallSum += tickSum
	p.overallCount += tickCount

	dt := float32(float64(now-p.startMs) / 1000.0)
	rps := float32(finished) / dt
	instDt := float32(float64(now-p.previousTickMs) / 1000.0)
	instRps := float32(finished-p.prevFinished) / instDt
	p.previousTickMs = now
	p.prevFinished = finished

	line := fmt.Sprintf("%s: rps=%s (overall: %s) avg_msec=%s (overall: %s)\r", p.title,
		cFloat(float64(instRps), 1), cFloat(float64(rps), 1),
		cFloat(meanMs(tickSum, tickCount), 3), cFloat(meanMs(p.overallSum, p.overallCount), 3))
	p.env.out.Write(cleanLine(p.lastBytes) + line)
	p.lastBytes = len(line)
}

// meanMs is a latency mean in ms; an empty sample gives NaN as in C.
func meanMs(sumUs, count int64) float64 {
	if count == 0 {
		return math.NaN()
	}
	return float64(sumUs) / float64(count) / 1000.0
}

// cleanLine is C's printf("%*s\r", width, " "): the previous progress line
// overwritten with spaces (at least one), then a carriage return.
func cleanLine(width int) string {
	return strings.Repeat(" ", max(width, 1)) + "\r"
}
