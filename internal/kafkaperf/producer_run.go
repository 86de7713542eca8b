package kafkaperf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/throttle"
)

// record adds one acknowledged send: its latency in Java's integer
// milliseconds and in microseconds, its value bytes, and the time it was
// acknowledged. When the window is over it is cut and handed to the
// printer, so the window line follows the first ack after the window ends
// as in Java, but is formatted elsewhere. The caller holds the run's
// statsMu.
func (s *sendStats) record(latencyMs, latencyUs, bytes, nowMs int64) {
	s.count++
	s.bytes += bytes
	s.totalLatency += latencyMs
	s.maxLatency = max(s.maxLatency, latencyMs)
	s.rec.Record(latencyUs)
	// Java keeps completion number k when k % sampling == 0; counting
	// down to the next kept one spares a division per ack.
	if s.untilSample == 0 {
		if s.nSamples < len(s.samples) {
			s.samples[s.nSamples] = int32(latencyMs)
			s.nSamples++
		}
		s.untilSample = s.sampling
	}
	s.untilSample--
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

// producerRun sends the plan's records through one franz-go client and
// counts their completions; at the end sent = acked + failed. franz-go
// calls every completion (promise) from one goroutine, so the stats have
// one writer.
type producerRun struct {
	ctx    context.Context // a signal ends it: failures then go unprinted, as Java prints nothing more
	plan   *producerPlan
	client *kgo.Client
	wall   clock.Wall
	errOut func(string) // a failed send's exception line (stderr)
	// refused is set when the cluster refused the client's handshake or
	// login before the run: every send then fails with this line, as each
	// of Java's send() calls does.
	refused string

	whole  *sendStats
	steady atomic.Pointer[sendStats] // from the first record after the warm-up
	cuts   chan windowCut

	sent, acked, failed atomic.Int64
	// outstanding is the key and value bytes of the records sent and not
	// yet completed, which buffer.memory bounds as in Java; a send that
	// would overflow it waits (waiting set) until a completion signals space.
	outstanding atomic.Int64
	waiting     atomic.Bool
	space       chan struct{}
	// completedAll is closed by the completion that makes acked+failed
	// reach sent once the send loop is over (sendsDone set).
	sendsDone    atomic.Bool
	completedAll chan struct{}
	closeOnce    sync.Once
	// statsMu orders the acks' recording against the final flush of the
	// latency recorders and the snapshots (snapshots): a run ended by its
	// context flushes and reads the stats while late completions may still
	// arrive. franz-go calls promises one at a time, so the lock is never
	// contended on the ack path.
	statsMu sync.Mutex

	// records are kgo.Records whose promise has run, to be sent again: a
	// record a run allocates per send is most of its garbage. franz-go
	// reads nothing of a record once its promise has returned.
	records sync.Pool

	// errorsByClass counts failures by Java exception class; failures are
	// rare, so a lock is fine here.
	errMu         sync.Mutex
	errorsByClass map[string]int64
}

func newProducerRun(plan *producerPlan, client *kgo.Client, wall clock.Wall, errOut func(string)) *producerRun {
	r := &producerRun{plan: plan, client: client, wall: wall, errOut: errOut,
		cuts: make(chan windowCut, 64), space: make(chan struct{}, 1), completedAll: make(chan struct{}),
		errorsByClass: map[string]int64{}}
	r.whole = newSendStats(plan.numRecords, plan.reportingInterval, wall.Time(), r.cuts)
	return r
}

// run sends every record, then waits, as Java's close() does, until every
// record has completed. franz-go fails a record only when it gave up on it
// and it was not written: delivery.timeout.ms (RecordDeliveryTimeout)
// expires records that no unanswered request carries, so there is no
// late success to lose.
func (r *producerRun) run(ctx context.Context) error {
	r.ctx = ctx
	plan := r.plan
	// Java's first send() waits for the topic's metadata, so its throttle
	// sees time pass from the second record on; ours has the metadata
	// already and a short run could end within the start's millisecond,
	// never throttled. Starting the throttle's clock a millisecond early
	// makes it apply from the first record, as Java's does.
	throttler := throttle.New(plan.throughput, r.wall.Ms()-1, r.wall.Ms)
	// One func value for every record: a method value made in the loop
	// would be allocated per send.
	promise := r.complete
	txnStart := int64(0)
	inTxn := false
	var loopErr error
	blockTimer := time.NewTimer(time.Hour)
	blockTimer.Stop()
	for i := int64(0); i < plan.numRecords; i++ {
		if ctx.Err() != nil {
			loopErr = ctx.Err()
			break
		}
		if plan.warmupRecords > 0 && i == plan.warmupRecords {
			steady := newSendStats(plan.numRecords-plan.warmupRecords, plan.reportingInterval, r.wall.Time(), r.cuts)
			steady.banner = "In steady state."
			r.steady.Store(steady)
			r.whole.quiet.Store(true)
		}
		if r.refused != "" {
			r.sent.Add(1)
			r.fail(r.refused)
			if throttler.ShouldThrottle(i, r.wall.Ms()) {
				if err := throttler.Throttle(ctx); err != nil {
					loopErr = err
					break
				}
			}
			continue
		}
		value := plan.payloads.payload(i)
		key := plan.keys.key(i)
		if plan.transactional && !inTxn {
			if err := r.client.BeginTransaction(); err != nil {
				loopErr = err
				break
			}
			inTxn = true
			txnStart = r.wall.Ms()
		}
		atNs := r.wall.UnixNano()
		start := atNs / 1e6
		size := int64(len(key) + len(value))
		serialized := size + recordOverhead
		switch {
		case serialized > plan.maxRequestSize:
			// Java refuses such a record in send() and hands the callback the exception.
			r.sent.Add(1)
			r.fail(fmt.Sprintf("org.apache.kafka.common.errors.RecordTooLargeException: The message is %d bytes when serialized which is larger than %d, which is the value of the max.request.size configuration.", serialized, plan.maxRequestSize))
			continue
		case serialized > plan.bufferMemory:
			r.sent.Add(1)
			r.fail(fmt.Sprintf("org.apache.kafka.common.errors.RecordTooLargeException: The message is %d bytes when serialized which is larger than the total memory buffer you have configured with the buffer.memory configuration.", serialized))
			continue
		}
		if r.outstanding.Load()+size > plan.bufferMemory && !r.waitForSpace(ctx, size, blockTimer) {
			r.sent.Add(1)
			if ctx.Err() != nil {
				loopErr = ctx.Err()
				r.fail(exceptionLine(ctx.Err()))
				break
			}
			// The buffer stayed full: Java's send() fails the record after
			// max.block.ms with this exception.
			r.fail(fmt.Sprintf("%v: Failed to allocate memory within the configured max blocking time %d ms.", errBufferExhausted, plan.maxBlock.Milliseconds()))
			continue
		}
		r.sent.Add(1)
		r.outstanding.Add(size)
		rec, _ := r.records.Get().(*kgo.Record)
		if rec == nil {
			rec = new(kgo.Record)
		}
		// Java's send time, to the millisecond: franz-go truncates the
		// timestamp so, and the latencies are measured from it.
		*rec = kgo.Record{Key: key, Value: value, Timestamp: time.UnixMilli(start)}
		r.client.Produce(context.Background(), rec, promise)
		if plan.transactional && plan.transactionMs <= start-txnStart {
			if err := r.commit(ctx); err != nil {
				loopErr = err
				inTxn = false
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
		loopErr = r.commit(ctx)
	}
	// Like Java's close(): wait for every record still in flight. franz-go
	// completes each one by delivery.timeout.ms at the latest, unless a
	// request that may have written it is still unanswered (then it waits
	// for the answer, as Java's idempotent producer does).
	r.sendsDone.Store(true)
	r.checkAllCompleted()
	select {
	case <-r.completedAll:
	case <-ctx.Done():
		if loopErr == nil {
			loopErr = ctx.Err()
		}
	}
	r.statsMu.Lock()
	r.whole.rec.Flush()
	if s := r.steady.Load(); s != nil {
		s.rec.Flush()
	}
	r.statsMu.Unlock()
	return loopErr
}

// snapshots reads the whole run's stats and, after a warm-up, the steady
// state's, at nowMs; late completions of a run its context ended wait
// meanwhile.
func (r *producerRun) snapshots(nowMs int64) (whole sendSnapshot, steady *sendSnapshot) {
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	whole = r.whole.snapshot(nowMs)
	if s := r.steady.Load(); s != nil {
		snap := s.snapshot(nowMs)
		steady = &snap
	}
	return whole, steady
}

// commit ends the transaction as Java's commitTransaction() does: every
// record of it is flushed first.
func (r *producerRun) commit(ctx context.Context) error {
	if err := r.client.Flush(ctx); err != nil {
		return err
	}
	return r.client.EndTransaction(ctx, kgo.TryCommit)
}

// waitForSpace waits until size more bytes fit in buffer.memory, at most
// max.block.ms; it reports whether they do.
func (r *producerRun) waitForSpace(ctx context.Context, size int64, timer *time.Timer) bool {
	r.waiting.Store(true)
	defer r.waiting.Store(false)
	timer.Reset(r.plan.maxBlock)
	defer timer.Stop()
	for r.outstanding.Load()+size > r.plan.bufferMemory {
		select {
		case <-r.space:
		case <-timer.C:
			return r.outstanding.Load()+size <= r.plan.bufferMemory
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// complete is the promise of every record: it counts the completion. Only
// successes reach the stats (Kafka 3.5+); a failure prints the exception
// on stderr, as the original's callback does.
func (r *producerRun) complete(rec *kgo.Record, err error) {
	if err != nil {
		r.fail(r.sendFailure(rec, err))
	} else {
		nowNs := r.wall.UnixNano()
		nowMs := nowNs / 1e6
		sentNs := rec.Timestamp.UnixNano()
		latMs, latUs := nowMs-sentNs/1e6, (nowNs-sentNs)/1e3
		bytes := int64(len(rec.Value))
		r.statsMu.Lock()
		r.whole.record(latMs, latUs, bytes, nowMs)
		if s := r.steady.Load(); s != nil && sentNs >= s.startNs {
			s.record(latMs, latUs, bytes, nowMs)
		}
		r.statsMu.Unlock()
		// Counted once recorded: the count that completes the run lets it
		// flush the recorders.
		r.acked.Add(1)
	}
	r.outstanding.Add(-int64(len(rec.Key) + len(rec.Value)))
	if r.waiting.Load() {
		select {
		case r.space <- struct{}{}:
		default:
		}
	}
	r.checkAllCompleted()
	*rec = kgo.Record{} // the pool keeps no payload alive
	r.records.Put(rec)
}

func (r *producerRun) checkAllCompleted() {
	if r.sendsDone.Load() && r.acked.Load()+r.failed.Load() >= r.sent.Load() {
		r.closeOnce.Do(func() { close(r.completedAll) })
	}
}

// sendFailure is the Java exception line of a record franz-go failed.
func (r *producerRun) sendFailure(rec *kgo.Record, err error) string {
	if errors.Is(err, kgo.ErrRecordTimeout) {
		return fmt.Sprintf("org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for %s-%d:%d ms has passed since batch creation",
			rec.Topic, rec.Partition, r.wall.Ms()-rec.Timestamp.UnixMilli())
	}
	if errors.Is(err, kgo.ErrRecordRetries) {
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return exceptionLine(ke)
		}
		return fmt.Sprintf("org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for %s-%d:%d ms has passed since batch creation",
			rec.Topic, rec.Partition, r.wall.Ms()-rec.Timestamp.UnixMilli())
	}
	var ke *kerr.Error
	var netErr net.Error
	if !errors.As(err, &ke) && (errors.Is(err, io.EOF) || errors.As(err, &netErr)) {
		// A connection lost with the record's request: Java's NetworkException.
		return exceptionLine(kerr.NetworkException)
	}
	return exceptionLine(err)
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

// authRefusal is a handshake or login the cluster refused while the
// producer waited for metadata: line is the exception Java's send()
// reports for it.
type authRefusal struct{ line string }

func (e *authRefusal) Error() string { return e.line }

// refusedAuth names a failed TLS handshake or SASL login as the Java
// client's exception line; ok is false for any other error.
func refusedAuth(err error) (line string, ok bool) {
	var verify *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var opErr *net.OpError
	var ke *kerr.Error
	switch {
	case errors.As(err, &verify), errors.As(err, &hostErr), errors.As(err, &authErr), errors.As(err, &invalid):
		return "org.apache.kafka.common.errors.SslAuthenticationException: SSL handshake failed", true
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		// A TLS alert from the broker (crypto/tls reports it so). In TLS
		// 1.3 the broker checks the client's certificate after the
		// client's half of the handshake, so Java meets that refusal
		// among the post-handshake messages; any other alert fails the
		// handshake itself.
		if msg := opErr.Err.Error(); strings.HasSuffix(msg, "bad certificate") || strings.HasSuffix(msg, "certificate required") {
			return "org.apache.kafka.common.errors.SslAuthenticationException: Failed to process post-handshake messages", true
		}
		return "org.apache.kafka.common.errors.SslAuthenticationException: SSL handshake failed", true
	case errors.As(err, &ke) && ke.Code == kerr.SaslAuthenticationFailed.Code:
		// franz-go appends the broker's message: that is Java's text.
		msg := ke.Description
		if i := strings.Index(err.Error(), ke.Error()+": "); i >= 0 {
			msg = err.Error()[i+len(ke.Error())+2:]
		}
		return "org.apache.kafka.common.errors.SaslAuthenticationException: " + msg, true
	}
	return "", false
}

// waitForTopic waits for the topic's metadata (asking with auto-creation
// allowed, as the Java producer does), for at most max.block.ms as the
// Java producer's first send does. Unlike the original, which then fails
// every record after another max.block.ms, an unreachable cluster ends the
// run with one line. A refused handshake or login is an *authRefusal:
// Java's sends fail with it and the run goes on to its final line.
func waitForTopic(ctx context.Context, cl *kgo.Client, topic string, maxBlock, backoff time.Duration) error {
	timeout := fmt.Errorf("org.apache.kafka.common.errors.TimeoutException: Topic %s not present in metadata after %d ms.", topic, maxBlock.Milliseconds())
	ctx, cancel := context.WithTimeout(ctx, maxBlock)
	defer cancel()
	for {
		req := kmsg.NewPtrMetadataRequest()
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, t)
		req.AllowAutoTopicCreation = true
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 && len(resp.Topics[0].Partitions) > 0 {
			return nil
		}
		if line, ok := refusedAuth(err); ok {
			return &authRefusal{line}
		}
		if ctx.Err() != nil || clock.Sleep(ctx, max(backoff, 10*time.Millisecond)) != nil {
			if parent := context.Cause(ctx); errors.Is(parent, context.Canceled) {
				return parent
			}
			return timeout
		}
	}
}
