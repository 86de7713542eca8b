package kafkaperf

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/throttle"
)

// maxLatencySamples bounds the latencies kept for the printed percentiles,
// as in the original: every sampling-th completion is kept, at most about
// 500,000.
const maxLatencySamples = 500000

// Latencies are recorded in microseconds, from 1 µs up to a day (a longer
// one counts as a day).
const (
	histogramLowest  = 1
	histogramHighest = 24 * 3600 * 1_000_000
	histogramDigits  = 3
)

// sendStats is what ProducerPerformance's Stats counts: the whole run, or
// the steady state after the warm-up records. Only the goroutine that
// receives acknowledgements writes it (record); the printer reads the
// window cuts it sends; the totals are read once the run is over.
type sendStats struct {
	startMs  int64
	interval int64 // ms between window lines

	// Totals of the successful sends, in Java's integer milliseconds.
	count, bytes, totalLatency, maxLatency atomic.Int64
	// hist holds every acknowledged send's latency in microseconds; rec
	// is the acknowledging goroutine's recorder.
	hist *latency.Histogram
	rec  *latency.Recorder
	// Java's sample of integer-ms latencies for the printed percentiles:
	// every sampling-th successful completion.
	sampling  int64
	samples   []int32
	nSamples  int
	iteration int64

	// window is the current reporting window, the acknowledging
	// goroutine's alone; cut hands a finished one to the printer.
	window windowCut
	cuts   chan<- windowCut
	// quiet stops this Stats' window lines (the whole run's, once the
	// steady state has begun); its windows are still cut and recorded.
	quiet atomic.Bool
	// banner is printed once before the first window line ("In steady
	// state."); the printer alone reads and clears it.
	banner string
	// intervals are the windows cut, appended by the printer.
	intervals []windowCut
}

// windowCut is one finished reporting window.
type windowCut struct {
	stats                              *sendStats
	startMs, endMs                     int64 // the window's start; the ack that ended it
	count, bytes, totalLatency, maxLat int64
	print                              bool
}

func newSendStats(numRecords, intervalMs, nowMs int64, cuts chan<- windowCut) *sendStats {
	sampling := int64(1)
	if numRecords > 0 {
		sampling = numRecords / min(numRecords, maxLatencySamples)
	}
	h := latency.New(histogramLowest, histogramHighest, histogramDigits)
	return &sendStats{
		startMs:  nowMs,
		interval: intervalMs,
		hist:     h,
		rec:      h.NewRecorder(),
		sampling: sampling,
		samples:  make([]int32, max(numRecords/sampling+1, 0)),
		window:   windowCut{startMs: nowMs},
		cuts:     cuts,
	}
}

// record adds one acknowledged send: its latency in Java's integer
// milliseconds and in microseconds, its value bytes, and the time it was
// acknowledged. When the window is over it is cut and handed to the
// printer, so the window line follows the first ack after the window ends
// as in Java, but is formatted elsewhere.
func (s *sendStats) record(latencyMs, latencyUs, bytes, nowMs int64) {
	s.count.Add(1)
	s.bytes.Add(bytes)
	s.totalLatency.Add(latencyMs)
	if latencyMs > s.maxLatency.Load() {
		s.maxLatency.Store(latencyMs)
	}
	s.rec.Record(latencyUs)
	if s.iteration%s.sampling == 0 && s.nSamples < len(s.samples) {
		s.samples[s.nSamples] = int32(latencyMs)
		s.nSamples++
	}
	s.iteration++
	w := &s.window
	w.count++
	w.bytes += bytes
	w.totalLatency += latencyMs
	w.maxLat = max(w.maxLat, latencyMs)
	if nowMs-w.startMs >= s.interval {
		w.stats, w.endMs, w.print = s, nowMs, !s.quiet.Load()
		s.cuts <- *w
		s.window = windowCut{startMs: nowMs}
	}
}

// sendStart is what a record carries through the producer so that its
// completion can be measured and attributed.
type sendStart struct {
	at     time.Time // send time, monotonic
	ms     int64     // the same in Java's wall-clock milliseconds
	bytes  int64
	steady bool // sent at or after the warm-up records
	// state is pending until the record completes, or expires first
	// (delivery.timeout.ms); whichever comes first counts it.
	state atomic.Int32
}

