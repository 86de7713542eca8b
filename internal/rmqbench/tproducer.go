package rmqbench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// maxCheckResults is how many check-back answers each message carries in
// its body (the broker's check limit is below it).
const maxCheckResults = 20

// txHeaderLen is the body's prefix: batch id, message id, the local
// transaction's result and the check answers. Shorter bodies cannot hold
// it: every send of such a run fails, as the original's buffer overflows.
const txHeaderLen = 8 + 8 + 1 + maxCheckResults

// The original stores LocalTransactionState ordinals in the body.
const (
	txCommit   byte = 0
	txRollback byte = 1
	txUnknown  byte = 2
)

var txNames = [...]string{"COMMIT_MESSAGE", "ROLLBACK_MESSAGE", "UNKNOW"}

func txState(b byte) primitive.LocalTransactionState {
	switch b {
	case txCommit:
		return primitive.CommitMessageState
	case txRollback:
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

// txPlan is everything a transaction producer run needs.
type txPlan struct {
	namesrv                    []string
	topic                      string
	threads, size              int
	sendRollback, sendUnknown  float64
	checkRollback, checkUnkown float64
	batchID                    int64
	intervalMs                 int
	acl, trace                 bool
	cred                       credentials
	reportMs                   int
}

func newTxPlan(d *diff, p *parsed, getenv func(string) string, nowMs int64) (*txPlan, error) {
	var err error
	pl := &txPlan{namesrv: namesrvList(p, getenv)}
	pl.topic = p.str("t", "BenchmarkTest", true)
	if pl.threads, err = p.integer("w", 32, false); err != nil {
		return nil, err
	}
	if pl.size, err = p.integer("s", 2048, false); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *float64
	}{{"sr", &pl.sendRollback}, {"su", &pl.sendUnknown}, {"cr", &pl.checkRollback}, {"cu", &pl.checkUnkown}} {
		if *f.dst, err = p.double(f.key, 0); err != nil {
			return nil, err
		}
	}
	if pl.batchID, err = p.long("b", nowMs); err != nil {
		return nil, err
	}
	if pl.intervalMs, err = p.integer("i", 0, false); err != nil {
		return nil, err
	}
	pl.acl = p.boolean("a")
	pl.trace = p.boolean("m")
	pl.cred = credentials{enabled: pl.acl, accessKey: p.str("ak", "rocketmq2", false), secretKey: p.str("sk", "12345678", false)}
	pl.reportMs = 10000
	if d.ReportInterval {
		if pl.reportMs, err = p.integer("ri", 10000, false); err != nil {
			return nil, err
		}
	}
	if pl.threads <= 0 || pl.reportMs <= 0 {
		// newFixedThreadPool, then scheduleAtFixedRate, before any output.
		return nil, illegalArgument()
	}
	if err := threadsCheck(pl.threads); err != nil {
		return nil, err
	}
	return pl, nil
}

// txSnap is one of the transaction producer's snapshots.
type txSnap struct {
	At                       int64
	SendOK, SendFailed       int64
	RTTotal                  int64
	Checks, Unexpected, Dups int64
}

// txLine is the periodic line: window deltas, Max RT since the last line.
// 5.1.2+ count only successes in Send TPS; 4.9 counts every attempt. The
// rate is integer arithmetic in the original (count * 1000 / ms).
func txLine(d *diff, now time.Time, w []txSnap, maxRT int64) string {
	first, last := w[0], w[len(w)-1]
	ok, failed := last.SendOK-first.SendOK, last.SendFailed-first.SendFailed
	ms := max(last.At-first.At, 1)
	avg := fmt.Sprintf("%3s", javafmt.Fixed(ratio(last.RTTotal-first.RTTotal, ok), 1))
	checks, unexpected, dups := last.Checks-first.Checks, last.Unexpected-first.Unexpected, last.Dups-first.Dups
	if d.Pipes {
		return fmt.Sprintf("Current Time: %s | Send TPS: %5d | Max RT(ms): %5d | AVG RT(ms): %s | Send Failed: %d | Check: %d | UnexpectedCheck: %d | DuplicatedCheck: %d",
			humanTime(now), ok*1000/ms, maxRT, avg, failed, checks, unexpected, dups)
	}
	return fmt.Sprintf("Current Time: %d Send TPS:%5d Max RT(ms):%5d AVG RT(ms):%s Send Failed: %d check: %d unexpectedCheck: %d duplicatedCheck: %d ",
		now.UnixMilli(), (ok+failed)*1000/ms, maxRT, avg, failed, checks, unexpected, dups)
}

// txRun counts; its check listener hands the original's "unexpected
// check" lines to the printer instead of writing them.
type txRun struct {
	plan                     *txPlan
	sendOK, sendFailed       atomic.Int64
	rtTotal, maxRT           atomic.Int64
	checks, unexpected, dups atomic.Int64
	msgCount                 atomic.Int64
	startMs                  int64
	hist                     *latency.Histogram
	notes                    chan string

	mu   sync.Mutex
	seen map[int64]int // message id -> bit set of the check times seen
}

func (r *txRun) snapshot(now time.Time) txSnap {
	return txSnap{At: now.UnixMilli(), SendOK: r.sendOK.Load(), SendFailed: r.sendFailed.Load(), RTTotal: r.rtTotal.Load(),
		Checks: r.checks.Load(), Unexpected: r.unexpected.Load(), Dups: r.dups.Load()}
}

// body builds a message body as the original: random bytes carrying the
// batch id, a message id, the local transaction's result and the answers
// to the first maxCheckResults check-backs.
func (r *txRun) body() []byte {
	pl := r.plan
	b := make([]byte, pl.size)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	if pl.size < txHeaderLen {
		return nil
	}
	binary.BigEndian.PutUint64(b[0:], uint64(pl.batchID))
	binary.BigEndian.PutUint64(b[8:], uint64(r.startMs<<32|r.msgCount.Add(1)-1))
	pick := func(rollback, unknown float64) byte {
		switch {
		case rand.Float64() < rollback:
			return txRollback
		case rand.Float64() < unknown:
			return txUnknown
		}
		return txCommit
	}
	b[16] = pick(pl.sendRollback, pl.sendUnknown)
	for i := 0; i < maxCheckResults; i++ {
		b[17+i] = pick(pl.checkRollback, pl.checkUnkown)
	}
	return b
}

// ExecuteLocalTransaction answers with the result the body carries.
func (r *txRun) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	if len(m.Body) < txHeaderLen {
		return primitive.RollbackMessageState
	}
	return txState(m.Body[16])
}

