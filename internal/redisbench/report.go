package redisbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// reportInput is everything a test's report prints; formatting never touches the network.
type reportInput struct {
	cfg        reportConfig
	result     *benchmarkResult
	config     *serverConfig   // standalone: the server's CONFIG, nil when unavailable
	cluster    []*serverConfig // cluster: each master's CONFIG (nil entries are skipped)
	threads    int
	cleanWidth int // bytes of the last progress line, overwritten before the report
}

// summary holds the numbers of the summary table, each computed in float32
// exactly as the C tool does, so that the printed digits agree.
type summary struct {
	rps                          float32
	avg, min, p50, p95, p99, max float32
}

func summarize(res *benchmarkResult) summary {
	h := res.latency
	if h.TotalCount() == 0 {
		// Only -n 0 gets here (the C tool never finishes such a run): report
		// zero latencies rather than HdrHistogram's sentinels for "no value".
		return summary{rps: float32(res.finished) / (float32(res.elapsedMs) / 1000.0)}
	}
	return summary{
		rps: float32(res.finished) / (float32(res.elapsedMs) / 1000.0),
		avg: float32(h.Mean() / 1000.0),
		min: float32(h.Min()) / 1000.0,
		p50: float32(h.ValueAtPercentile(50.0)) / 1000.0,
		p95: float32(h.ValueAtPercentile(95.0)) / 1000.0,
		p99: float32(h.ValueAtPercentile(99.0)) / 1000.0,
		max: float32(h.Max()) / 1000.0,
	}
}

// formatReport renders the lines printed after a benchmark: the full report,
// the -q line or the --csv row.
func formatReport(in *reportInput) string {
	o := in.cfg
	res := in.result
	title := res.spec.title
	s := summarize(res)
	var b strings.Builder
	switch {
	case o.csv:
		fmt.Fprintf(&b, "\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"\n", title,
			cFloat(float64(s.rps), 2), cFloat(float64(s.avg), 3), cFloat(float64(s.min), 3),
			cFloat(float64(s.p50), 3), cFloat(float64(s.p95), 3), cFloat(float64(s.p99), 3), cFloat(float64(s.max), 3))
	case o.quiet:
		b.WriteString(cleanLine(in.cleanWidth))
		fmt.Fprintf(&b, "%s: %s requests per second, p50=%s msec\n", title, cFloat(float64(s.rps), 2), cFloat(float64(s.p50), 3))
	default:
		b.WriteString(cleanLine(in.cleanWidth))
		fmt.Fprintf(&b, "====== %s ======\n", title)
		fmt.Fprintf(&b, "  %d requests completed in %s seconds\n", res.finished, cFloat(float64(float32(res.elapsedMs)/1000), 2))
		fmt.Fprintf(&b, "  %d parallel clients\n", o.clients)
		fmt.Fprintf(&b, "  %d bytes payload\n", res.spec.payloadSize)
		fmt.Fprintf(&b, "  keep alive: %d\n", o.keepAlive)
		if o.cluster {
			fmt.Fprintf(&b, "  cluster mode: yes (%d masters)\n", len(in.cluster))
			for i, cfg := range in.cluster {
				if cfg == nil {
					continue
				}
				save := cfg.save
				if save == "" {
					save = "NONE"
				}
				fmt.Fprintf(&b, "  node [%d] configuration:\n    save: %s\n    appendonly: %s\n", i, save, cfg.appendonly)
			}
		} else if in.config != nil {
			fmt.Fprintf(&b, "  host configuration \"save\": %s\n", in.config.save)
			fmt.Fprintf(&b, "  host configuration \"appendonly\": %s\n", in.config.appendonly)
		}
		if in.threads > 0 {
			fmt.Fprintf(&b, "  multi-thread: yes\n  threads: %d\n", in.threads)
		} else {
			b.WriteString("  multi-thread: no\n")
		}
		b.WriteString("\nLatency by percentile distribution:\n")
		writeLatencyLines(&b, res.latency.PercentileLines())
		b.WriteString("\nCumulative distribution of latencies:\n")
		writeLatencyLines(&b, res.latency.CumulativeLines(100))
		b.WriteString("\nSummary:\n")
		fmt.Fprintf(&b, "  throughput summary: %s requests per second\n", cFloat(float64(s.rps), 2))
		b.WriteString("  latency summary (msec):\n")
		fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n", "avg", "min", "p50", "p95", "p99", "max")
		fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n",
			cFloat(float64(s.avg), 3), cFloat(float64(s.min), 3), cFloat(float64(s.p50), 3),
			cFloat(float64(s.p95), 3), cFloat(float64(s.p99), 3), cFloat(float64(s.max), 3))
	}
	return b.String()
}

func writeLatencyLines(b *strings.Builder, lines []latency.Line) {
	for _, l := range lines {
		// The value is float32 arithmetic in C (int64 / 1000.0f), then printed as a double.
		v := float64(float32(l.Value) / 1000.0)
		fmt.Fprintf(b, "%s%% <= %s milliseconds (cumulative count %d)\n", cFloat(l.Percent, 3), cFloat(v, 3), l.Count)
	}
}

