package rmqbench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// consume is the Consumer class: a push consumer in clustering mode from
// the last offset, a line every report interval once ten snapshots exist,
// until a signal ends it.
func consume(ctx context.Context, d *diff, p *parsed, getenv func(string) string, out, errOut *lineout.Writer) ([]result.Test, error) {
	pl, err := newConsumerPlan(d, p, getenv, clock.NewWall().Ms())
	if err != nil {
		return nil, err
	}
	out.Line(consumerHeader(d, pl))
	if pl.reportMs <= 0 {
		return nil, illegalArgument() // scheduleAtFixedRate
	}
	selector := consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}
	if pl.hasFilterType && pl.hasExpression {
		// The type is checked first: an unknown one ends main before the
		// file is read.
		typ := consumer.TAG
		switch pl.filterType {
		case "TAG":
		case "SQL92":
			typ = consumer.SQL92
		default:
			return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Not support filter type! " + pl.filterType}, nil)
		}
		expr, ok := pl.readExpression()
		out.Line("Expression: " + expr)
		if !ok {
			// MixAll.file2String gave null: a null expression subscribes
			// to everything.
			expr = "*"
		}
		selector = consumer.MessageSelector{Type: typ, Expression: expr}
	}
	if err := pl.checkConfig(); err != nil {
		return nil, err
	}
	namesrv, err := resolveNamesrv(pl.namesrv)
	if err == nil {
		err = namesrvReachable(ctx, namesrv)
	}
	if err != nil {
		// The original's consumer.start() throws; main ends with its
		// stack trace and status 1. Ours says why in one line.
		return nil, cli.Failure(fmt.Sprintf("%s: cannot start the consumer: no name server answers at %s (%v)", ToolName, strings.Join(pl.namesrv, ";"), err))
	}
	run := &consumerRun{b2c: newHistogram(), s2c: newHistogram(), failRate: pl.failRate}
	opts := []consumer.Option{
		consumer.WithNameServer(namesrv),
		consumer.WithGroupName(pl.group),
		consumer.WithInstance(strconv.FormatInt(instanceMillis(), 10)),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromLastOffset),
		consumer.WithConsumeGoroutineNums(pl.threads),
		consumer.WithConsumeMessageBatchMaxSize(1),
		consumer.WithStrategy(consumer.AllocateByAveragely),
	}
	if pl.cred.enabled {
		opts = append(opts, consumer.WithCredentials(primitive.Credentials{AccessKey: pl.cred.accessKey, SecretKey: pl.cred.secretKey}))
	}
	if pl.trace {
		tc := &primitive.TraceConfig{Access: primitive.Local, NamesrvAddrs: namesrv, GroupName: pl.group}
		opts = append(opts, consumer.WithTrace(tc))
	}
	start := time.Now()
	c, err := startConsumer(opts, pl.topic, selector, run.listener)
	missing := err != nil && routeMissing(err)
	if err != nil && !missing {
		return nil, jvm.Uncaught(jvm.Exception{Class: "org.apache.rocketmq.client.exception.MQClientException",
			Message: strings.TrimSpace(err.Error())}, nil)
	}
	out.Line("Consumer Started.")
	var mu sync.Mutex // guards c
	if missing {
		// The original starts on a topic the name server does not know
		// yet and finds its route when it appears (it asks every 30 s);
		// rocketmq-client-go refuses to start, so ours asks again.
		go func() {
			for clock.Sleep(ctx, routePoll) == nil {
				opts[2] = consumer.WithInstance(strconv.FormatInt(instanceMillis(), 10))
				nc, err := startConsumer(opts, pl.topic, selector, run.listener)
				mu.Lock()
				if err == nil && ctx.Err() == nil {
					c = nc
				} else if nc != nil {
					_ = nc.Shutdown()
				}
				done := c != nil
				mu.Unlock()
				if done || (err != nil && !routeMissing(err)) {
					return
				}
			}
		}()
	}

	var w window[consumerSnap]
	stop := make(chan struct{})
	schedule(ctx, start, time.Duration(pl.reportMs)*time.Millisecond, stop,
		func(now time.Time) { w.add(run.c.snapshot(now)) },
		func(now time.Time) {
			if w.full() {
				out.Line(consumerLine(d, now, w.last, run.c.maxB2C.Swap(0), run.c.maxS2C.Swap(0)))
			}
		})
	end := time.Now()
	mu.Lock()
	if c != nil {
		_ = c.Shutdown()
	}
	c = nil // a retry still under way shuts its own consumer down
	mu.Unlock()
	test, err := consumerTest(start, end, run, w.all)
	return []result.Test{test}, err
}

// routePoll is how often the original's client asks the name server for
// routes (pollNameServerInterval).
const routePoll = 30 * time.Second

// routeMissing reports whether a start failed only for want of the
// topic's route.
func routeMissing(err error) bool {
	return strings.Contains(err.Error(), "route info not found")
}

// startConsumer makes, subscribes and starts a push consumer; on a failed
// start the consumer is shut down and nil is returned.
func startConsumer(opts []consumer.Option, topic string, selector consumer.MessageSelector,
	listener func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error)) (rocketmq.PushConsumer, error) {
	c, err := rocketmq.NewPushConsumer(opts...)
	if err != nil {
		return nil, err
	}
	if err = c.Subscribe(topic, selector, listener); err == nil {
		err = c.Start()
	}
	if err != nil {
		_ = c.Shutdown()
		return nil, err
	}
	return c, nil
}

// consumerTest is the result file's record of a consumer run: every
// message the listener counted (redeliveries included, as the original
// counts them), the failures it returned, and B2C/S2C histograms.
func consumerTest(start, end time.Time, run *consumerRun, snaps []consumerSnap) (result.Test, error) {
	t := result.Test{
		Name: "consume", Start: start, End: end, ElapsedSeconds: end.Sub(start).Seconds(),
		Counts: result.Counts{Operations: run.c.count.Load(), Errors: errorCounts("consume_failed", run.c.failed.Load())},
	}
	prevAt, prev := start.UnixMilli(), int64(0)
	for _, s := range snaps {
		t.Intervals = append(t.Intervals, result.Interval{
			EndSeconds:      float64(s.At-start.UnixMilli()) / 1000,
			DurationSeconds: float64(s.At-prevAt) / 1000,
			Operations:      s.Count - prev,
		})
		prevAt, prev = s.At, s.Count
	}
	b2c, err := result.LatencyOf(run.b2c.Snapshot())
	if err != nil {
		return t, err
	}
	s2c, err := result.LatencyOf(run.s2c.Snapshot())
	if err != nil {
		return t, err
	}
	t.Latency = map[string]*result.Latency{"born_to_consume": b2c, "store_to_consume": s2c}
	return t, nil
}
