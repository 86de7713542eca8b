package rmqbench

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/latency"
)

// Latencies are recorded in microseconds, up to a day.
const (
	histogramLowest  = 1
	histogramHighest = 24 * 3600 * 1_000_000
	histogramDigits  = 3
)

func newHistogram() *latency.Histogram {
	return latency.New(histogramLowest, histogramHighest, histogramDigits)
}

// schedule runs the originals' two timer tasks on one goroutine: snap every
// second from start+1 s, report every reportEvery from start+reportEvery
// (at fixed rate, as scheduleAtFixedRate; when both are due, the snapshot
// goes first, its deadline being the earlier one). It returns when stop is
// closed or ctx ends.
func schedule(ctx context.Context, start time.Time, reportEvery time.Duration, stop <-chan struct{},
	snap func(time.Time), report func(time.Time)) {
	if reportEvery <= 0 {
		reportEvery = time.Millisecond // ScheduledExecutorService rejects a period <= 0; never spin
	}
	nextSnap, nextReport := start.Add(time.Second), start.Add(reportEvery)
	timer := time.NewTimer(time.Until(nextSnap))
	defer timer.Stop()
	for {
		due := nextSnap
		if nextReport.Before(due) {
			due = nextReport
		}
		timer.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case now := <-timer.C:
			if !nextSnap.After(nextReport) {
				snap(now)
				nextSnap = nextSnap.Add(time.Second)
			} else {
				report(now)
				nextReport = nextReport.Add(reportEvery)
			}
		}
	}
}

// window keeps the newest windowSize snapshots, and every snapshot for
// the result file's intervals.
type window[T any] struct {
	last []T
	all  []T
}

func (w *window[T]) add(s T) {
	w.all = append(w.all, s)
	w.last = append(w.last, s)
	if len(w.last) > windowSize {
		w.last = w.last[1:]
	}
}

func (w *window[T]) full() bool { return len(w.last) == windowSize }

// maxInt64 raises m to v.
func maxInt64(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}

// ---- producer -----------------------------------------------------------

// sender is what a producer worker needs of the client.
type sender interface {
	SendSync(ctx context.Context, msgs ...*primitive.Message) (*primitive.SendResult, error)
	SendAsync(ctx context.Context, f func(context.Context, *primitive.SendResult, error), msgs ...*primitive.Message) error
}

// producerCounters are the original's StatsBenchmarkProducer: cumulative,
// updated by the senders, read by the scheduler.
type producerCounters struct {
	sendOK, sendFailed atomic.Int64
	respOK, respFailed atomic.Int64
	rtTotal, maxRT     atomic.Int64
}

func (c *producerCounters) snapshot(now time.Time) producerSnap {
	return producerSnap{At: now.UnixMilli(),
		SendOK: c.sendOK.Load(), SendFailed: c.sendFailed.Load(),
		RespOK: c.respOK.Load(), RespFailed: c.respFailed.Load(),
		RTTotal: c.rtTotal.Load()}
}

// sendJob is what one sender needs: its share of -q (0 = forever) and
// the message settings.
type sendJob struct {
	share      int64
	topic      string
	body       []byte
	keys       bool
	tagCount   int64
	delayLevel int // 0: no delay
	namesrv    []string
	// refused: the original's client refuses every message before it is
	// sent (producerPlan.refused).
	refused bool
}

// producerRun counts and records; it never formats.
type producerRun struct {
	c    producerCounters
	hist *latency.Histogram
	// namesrvDown is the error of the last failed name-server probe, set
	// by a sender that stopped because no name server answers.
	namesrvDown atomic.Pointer[error]
	inflight    atomic.Int64
}

func (j *sendJob) message() *primitive.Message {
	m := primitive.NewMessage(j.topic, j.body)
	if j.keys {
		m.WithKeys([]string{strconv.FormatInt(time.Now().Unix(), 10)})
	}
	if j.tagCount > 0 {
		m.WithTag("tag" + strconv.FormatInt(time.Now().UnixMilli()%j.tagCount, 10))
	}
	if j.delayLevel > 0 {
		m.WithDelayTimeLevel(j.delayLevel)
	}
	return m
}