// cFloat formats v as glibc's printf("%.<prec>f") does. Finite values round
// the exact binary value to nearest, as both glibc and Go do; infinities
// print as "inf"/"-inf" and NaN as "-nan", the sign x86's 0/0 produces.
func cFloat(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "-nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// csvHeader is the first line of --csv output.
const csvHeader = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"`

// Warnings the C tool prints on stderr once it has connected.
const (
	keepAliveOffWarning = "WARNING: Keepalive disabled. You probably need 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux and 'sudo sysctl -w net.inet.tcp.msl=1000' for Mac OS X in order to use a lot of clients/requests"
	testsIgnoredWarning = "WARNING: Option -t is ignored."
	noConfigWarning     = "WARNING: Could not fetch server CONFIG"
)

// noNodeConfigWarning is printed for a cluster master whose CONFIG could not be read.
func noNodeConfigWarning(ep endpoint) string {
	return fmt.Sprintf("WARNING: Could not fetch node CONFIG %s", ep)
}

// clusterBanner lists the cluster's masters before the first test.
func clusterBanner(nodes []*clusterNode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Cluster has %d master nodes:\n\n", len(nodes))
	for i, n := range nodes {
		fmt.Fprintf(&b, "Master %d: %s %s\n", i, n.name, n.ep)
	}
	b.WriteString("\n")
	return b.String()
}

// idleBanner is -I's first line; idleTick its line on every tick.
func idleBanner(clients int) string {
	return fmt.Sprintf("Creating %d idle connections and waiting forever (Ctrl+C when done)\n", clients)
}

func idleTick(conns int) string { return fmt.Sprintf("clients: %d\r", conns) }

// Progress timing of the C tool: the timer first fires 1 ms after it is
// created, then every 250 ms.
const (
	firstTickMs = 1
	tickMs      = 250
)

// progressPrinter reproduces the C tool's live "title: rps=... \r" line,
// from snapshots of the running test's counters, and keeps the per-tick
// intervals of the result file.
//
// Without --threads one timer is created at start-up and lives across all
// tests; it only fires while a test runs, so an overdue tick fires at once
// when the next test starts. With --threads each test gets a new timer.
// previousTick is never reset: the first rps of a test covers the time since
// the previous test's last tick, and the very first one the time since the
// epoch, which is why it always reads rps=0.0. Scripts see these quirks, so
// we keep them.
type progressPrinter struct {
	out   *lineout.Writer
	clock clock.Wall
	csv   bool

	mu             sync.Mutex
	nextTickMs     int64
	previousTickMs int64
	lastBytes      int
	prevFinished   int64
	overallSum     int64
	overallCount   int64
	title          string
	startMs        int64

	// The result file's intervals of the current test.
	intervals    []result.Interval
	runStartMs   int64 // the test's clock start, which the intervals count from
	lastTickMs   int64
	ivFinished   int64
	requestBytes int64
}

func newProgressPrinter(out *lineout.Writer, wall clock.Wall, csv bool) *progressPrinter {
	return &progressPrinter{out: out, clock: wall, csv: csv, nextTickMs: wall.Ms() + firstTickMs}
}

// beginTest resets the per-test state; threads > 0 (--threads, or cluster
// mode) gives the test a timer of its own.
func (p *progressPrinter) beginTest(spec benchmarkSpec, threads int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.title = spec.title
	p.requestBytes = spec.requestBytes
	p.lastBytes = 0
	p.prevFinished = 0
	p.overallSum, p.overallCount = 0, 0
	p.intervals = nil
	p.ivFinished = 0
	if threads > 0 {
		p.nextTickMs = p.clock.Ms() + firstTickMs
	}
}

// untilNextTick is how long until the timer fires next (-I ticks on it too).
func (p *progressPrinter) untilNextTick() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(time.Duration(p.nextTickMs-p.clock.Ms())*time.Millisecond, 0)
}

func (p *progressPrinter) lastPrintedBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastBytes
}

