package rmqbench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// runProducer is the Producer class: start-up lines, senders, a line every
// report interval once ten snapshots exist, and with -q the summary.
func runProducer(ctx context.Context, d *diff, p *parsed, getenv func(string) string, out, errOut *lineout.Writer) ([]result.Test, error) {
	pl, err := newProducerPlan(d, p, getenv)
	if err != nil {
		return nil, err
	}
	out.Write(producerHeader(d, pl))
	compressLine, err := pl.startup()
	if err != nil {
		return nil, err
	}
	if compressLine != "" {
		out.Line(compressLine)
	}
	start := time.Now()
	run := &producerRun{hist: newHistogram()}
	namesrv, rerr := resolveNamesrv(pl.namesrv)
	var client sender
	if rerr == nil && len(namesrv) > 0 && !pl.trace && !pl.compress {
		// The plain producer: our own sender (directsend.go).
		direct := newDirectProducer(namesrv, producerGroup, pl.cred)
		defer direct.Close()
		client = direct
	} else if rerr == nil && len(namesrv) > 0 {
		// Message traces and compression stay with rocketmq-client-go.
		prod, err := rocketmq.NewProducer(producerOptions(namesrv, instanceMillis(), pl.cred, pl.trace,
			pl.compress, pl.compressLevel, pl.compressOver)...)
		if err == nil {
			err = prod.Start()
		}
		if err != nil {
			return nil, jvm.Uncaught(jvm.Exception{Class: "org.apache.rocketmq.client.exception.MQClientException", Message: err.Error()}, nil)
		}
		defer func() { _ = prod.Shutdown() }()
		client = prod
	} else {
		// No usable name server: every send fails at once, as the
		// original's does ("No name server address, please set it.").
		client = noNamesrv{}
		if rerr != nil {
			errOut.Line(ToolName + ": " + rerr.Error())
		}
	}

	stop := make(chan struct{})
	var w window[producerSnap]
	scheduled := make(chan struct{})
	go func() {
		defer close(scheduled)
		schedule(ctx, start, time.Duration(pl.reportMs)*time.Millisecond, stop,
			func(now time.Time) { w.add(run.c.snapshot(now)) },
			func(now time.Time) {
				if w.full() {
					out.Line(producerLine(d, now, w.last, run.c.maxRT.Load()))
				}
			})
	}()

	shares := pl.shares
	if shares == nil {
		shares = make([]int64, pl.threads) // every sender runs until stopped
	}
	var wg sync.WaitGroup
	for _, share := range shares {
		job := &sendJob{share: share, topic: pl.topic, body: pl.body, keys: pl.keys, tagCount: int64(pl.tagCount), namesrv: namesrv, refused: pl.refused()}
		if pl.delay {
			job.delayLevel = pl.delayLevel
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if pl.async {
				run.asyncSender(ctx, client, job)
			} else {
				run.syncSender(ctx, client, job)
			}
		}()
	}
	wg.Wait()
	if pl.quantity <= 0 {
		<-ctx.Done() // senders only stop on a signal
	}
	close(stop)
	<-scheduled
	end := time.Now()
	if perr := run.namesrvDown.Load(); perr != nil {
		errOut.Line(fmt.Sprintf("%s: no name server answers at %s (%v); the senders stopped", ToolName, strings.Join(pl.namesrv, ";"), *perr))
	}
	if ctx.Err() == nil {
		// The original computes the summary over its last whole-second
		// snapshot, up to a second stale, so its Send Failed can lag the
		// Send Total printed beside it. Ours ends the window at the end
		// of the run, so the two agree; the summary's form still depends
		// on the snapshots the original would have had.
		long := len(w.last) > 1
		w.add(run.c.snapshot(end))
		window := w.last
		if !long {
			window = window[:1]
		}
		total := run.c.sendOK.Load() + run.c.sendFailed.Load()
		out.Line(producerComplete(d, window, total, run.c.sendFailed.Load(), run.c.respFailed.Load(), run.c.maxRT.Load()))
	}
	test, err := producerTest(start, end, pl, run, w.all)
	return []result.Test{test}, err
}

// producerTest is the result file's record of a producer run: the exact
// counters, per-second intervals and the send-latency histogram.
func producerTest(start, end time.Time, pl *producerPlan, run *producerRun, snaps []producerSnap) (result.Test, error) {
	ok := run.c.respOK.Load()
	t := result.Test{
		Name: "send", Start: start, End: end, ElapsedSeconds: end.Sub(start).Seconds(),
		Counts: result.Counts{Operations: ok, Bytes: ok * int64(pl.size), Errors: errorCounts(
			"send_failed", run.c.sendFailed.Load(),
			"response_failed", run.c.respFailed.Load())},
	}
	prevAt, prevOK := start.UnixMilli(), int64(0)
	for _, s := range snaps {
		t.Intervals = append(t.Intervals, result.Interval{
			EndSeconds:      float64(s.At-start.UnixMilli()) / 1000,
			DurationSeconds: float64(s.At-prevAt) / 1000,
			Operations:      s.RespOK - prevOK,
			Bytes:           (s.RespOK - prevOK) * int64(pl.size),
		})
		prevAt, prevOK = s.At, s.RespOK
	}
	lat, err := result.LatencyOf(run.hist.Snapshot())
	if err != nil {
		return t, err
	}
	t.Latency = map[string]*result.Latency{"send": lat}
	return t, nil
}