// record counts one finished attempt as the original does and returns
// whether the sender pauses (bounded: the sender has a -q quota).
func (r *producerRun) record(rec *latency.Recorder, begin time.Time, err error, bounded bool) (pause bool) {
	switch classify(err) {
	case sent:
		end := time.Now()
		rt := end.UnixMilli() - begin.UnixMilli()
		r.c.sendOK.Add(1)
		r.c.respOK.Add(1)
		r.c.rtTotal.Add(rt)
		maxInt64(&r.c.maxRT, rt)
		us := end.Sub(begin).Microseconds()
		if rec != nil {
			rec.Record(us)
		} else {
			r.hist.Record(us)
		}
		return false
	case responseFailed:
		r.c.respFailed.Add(1)
		return true
	case sendFailedNow:
		r.c.sendFailed.Add(1)
		return false
	case sendRefused:
		r.c.sendFailed.Add(1)
		return !bounded
	default:
		r.c.sendFailed.Add(1)
		return true
	}
}

// senderGone reports whether a sender whose attempt failed for want of a
// route should stop as the original's does when no name server answers:
// its thread dies on an IllegalStateException before counting anything.
func (r *producerRun) senderGone(ctx context.Context, j *sendJob, err error, succeeded bool) bool {
	if succeeded || len(j.namesrv) == 0 || classify(err) != sendFailedNow {
		return false
	}
	if perr := namesrvReachable(ctx, j.namesrv); perr != nil && ctx.Err() == nil {
		r.namesrvDown.Store(&perr)
		// The original's thread spends its client's connect timeout
		// before it dies; so the summary has the original's form.
		_ = clock.Sleep(ctx, failurePause)
		return true
	}
	return false
}

// syncSender is one of the original's sender threads in sync mode.
func (r *producerRun) syncSender(ctx context.Context, p sender, j *sendJob) {
	rec := r.hist.NewRecorder()
	defer rec.Flush()
	succeeded := false
	for n := int64(0); j.share == 0 || n < j.share; n++ {
		if ctx.Err() != nil {
			return
		}
		if j.refused {
			r.c.sendFailed.Add(1)
			continue
		}
		msg := j.message()
		begin := time.Now()
		// A signal does not cut a send short: the client would retry a
		// cancelled request, storing messages nobody counts. The send
		// ends within its timeout and is counted; then the sender stops.
		_, err := p.SendSync(context.WithoutCancel(ctx), msg)
		if ctx.Err() != nil {
			r.record(rec, begin, err, j.share > 0)
			return
		}
		if !succeeded && r.senderGone(ctx, j, err, succeeded) {
			return
		}
		if err == nil {
			succeeded = true
		}
		if r.record(rec, begin, err, j.share > 0) {
			if clock.Sleep(ctx, failurePause) != nil {
				return
			}
		}
	}
}

// asyncLimit is the original's throttle: while more than this many async
// sends wait for their callback, the sender sleeps 100 ms.
const asyncLimit = 10000