const (
	recordPending int32 = iota
	recordCompleted
	recordExpired
)

// inFlight is the records sent and not yet completed, oldest first, so
// that the expiry watchdog only looks at the head. Records are appended in
// send order, which is also the order of their deadlines.
type inFlight struct {
	mu      sync.Mutex
	records []*sendStart
	head    int
}

func (f *inFlight) push(s *sendStart) {
	f.mu.Lock()
	f.records = append(f.records, s)
	f.mu.Unlock()
}

// expire marks pending records sent before cutoffMs as expired and returns
// them; completed ones at the head are dropped on the way.
func (f *inFlight) expire(cutoffMs int64) []*sendStart {
	f.mu.Lock()
	defer f.mu.Unlock()
	var expired []*sendStart
	for f.head < len(f.records) {
		s := f.records[f.head]
		if s.state.Load() == recordPending {
			if s.ms >= cutoffMs {
				break
			}
			if !s.state.CompareAndSwap(recordPending, recordExpired) {
				continue // completed just now; look at it again
			}
			expired = append(expired, s)
		}
		f.records[f.head] = nil
		f.head++
	}
	if f.head > 4096 && f.head*2 > len(f.records) {
		f.records = append(f.records[:0], f.records[f.head:]...)
		f.head = 0
	}
	return expired
}

// producerRun sends the plan's records and counts their completions; at
// the end sent = acked + failed.
type producerRun struct {
	ctx  context.Context // a signal ends it: failures then go unprinted, as Java prints nothing more
	plan *producerPlan
	// producers are the run's lanes: sarama keeps one request in flight per
	// idempotent producer, so max.in.flight.requests.per.connection
	// producers, each with its own connection and producer id, keep that
	// many requests in flight per broker as Java does. Records go to one
	// lane a batch at a time. A transactional run has one lane.
	producers []sarama.AsyncProducer
	laneBatch int64 // records sent to a lane before the next one
	wall      clock.Wall
	errOut    func(string) // a failed send's exception line (stderr)

	whole  *sendStats
	steady atomic.Pointer[sendStats] // from the first record after the warm-up
	cuts   chan windowCut

	inFlight inFlight

	sent, acked, failed atomic.Int64
	// errorsByClass counts failures by Java exception class; failures are
	// rare, so a lock is fine here.
	errMu         sync.Mutex
	errorsByClass map[string]int64
}

func newProducerRun(plan *producerPlan, producers []sarama.AsyncProducer, wall clock.Wall, errOut func(string)) *producerRun {
	r := &producerRun{plan: plan, producers: producers, laneBatch: plan.laneBatch, wall: wall, errOut: errOut,
		cuts: make(chan windowCut, 64), errorsByClass: map[string]int64{}}
	r.whole = newSendStats(plan.numRecords, plan.reportingInterval, wall.Ms(), r.cuts)
	return r
}