// CheckLocalTransaction is the original's check-back: count it, note a
// repeated check time, flag checks of messages whose result was known, and
// answer with the body's check answer for this check time.
func (r *txRun) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	if len(m.Body) < txHeaderLen || int64(binary.BigEndian.Uint64(m.Body[0:])) != r.plan.batchID {
		return primitive.RollbackMessageState // not a message of this run
	}
	r.checks.Add(1)
	times, err := strconv.Atoi(m.GetProperty(primitive.PropertyTranscationCheckTimes))
	if err != nil {
		return primitive.RollbackMessageState
	}
	times = max(times, 1)
	id := int64(binary.BigEndian.Uint64(m.Body[8:]))
	bit := 1 << min(times-1, 62)
	r.mu.Lock()
	old, had := r.seen[id]
	r.seen[id] = old | bit
	if len(r.seen) > 200000 {
		clear(r.seen) // the original keeps the newest 200000 in an LRU map
	}
	r.mu.Unlock()
	if had && old&bit != 0 {
		r.dups.Add(1)
	}
	stamp := javafmt.FormatDate(time.Now(), "HH:mm:ss,SSS")
	ct := m.GetProperty(primitive.PropertyTranscationCheckTimes)
	if sent := m.Body[16]; sent != txUnknown {
		r.unexpected.Add(1)
		r.note(fmt.Sprintf("%s unexpected check: msgId=%s,txId=%s,checkTimes=%s,sendResult=%s", stamp, m.MsgId, m.TransactionId, ct, txNames[sent%3]))
		return txState(sent)
	}
	for i := 0; i < times-1 && i < maxCheckResults; i++ {
		if s := m.Body[17+i]; s != txUnknown {
			r.unexpected.Add(1)
			r.note(fmt.Sprintf("%s unexpected check: msgId=%s,txId=%s,checkTimes=%s,sendResult,lastCheckResult=%s", stamp, m.MsgId, m.TransactionId, ct, txNames[s%3]))
			return txState(s)
		}
	}
	if times-1 >= maxCheckResults {
		return primitive.UnkonwnState
	}
	return txState(m.Body[17+times-1])
}

// note hands a line to the printer, never blocking a check-back.
func (r *txRun) note(line string) {
	select {
	case r.notes <- line:
	default:
	}
}

