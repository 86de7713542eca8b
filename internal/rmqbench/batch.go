package rmqbench

import (
	"context"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// produceBatches is the BatchProducer class: threads sending batches
// until stopped, a line every report interval once ten snapshots exist.
func produceBatches(ctx context.Context, d *diff, p *parsed, out, errOut *lineout.Writer) ([]result.Test, error) {
	pl, err := newBatchPlan(d, p)
	if err != nil {
		return nil, err
	}
	out.Write(batchHeader(d, pl))
	compressLine, err := pl.startup()
	if err != nil {
		return nil, err
	}
	if compressLine != "" {
		out.Line(compressLine)
	}
	namesrv, err := resolveNamesrv(pl.namesrv)
	if err != nil {
		errOut.Line(ToolName + ": " + err.Error())
		namesrv = nil
	}
	var client sender = noNamesrv{}
	if len(namesrv) > 0 {
		opts := producerOptions(namesrv, instanceMillis(), pl.cred, pl.trace, pl.compress, pl.compressLevel, pl.compressOver)
		opts[1] = producer.WithGroupName("benchmark_batch_producer")
		prod, err := rocketmq.NewProducer(opts...)
		if err == nil {
			err = prod.Start()
		}
		if err != nil {
			return nil, jvm.Uncaught(jvm.Exception{Class: "org.apache.rocketmq.client.exception.MQClientException", Message: err.Error()}, nil)
		}
		defer func() { _ = prod.Shutdown() }()
		client = prod
	}
	if err := pl.startErr(); err != nil {
		// The original's JVM lives on after this (the client's threads are
		// not daemons) until it is killed; ours ends.
		return nil, err
	}
	start := time.Now()
	run := &batchRun{hist: newHistogram()}
	var w window[batchSnap]
	scheduled := make(chan struct{})
	go func() {
		defer close(scheduled)
		schedule(ctx, start, time.Duration(pl.reportMs)*time.Millisecond, nil,
			func(now time.Time) { w.add(run.c.snapshot(now)) },
			func(now time.Time) {
				if w.full() {
					out.Line(batchLine(d, now, w.last, run.c.maxRT.Load()))
				}
			})
	}()
	var wg sync.WaitGroup
	for i := 0; i < pl.threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.batchSender(ctx, client, pl)
		}()
	}
	wg.Wait() // senders stop on a signal only
	<-scheduled
	end := time.Now()
	ok := run.c.msgOK.Load()
	t := result.Test{Name: "send_batch", Start: start, End: end, ElapsedSeconds: end.Sub(start).Seconds(),
		Counts: result.Counts{Operations: ok, Bytes: ok * int64(pl.size), Errors: errorCounts(
			"batches_failed", run.c.sendFailed.Load(), "messages_failed", run.c.msgFailed.Load())}}
	prevAt, prev := start.UnixMilli(), int64(0)
	for _, s := range w.all {
		t.Intervals = append(t.Intervals, result.Interval{EndSeconds: float64(s.At-start.UnixMilli()) / 1000,
			DurationSeconds: float64(s.At-prevAt) / 1000, Operations: s.MsgOK - prev, Bytes: (s.MsgOK - prev) * int64(pl.size)})
		prevAt, prev = s.At, s.MsgOK
	}
	lat, err := result.LatencyOf(run.hist.Snapshot())
	t.Latency = map[string]*result.Latency{"send_batch": lat}
	return []result.Test{t}, err
}