// asyncSender is the one sender of async mode. It returns once every
// callback has run (or ctx ends), so the summary counts every send.
func (r *producerRun) asyncSender(ctx context.Context, p sender, j *sendJob) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for n := int64(0); j.share == 0 || n < j.share; n++ {
		for r.inflight.Load() > asyncLimit {
			if clock.Sleep(ctx, 100*time.Millisecond) != nil {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		if j.refused {
			r.c.sendFailed.Add(1)
			continue
		}
		msg := j.message()
		begin := time.Now()
		r.inflight.Add(1)
		wg.Add(1)
		err := p.SendAsync(context.WithoutCancel(ctx), func(_ context.Context, _ *primitive.SendResult, err error) {
			defer wg.Done()
			defer r.inflight.Add(-1)
			r.record(nil, begin, err, j.share > 0)
		}, msg)
		if err != nil {
			// Refused before it left: the callback will not run.
			r.inflight.Add(-1)
			wg.Done()
			if r.record(nil, begin, err, j.share > 0) && clock.Sleep(ctx, failurePause) != nil {
				return
			}
		}
	}
}

// ---- consumer -----------------------------------------------------------

// consumerCounters are the original's StatsBenchmarkConsumer.
type consumerCounters struct {
	count, b2cTotal, s2cTotal, failed atomic.Int64
	maxB2C, maxS2C                    atomic.Int64 // since the last report
}

func (c *consumerCounters) snapshot(now time.Time) consumerSnap {
	return consumerSnap{At: now.UnixMilli(), Count: c.count.Load(),
		B2CTotal: c.b2cTotal.Load(), S2CTotal: c.s2cTotal.Load(), Failed: c.failed.Load()}
}

type consumerRun struct {
	c        consumerCounters
	b2c, s2c *latency.Histogram
	failRate float64
	// delivered counts every message the client handed over (also the
	// ones after the first of a batch, which the original ignores).
	delivered atomic.Int64
}

// listener is the original's MessageListenerConcurrently: it looks only
// at the first message of what it is given.
func (r *consumerRun) listener(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	if len(msgs) == 0 {
		return consumer.ConsumeSuccess, nil
	}
	r.delivered.Add(int64(len(msgs)))
	m := msgs[0]
	now := time.Now().UnixMilli()
	b2c, s2c := now-m.BornTimestamp, now-m.StoreTimestamp
	r.c.count.Add(1)
	r.c.b2cTotal.Add(b2c)
	r.c.s2cTotal.Add(s2c)
	maxInt64(&r.c.maxB2C, b2c)
	maxInt64(&r.c.maxS2C, s2c)
	// The listener runs on the client's goroutines, not ours: no
	// per-worker recorder to hand out, so it records under the
	// histogram's lock.
	r.b2c.Record(max(b2c, 0) * 1000)
	r.s2c.Record(max(s2c, 0) * 1000)
	if r.failRate > 0 && rand.Float64() < r.failRate {
		r.c.failed.Add(1)
		return consumer.ConsumeRetryLater, nil
	}
	return consumer.ConsumeSuccess, nil
}

// ---- batch producer -------------------------------------------------------

type batchCounters struct {
	sendOK, sendFailed atomic.Int64
	msgOK, msgFailed   atomic.Int64
	rtTotal, maxRT     atomic.Int64
}

func (c *batchCounters) snapshot(now time.Time) batchSnap {
	return batchSnap{At: now.UnixMilli(), SendOK: c.sendOK.Load(), SendFailed: c.sendFailed.Load(),
		MsgOK: c.msgOK.Load(), MsgFailed: c.msgFailed.Load(), RTTotal: c.rtTotal.Load()}
}

type batchRun struct {
	c    batchCounters
	hist *latency.Histogram
}

// batchSender is one of the batch producer's threads: batches of the
// shared body with keys, tags and properties as the original builds them.
func (r *batchRun) batchSender(ctx context.Context, p sender, pl *batchPlan) {
	if pl.batch <= 0 {
		// The original's sender returns on an empty batch (and dies on a
		// negative size): nothing is ever sent.
		return
	}
	rec := r.hist.NewRecorder()
	defer rec.Flush()
	for ctx.Err() == nil {
		msgs := make([]*primitive.Message, pl.batch)
		start := r.c.msgOK.Load()
		for i := range msgs {
			m := primitive.NewMessage(pl.topic, pl.body)
			if pl.keys {
				m.WithKeys([]string{strconv.FormatInt(time.Now().Unix(), 10)})
			}
			if pl.tagCount > 0 {
				m.WithTag("tag" + strconv.FormatInt(start%int64(pl.tagCount)+int64(i), 10))
			}
			if pl.propertySize > 0 {
				size := 0
				for k := 0; size <= pl.propertySize; k++ {
					key, val := "prop"+strconv.Itoa(k), "hello"+strconv.FormatInt(start+int64(k), 10)
					m.WithProperty(key, val)
					size += len(key) + len(val)
				}
			}
			msgs[i] = m
		}
		begin := time.Now()
		res, err := p.SendSync(context.WithoutCancel(ctx), msgs...)
		if err == nil && res != nil && res.Status == primitive.SendOK {
			end := time.Now()
			rt := end.UnixMilli() - begin.UnixMilli()
			r.c.sendOK.Add(1)
			r.c.msgOK.Add(int64(pl.batch))
			r.c.rtTotal.Add(rt)
			maxInt64(&r.c.maxRT, rt)
			rec.Record(end.Sub(begin).Microseconds())
			continue
		}
		r.c.sendFailed.Add(1)
		r.c.msgFailed.Add(int64(pl.batch))
		if ctx.Err() == nil && (classify(err) == sendFailedPause || classify(err) == responseFailed || classify(err) == sendRefused) {
			if clock.Sleep(ctx, failurePause) != nil {
				return
			}
		}
	}
}