// run sends every record, then waits for all completions. It returns once
// the producer is closed and every completion is counted.
func (r *producerRun) run(ctx context.Context) error {
	r.ctx = ctx
	plan := r.plan
	// The stats have one writer: every lane's completions meet in one
	// channel read by one goroutine.
	type completion struct {
		msg *sarama.ProducerMessage
		err error
	}
	completions := make(chan completion, 1024)
	var lanes sync.WaitGroup
	for _, p := range r.producers {
		lanes.Add(2)
		go func() {
			defer lanes.Done()
			for msg := range p.Successes() {
				completions <- completion{msg: msg}
			}
		}()
		go func() {
			defer lanes.Done()
			for perr := range p.Errors() {
				completions <- completion{msg: perr.Msg, err: perr.Err}
			}
		}()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range completions {
			r.complete(c.msg, c.err)
		}
	}()
	go func() {
		lanes.Wait()
		close(completions)
	}()
	producer := r.producers[0]

	// Java fails a record whose delivery.timeout.ms passes before it is
	// acknowledged; sarama has no such deadline, so a watchdog expires
	// records here and their late completions are ignored.
	stopWatchdog := make(chan struct{})
	watchdogDone := make(chan struct{})
	go func() {
		defer close(watchdogDone)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopWatchdog:
				return
			case <-tick.C:
				now := r.wall.Ms()
				for _, s := range r.inFlight.expire(now - plan.deliveryTimeout.Milliseconds()) {
					r.fail(fmt.Sprintf("org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for %s: %d ms has passed since the record was sent",
						plan.topic, now-s.ms))
				}
			}
		}
	}()
	defer func() {
		close(stopWatchdog)
		<-watchdogDone
	}()

	// Java's first send() waits for the topic's metadata, so its throttle
	// sees time pass from the second record on; ours has the metadata
	// already and a short run could end within the start's millisecond,
	// never throttled. Starting the throttle's clock a millisecond early
	// makes it apply from the first record, as Java's does.
	throttler := throttle.New(plan.throughput, r.wall.Ms()-1, r.wall.Ms)
	txnStart := int64(0)
	inTxn := false
	var loopErr error
	lane := 0
	input := producer.Input()
	blockTimer := time.NewTimer(time.Hour)
	blockTimer.Stop()
	for i := int64(0); i < plan.numRecords; i++ {
		if ctx.Err() != nil {
			loopErr = ctx.Err()
			break
		}
		if plan.warmupRecords > 0 && i == plan.warmupRecords {
			steady := newSendStats(plan.numRecords-plan.warmupRecords, plan.reportingInterval, r.wall.Ms(), r.cuts)
			steady.banner = "In steady state."
			r.steady.Store(steady)
			r.whole.quiet.Store(true)
		}
		value := plan.payloads.payload(i)
		if plan.transactional && !inTxn {
			if err := producer.BeginTxn(); err != nil {
				loopErr = err
				break
			}
			inTxn = true
			txnStart = r.wall.Ms()
		}
		at := r.wall.Time()
		start := at.UnixMilli()
		if size := int64(len(value) + recordOverhead); size > plan.maxRequestSize {
			// Java refuses such a record in send() and hands the callback the exception.
			r.sent.Add(1)
			r.fail(fmt.Sprintf("org.apache.kafka.common.errors.RecordTooLargeException: The message is %d bytes when serialized which is larger than %d, which is the value of the max.request.size configuration.", size, plan.maxRequestSize))
			continue
		}
		meta := &sendStart{at: at, ms: start, bytes: int64(len(value)), steady: plan.warmupRecords > 0 && i >= plan.warmupRecords}
		if len(r.producers) > 1 && i > 0 && i%r.laneBatch == 0 {
			lane = (lane + 1) % len(r.producers)
			input = r.producers[lane].Input()
		}
		msg := &sarama.ProducerMessage{
			Topic:    plan.topic,
			Key:      plan.keys.key(i),
			Value:    sarama.ByteEncoder(value),
			Metadata: meta,
		}
		r.sent.Add(1)
		r.inFlight.push(meta)
		select {
		case input <- msg:
		default:
			// The producer's buffer is full: wait as Java's send() does, at
			// most max.block.ms, then fail the record with its exception.
			blockTimer.Reset(plan.maxBlock)
			select {
			case input <- msg:
				if !blockTimer.Stop() {
					<-blockTimer.C
				}
			case <-blockTimer.C:
				r.complete(msg, fmt.Errorf("%w: Failed to allocate memory within the configured max blocking time %d ms.", errBufferExhausted, plan.maxBlock.Milliseconds()))
			case <-ctx.Done():
				r.complete(msg, ctx.Err())
				loopErr = ctx.Err()
			}
		}
		if loopErr != nil {
			break
		}
		if plan.transactional && plan.transactionMs <= start-txnStart {
			if err := producer.CommitTxn(); err != nil {
				loopErr = err
				break
			}
			inTxn = false
		}
		if throttler.ShouldThrottle(i, start) {
			if err := throttler.Throttle(ctx); err != nil {
				loopErr = err
				break
			}
		}
	}
	if inTxn && loopErr == nil {
		loopErr = producer.CommitTxn()
	}
	// Like Java's close(), wait for the records still in flight; sarama
	// would fail the ones it is still retrying when it shuts down, so give
	// them until delivery.timeout.ms has passed since the last send.
	deadline := time.Now().Add(plan.deliveryTimeout)
	for r.acked.Load()+r.failed.Load() < r.sent.Load() && time.Now().Before(deadline) && ctx.Err() == nil {
		_ = clock.Sleep(ctx, 5*time.Millisecond)
	}
	// AsyncClose, not Close: Close drains the Successes and Errors channels
	// itself, and the completions it swallows would be missing from the
	// counts. Our readers end when sarama closes both channels.
	for _, p := range r.producers {
		p.AsyncClose()
	}
	wg.Wait()
	r.whole.rec.Flush()
	if s := r.steady.Load(); s != nil {
		s.rec.Flush()
	}
	return loopErr
}