func (r *txRun) sender(ctx context.Context, p rocketmq.TransactionProducer) {
	rec := r.hist.NewRecorder()
	defer rec.Flush()
	for ctx.Err() == nil {
		begin := time.Now()
		ok := false
		if body := r.body(); body != nil {
			res, err := p.SendMessageInTransaction(context.WithoutCancel(ctx), primitive.NewMessage(r.plan.topic, body))
			ok = err == nil && res != nil && res.SendResult != nil && res.Status == primitive.SendOK
		}
		end := time.Now()
		rt := end.UnixMilli() - begin.UnixMilli()
		r.rtTotal.Add(rt)
		maxInt64(&r.maxRT, rt)
		if ok {
			r.sendOK.Add(1)
			rec.Record(end.Sub(begin).Microseconds())
		} else {
			r.sendFailed.Add(1)
		}
		if r.plan.intervalMs > 0 && clock.Sleep(ctx, time.Duration(r.plan.intervalMs)*time.Millisecond) != nil {
			return
		}
	}
}

// produceTransactions is the TransactionProducer class: no start-up line,
// senders of half messages until stopped, check-backs answered from the
// bodies, a line every report interval once ten snapshots exist.
func produceTransactions(ctx context.Context, d *diff, p *parsed, getenv func(string) string, out, errOut *lineout.Writer) ([]result.Test, error) {
	now := instanceMillis()
	pl, err := newTxPlan(d, p, getenv, now)
	if err != nil {
		return nil, err
	}
	run := &txRun{plan: pl, startMs: now, hist: newHistogram(), notes: make(chan string, 1024), seen: map[int64]int{}}
	namesrv, err := resolveNamesrv(pl.namesrv)
	if err != nil {
		errOut.Line(ToolName + ": " + err.Error())
		namesrv = nil
	}
	// Without a name server every send fails, as the original's does.
	var prod rocketmq.TransactionProducer = noNamesrv{}
	if len(namesrv) > 0 {
		opts := producerOptions(namesrv, now, pl.cred, pl.trace, false, 5, 4096)
		opts[1] = producer.WithGroupName("benchmark_transaction_producer")
		opts = append(opts, producer.WithDefaultTopicQueueNums(1000))
		prod, err = rocketmq.NewTransactionProducer(run, opts...)
		if err != nil {
			return nil, jvm.Uncaught(jvm.Exception{Class: "org.apache.rocketmq.client.exception.MQClientException", Message: err.Error()}, nil)
		}
	}
	if err := prod.Start(); err != nil {
		return nil, jvm.Uncaught(jvm.Exception{Class: "org.apache.rocketmq.client.exception.MQClientException", Message: err.Error()}, nil)
	}
	defer func() { _ = prod.Shutdown() }()
	start := time.Now()
	var w window[txSnap]
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for {
			select {
			case line := <-run.notes:
				out.Line(line)
			case <-ctx.Done():
				return
			}
		}
	}()
	scheduled := make(chan struct{})
	go func() {
		defer close(scheduled)
		schedule(ctx, start, time.Duration(pl.reportMs)*time.Millisecond, nil,
			func(now time.Time) { w.add(run.snapshot(now)) },
			func(now time.Time) {
				if w.full() {
					out.Line(txLine(d, now, w.last, run.maxRT.Swap(0)))
				}
			})
	}()
	var wg sync.WaitGroup
	for i := 0; i < pl.threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.sender(ctx, prod)
		}()
	}
	wg.Wait() // senders stop on a signal only
	<-scheduled
	<-printed
	end := time.Now()
	ok := run.sendOK.Load()
	t := result.Test{Name: "send_transaction", Start: start, End: end, ElapsedSeconds: end.Sub(start).Seconds(),
		Counts: result.Counts{Operations: ok, Bytes: ok * int64(pl.size), Errors: errorCounts(
			"send_failed", run.sendFailed.Load(), "unexpected_check", run.unexpected.Load(), "duplicated_check", run.dups.Load())}}
	prevAt, prev := start.UnixMilli(), int64(0)
	for _, s := range w.all {
		t.Intervals = append(t.Intervals, result.Interval{EndSeconds: float64(s.At-start.UnixMilli()) / 1000,
			DurationSeconds: float64(s.At-prevAt) / 1000, Operations: s.SendOK - prev, Bytes: (s.SendOK - prev) * int64(pl.size)})
		prevAt, prev = s.At, s.SendOK
	}
	lat, err := result.LatencyOf(run.hist.Snapshot())
	t.Latency = map[string]*result.Latency{"send_transaction": lat}
	return []result.Test{t}, err
}
