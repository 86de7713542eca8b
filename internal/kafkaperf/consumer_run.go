package kafkaperf

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/clock"
)

// consumerRun consumes as a member of the group and keeps the numbers
// ConsumerPerformance prints. Records are handled on the partition
// goroutines; the counters they share are atomics.
type consumerRun struct {
	plan   *consumerPlan
	client sarama.Client
	clock  func() int64
	// reports takes each --show-detailed-stats report to the printer.
	reports chan<- detailedLine

	// The periodic report's state; nextReportMs lets the partition
	// goroutines skip the lock until a report is due.
	reportMu      sync.Mutex
	nextReportMs  atomic.Int64
	lastReportMs  int64
	lastRecords   int64
	lastBytes     int64
	lastRebalance int64

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
			now := r.clock()
			r.lastConsumedMs.Store(now)
			r.bytes.Add(int64(len(msg.Key) + len(msg.Value)))
			sess.MarkMessage(msg, "")
			read := r.records.Add(1)
			if r.plan.detailed && now >= r.nextReportMs.Load() {
				r.maybeReport(now)
			}
			if read >= r.plan.numRecords {
				r.cancel()
				return nil
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}

// maybeReport prints the periodic line when the reporting interval has
// passed since the last one, as the original checks on every record.
func (r *consumerRun) maybeReport(now int64) {
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	if now-r.lastReportMs < r.plan.reportingInterval {
		return
	}
	records, bytes, rebalance := r.records.Load(), r.bytes.Load(), r.rebalanceMs.Load()
	r.reports <- newDetailedLine(now, r.lastReportMs, bytes, records, bytes-r.lastBytes, records-r.lastRecords, rebalance-r.lastRebalance)
	r.lastReportMs, r.lastRecords, r.lastBytes, r.lastRebalance = now, records, bytes, rebalance
	r.nextReportMs.Store(now + r.plan.reportingInterval)
}

// run consumes until numRecords are read or no record came for timeoutMs,
// the join and an unreachable cluster included, as in the original's poll
// loop. It returns whether the timeout ended it.
func (r *consumerRun) run(ctx context.Context) (timedOut bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	defer cancel()
	r.startMs = r.clock()
	r.joinStartMs.Store(r.startMs)
	if r.plan.joinStartAtZero {
		r.joinStartMs.Store(0)
	}
	r.lastConsumedMs.Store(r.startMs)
	r.lastReportMs = r.startMs
	r.nextReportMs.Store(r.startMs + r.plan.reportingInterval)
	expired := func() bool { return r.clock()-r.lastConsumedMs.Load() > r.plan.timeoutMs }

	var group sarama.ConsumerGroup
	for {
		client, err := sarama.NewClient(r.plan.client.bootstrap, r.plan.client.cfg)
		if err == nil {
			r.client = client
			group, err = sarama.NewConsumerGroupFromClient(r.plan.groupID, client)
			if err != nil {
				client.Close()
				return false, err
			}
			break
		}
		if expired() || ctx.Err() != nil {
			r.endMs = r.clock()
			return true, nil
		}
		_ = clock.Sleep(ctx, 100*time.Millisecond)
	}
	defer r.client.Close()
	defer group.Close()

	consumeErr := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			topics := r.plan.topics
			if r.plan.include != nil {
				topics = r.matchingTopics()
				if len(topics) == 0 {
					// Nothing matches yet; look again, as a pattern subscription does.
					_ = clock.Sleep(ctx, 100*time.Millisecond)
					continue
				}
			}
			if err := group.Consume(ctx, topics, r); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) || ctx.Err() != nil {
					break
				}
				if fatalConsumeError(err) {
					consumeErr <- err
					cancel()
					return
				}
				// A broker that went away: the Java consumer keeps polling,
				// and the run ends at --timeout as it would without records.
				_ = clock.Sleep(ctx, r.plan.client.cfg.Metadata.Retry.Backoff)
			}
		}
		consumeErr <- nil
	}()

	// The monitor ends the run when no record has come for the timeout.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			if expired() {
				timedOut = true
				cancel()
				break loop
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

// consumerSnapshot is the run's numbers once it is over, which the summary
// line and the result file are made from.
type consumerSnapshot struct {
	startMs, endMs int64
	records, bytes int64
	rebalanceMs    int64
}

func (r *consumerRun) snapshot() consumerSnapshot {
	return consumerSnapshot{startMs: r.startMs, endMs: r.endMs, records: r.records.Load(), bytes: r.bytes.Load(), rebalanceMs: r.rebalanceMs.Load()}
}

// fatalConsumeError is an error the Java consumer throws out of poll()
// rather than retrying: a setting the client refuses, or a refusal by the
// broker that waiting does not change.
func fatalConsumeError(err error) bool {
	var cfgErr sarama.ConfigurationError
	return errors.As(err, &cfgErr) || errors.Is(err, sarama.ErrInvalidGroupId) ||
		errors.Is(err, sarama.ErrGroupAuthorizationFailed) || errors.Is(err, sarama.ErrTopicAuthorizationFailed) ||
		errors.Is(err, sarama.ErrClusterAuthorizationFailed) || errors.Is(err, sarama.ErrSASLAuthenticationFailed)
}