// complete counts a completion. Only successes reach the stats (Kafka 3.5+);
// a failure prints the exception on stderr, as the original's callback does.
func (r *producerRun) complete(msg *sarama.ProducerMessage, err error) {
	start, _ := msg.Metadata.(*sendStart)
	if !start.state.CompareAndSwap(recordPending, recordCompleted) {
		return // already counted as expired
	}
	if err != nil {
		r.fail(exceptionLine(err))
		return
	}
	r.acked.Add(1)
	now := r.wall.Time()
	nowMs := now.UnixMilli()
	latMs, latUs := nowMs-start.ms, now.Sub(start.at).Microseconds()
	r.whole.record(latMs, latUs, start.bytes, nowMs)
	if start.steady {
		if s := r.steady.Load(); s != nil {
			s.record(latMs, latUs, start.bytes, nowMs)
		}
	}
}

// fail counts a failed send and prints its exception line; once a signal
// has ended the run the records still in flight fail unprinted, counted
// as "interrupted".
func (r *producerRun) fail(line string) {
	r.failed.Add(1)
	if r.ctx != nil && r.ctx.Err() != nil {
		r.countError("interrupted")
		return
	}
	r.countError(exceptionClass(line))
	r.errOut(line)
}

func (r *producerRun) countError(class string) {
	r.errMu.Lock()
	r.errorsByClass[class]++
	r.errMu.Unlock()
}

func (r *producerRun) errorCounts() map[string]int64 {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if len(r.errorsByClass) == 0 {
		return nil
	}
	out := make(map[string]int64, len(r.errorsByClass))
	for k, v := range r.errorsByClass {
		out[k] = v
	}
	return out
}

// connectClient connects to the cluster and waits for the topic's metadata,
// for at most max.block.ms as the Java producer's first send does. Unlike the
// original, which then fails every record after another max.block.ms, an
// unreachable cluster ends the run with one line.
func connectClient(ctx context.Context, s *clientSettings, maxBlock time.Duration, topic string) (sarama.Client, error) {
	timeout := fmt.Errorf("org.apache.kafka.common.errors.TimeoutException: Topic %s not present in metadata after %d ms.", topic, maxBlock.Milliseconds())
	ctx, cancel := context.WithTimeout(ctx, maxBlock)
	defer cancel()
	type connected struct {
		client sarama.Client
		err    error
	}
	done := make(chan connected, 1)
	go func() {
		for {
			client, err := sarama.NewClient(s.bootstrap, s.cfg)
			if err == nil {
				for ctx.Err() == nil {
					if parts, perr := client.Partitions(topic); perr == nil && len(parts) > 0 {
						done <- connected{client: client}
						return
					}
					_ = clock.Sleep(ctx, 100*time.Millisecond)
					_ = client.RefreshMetadata(topic)
				}
				client.Close()
				done <- connected{err: timeout}
				return
			}
			var cfgErr sarama.ConfigurationError
			if errors.As(err, &cfgErr) {
				done <- connected{err: fmt.Errorf("org.apache.kafka.common.config.ConfigException: %s", string(cfgErr))}
				return
			}
			if clock.Sleep(ctx, s.cfg.Metadata.Retry.Backoff) != nil {
				done <- connected{err: timeout}
				return
			}
		}
	}()
	select {
	case c := <-done:
		return c.client, c.err
	case <-ctx.Done():
		// The attempt in progress may still be dialling; the program ends
		// after this error, so it is left to finish on its own.
		return nil, timeout
	}
}