// progressSource is a running test as the printer sees it.
type progressSource interface {
	snapshot() progressSnapshot
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

// follow starts the printer goroutine for a test that started at
// runStartMs and stops when done is closed.
func (p *progressPrinter) follow(src progressSource, runStartMs int64, done <-chan struct{}) *tickerHandle {
	p.mu.Lock()
	p.startMs = p.clock.Ms()
	p.runStartMs, p.lastTickMs = runStartMs, runStartMs
	p.mu.Unlock()
	t := &tickerHandle{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		for {
			p.mu.Lock()
			wait := p.nextTickMs - p.clock.Ms()
			p.mu.Unlock()
			if wait > 0 {
				timer := time.NewTimer(time.Duration(wait) * time.Millisecond)
				select {
				case <-t.quit:
					timer.Stop()
					return
				case <-done:
					timer.Stop()
					return
				case <-timer.C:
				}
			}
			select {
			case <-t.quit:
				return
			case <-done:
				return
			default:
			}
			p.tick(src.snapshot())
		}
	}()
	return t
}

// tick prints one progress line (none with --csv), records an interval and
// schedules the next tick.
func (p *progressPrinter) tick(s progressSnapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Ms()
	p.nextTickMs = now + tickMs
	p.addInterval(now, s.finished)
	if p.csv {
		return
	}
	p.overallSum += s.tickSum
	p.overallCount += s.tickCount

	dt := float32(float64(now-p.startMs) / 1000.0)
	rps := float32(s.finished) / dt
	instDt := float32(float64(now-p.previousTickMs) / 1000.0)
	instRps := float32(s.finished-p.prevFinished) / instDt
	p.previousTickMs = now
	p.prevFinished = s.finished

	line := fmt.Sprintf("%s: rps=%s (overall: %s) avg_msec=%s (overall: %s)\r", p.title,
		cFloat(float64(instRps), 1), cFloat(float64(rps), 1),
		cFloat(meanMs(s.tickSum, s.tickCount), 3), cFloat(meanMs(p.overallSum, p.overallCount), 3))
	p.out.Write(cleanLine(p.lastBytes) + line)
	p.lastBytes = len(line)
}

// addInterval closes the interval ending at nowMs, when finished replies
// had been counted. p.mu is held.
func (p *progressPrinter) addInterval(nowMs, finished int64) {
	ops := max(finished-p.ivFinished, 0)
	end := max(nowMs, p.lastTickMs)
	p.intervals = append(p.intervals, result.Interval{
		EndSeconds:      float64(end-p.runStartMs) / 1000,
		DurationSeconds: float64(end-p.lastTickMs) / 1000,
		Operations:      ops,
		Bytes:           ops * p.requestBytes,
	})
	p.lastTickMs = end
	p.ivFinished += ops
}

// endTest closes the test's last interval (from the last tick to the
// stop) and returns all of them. The ticker must have stopped.
func (p *progressPrinter) endTest(res *benchmarkResult) []result.Interval {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.addInterval(p.runStartMs+res.elapsedMs, res.replies)
	iv := p.intervals
	p.intervals = nil
	return iv
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

// resultTest is a test's record in the result file: every reply counted
// once the clients stopped, the payload bytes they carried, the error
// replies and broken connections by kind, and the request latencies the
// report's percentiles come from (as the C tool, at most -n of them).
// A run that failed or was interrupted also counts its unanswered
// requests, so that sent = operations + unanswered + error replies.
func resultTest(res *benchmarkResult, intervals []result.Interval) (result.Test, error) {
	t := result.Test{
		Name:           res.spec.title,
		Start:          res.start,
		End:            res.end,
		ElapsedSeconds: float64(res.elapsedMs) / 1000,
		Counts: result.Counts{
			Operations: res.replies,
			Bytes:      res.replies * res.spec.requestBytes,
			Errors:     errorCounts(res.failures),
		},
		Intervals: intervals,
	}
	if res.unanswered > 0 {
		if t.Counts.Errors == nil {
			t.Counts.Errors = map[string]int64{}
		}
		t.Counts.Errors["unanswered"] = res.unanswered
	}
	lat, err := result.LatencyOf(res.latency)
	if err != nil {
		return t, err
	}
	t.Latency = map[string]*result.Latency{"request": lat}
	return t, nil
}

// Error is the failure as the C tool words it on stderr.
func (f *requestFailure) Error() string {
	switch f.what {
	case serverReply:
		return "Error from server: " + f.reply
	case nodeReply:
		return fmt.Sprintf("Error from server %s: %s", f.ep, f.reply)
	case serverClosed:
		return "Error: Server closed the connection"
	case protocolError:
		return "Error: Protocol error"
	case connectionError:
		return "Error: " + strerror(f.err)
	case allDisconnected:
		return "All clients disconnected... aborting."
	case clusterDown:
		return fmt.Sprintf("Error from server %s: %s.", f.ep, f.reply)
	case writeError:
		return "Error writing to the server: " + strerror(f.err)
	case slotsChanged:
		return "WARNING: Cluster slots configuration changed, fetching new one..."
	}
	return f.err.Error()
}

// kind is how the result file counts a failed request: an error reply by
// its first word ("ERR", "WRONGTYPE", "NOAUTH"), anything else by what
// broke.
func (f *requestFailure) kind() string {
	switch f.what {
	case serverReply, nodeReply:
		if i := strings.IndexByte(f.reply, ' '); i > 0 {
			return f.reply[:i]
		}
		if f.reply == "" {
			return "ERR"
		}
		return f.reply
	case serverClosed:
		return "connection closed"
	case protocolError:
		return "protocol error"
	case setupFailed:
		return "connect"
	case connectionError, allDisconnected:
		return "connection error"
	}
	return "" // a notice: no request failed
}

// errorCounts is the result file's errors by kind, nil when there were none.
func errorCounts(failures []*requestFailure) map[string]int64 {
	if len(failures) == 0 {
		return nil
	}
	m := map[string]int64{}
	for _, f := range failures {
		m[f.kind()]++
	}
	return m
}
