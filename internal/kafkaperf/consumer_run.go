package kafkaperf

import (
	"context"
	"errors"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
)

// consumerPlan is one consumer run.
type consumerPlan struct {
	topics            []string       // explicit topic, or resolved from include
	include           *regexp.Regexp // --include, matched against the cluster's topics
	numRecords        int64
	timeoutMs         int64
	reportingInterval int64
	detailed          bool
}

// consumerRun consumes as a member of the group and keeps the numbers
// ConsumerPerformance prints. Records are handled on the partition
// goroutines; the counters they share are atomics.
type consumerRun struct {
	plan   *consumerPlan
	group  sarama.ConsumerGroup
	client sarama.Client
	clock  func() int64
	report func(detailedLine) // prints a --show-detailed-stats line

	startMs        int64
	joinStartMs    atomic.Int64
	rebalanceMs    atomic.Int64
	lastConsumedMs atomic.Int64
	records        atomic.Int64
	bytes          atomic.Int64
	endMs          int64

	cancel context.CancelFunc
}

// detailedLine is one periodic line's numbers.
type detailedLine struct {
	nowMs                int64
	totalBytes           int64
	totalRecords         int64
	intervalMs           int64
	intervalBytes        int64
	intervalRecords      int64
	intervalRebalanceMs  int64
	intervalFetchMs      int64
	intervalMBPerSec     float64
	intervalRecordsPerSe float64
}

// Setup runs when the group has assigned this member its partitions: the
// time since the join (or the last revocation) is rebalance time.
func (r *consumerRun) Setup(sarama.ConsumerGroupSession) error {
	r.rebalanceMs.Add(r.clock() - r.joinStartMs.Load())
	return nil
}

// Cleanup runs when the partitions are revoked; the next rebalance starts now.
func (r *consumerRun) Cleanup(sarama.ConsumerGroupSession) error {
	r.joinStartMs.Store(r.clock())
	return nil
}

// ConsumeClaim counts the records of one partition until the run has enough.
func (r *consumerRun) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			r.lastConsumedMs.Store(r.clock())
			r.bytes.Add(int64(len(msg.Key) + len(msg.Value)))
			sess.MarkMessage(msg, "")
			if r.records.Add(1) >= r.plan.numRecords {
				r.cancel()
				return nil
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}

// run consumes until numRecords are read or no record came for timeoutMs.
// It returns whether the timeout ended it.
func (r *consumerRun) run(ctx context.Context) (timedOut bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	defer cancel()
	r.startMs = r.clock()
	r.joinStartMs.Store(r.startMs)
	r.lastConsumedMs.Store(r.startMs)

	consumeErr := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			topics := r.plan.topics
			if r.plan.include != nil {
				topics = r.matchingTopics()
				if len(topics) == 0 {
					// Nothing matches yet; look again, as a pattern subscription does.
					select {
					case <-ctx.Done():
					case <-time.After(100 * time.Millisecond):
					}
					continue
				}
			}
			if err := r.group.Consume(ctx, topics, r); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) || ctx.Err() != nil {
					break
				}
				consumeErr <- err
				cancel()
				return
			}
		}
		consumeErr <- nil
	}()

	// The monitor is the original's poll loop seen from outside: it ends the
	// run on the timeout and makes the periodic report.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastReportMs := r.startMs
	var lastRecords, lastBytes, lastRebalance int64
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			now := r.clock()
			if now-r.lastConsumedMs.Load() > r.plan.timeoutMs {
				timedOut = true
				cancel()
				break loop
			}
			records := r.records.Load()
			if r.plan.detailed && records > lastRecords && now-lastReportMs >= r.plan.reportingInterval {
				bytes := r.bytes.Load()
				rebalance := r.rebalanceMs.Load()
				r.report(newDetailedLine(now, lastReportMs, bytes, records, bytes-lastBytes, records-lastRecords, rebalance-lastRebalance))
				lastReportMs, lastRecords, lastBytes, lastRebalance = now, records, bytes, rebalance
			}
		}
	}
	r.endMs = r.clock()
	err = <-consumeErr
	if r.records.Load() >= r.plan.numRecords {
		timedOut = false
	}
	return timedOut, err
}

func newDetailedLine(now, lastReport, totalBytes, totalRecords, dBytes, dRecords, rebalance int64) detailedLine {
	interval := now - lastReport
	fetch := interval - rebalance
	l := detailedLine{
		nowMs: now, totalBytes: totalBytes, totalRecords: totalRecords, intervalMs: interval,
		intervalBytes: dBytes, intervalRecords: dRecords, intervalRebalanceMs: rebalance, intervalFetchMs: fetch,
	}
	if fetch > 0 {
		l.intervalMBPerSec = 1000.0 * (float64(dBytes) / (1024 * 1024)) / float64(fetch)
		l.intervalRecordsPerSe = 1000.0 * float64(dRecords) / float64(fetch)
	}
	return l
}

// matchingTopics lists the cluster's topics that --include matches.
func (r *consumerRun) matchingTopics() []string {
	_ = r.client.RefreshMetadata()
	all, err := r.client.Topics()
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range all {
		if r.plan.include.MatchString(t) {
			out = append(out, t)
		}
	}
	return out
}
