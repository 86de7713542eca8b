package kafkaperf

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumerRun consumes as a member of the group and keeps the numbers
// ConsumerPerformance prints. One goroutine polls and counts, as the Java
// tool's loop does; the rebalance callbacks run on franz-go's goroutines
// during polls, so what they share is atomic.
type consumerRun struct {
	plan  *consumerPlan
	clock func() int64
	// reports takes each --show-detailed-stats report to the printer.
	reports chan<- detailedLine

	// The periodic report's state.
	lastReportMs  int64
	lastRecords   int64
	lastBytes     int64
	lastRebalance int64

	startMs        int64
	joinStartMs    atomic.Int64
	rebalanceMs    atomic.Int64
	lastConsumedMs int64
	records        int64
	bytes          int64
	endMs          int64
}

// pollInterval is the Java tool's poll(100 ms).
const pollInterval = 100 * time.Millisecond

// run consumes until numRecords are read or no record came for timeoutMs,
// the join and an unreachable or dying cluster included, as in the
// original's poll loop. It returns whether the timeout ended it.
func (r *consumerRun) run(ctx context.Context) (timedOut bool, err error) {
	r.startMs = r.clock()
	r.joinStartMs.Store(r.startMs)
	if r.plan.joinStartAtZero {
		r.joinStartMs.Store(0)
	}
	r.lastConsumedMs = r.startMs
	r.lastReportMs = r.startMs

	opts := append(r.plan.consumerClientOptions(),
		// The time from joining (or from losing the partitions) to being
		// assigned partitions is rebalance time.
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			r.rebalanceMs.Add(r.clock() - r.joinStartMs.Load())
		}),
		kgo.OnPartitionsRevoked(func(context.Context, *kgo.Client, map[string][]int32) {
			r.joinStartMs.Store(r.clock())
		}),
		kgo.OnPartitionsLost(func(context.Context, *kgo.Client, map[string][]int32) {
			r.joinStartMs.Store(r.clock())
		}),
	)
	if r.plan.groupID == "" {
		r.endMs = r.clock()
		return false, errors.New("org.apache.kafka.common.errors.InvalidGroupIdException: To use the group management or offset commit APIs, you must provide a valid group.id in the consumer configuration.")
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		r.endMs = r.clock()
		return false, err
	}
	defer client.Close()

	for r.records < r.plan.numRecords && r.clock()-r.lastConsumedMs <= r.plan.timeoutMs {
		if ctx.Err() != nil {
			break
		}
		pctx, cancel := context.WithTimeout(ctx, pollInterval)
		fetches := client.PollRecords(pctx, r.plan.maxPollRecords)
		cancel()
		if fetches.IsClientClosed() {
			break
		}
		for _, fe := range fetches.Errors() {
			if fatalConsumeError(fe.Err) {
				r.endMs = r.clock()
				return false, fe.Err
			}
			// Anything else (a broker that went away, a poll that timed
			// out): the Java consumer keeps polling, and the run ends at
			// --timeout as it would without records.
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			if r.records >= r.plan.numRecords {
				return
			}
			now := r.clock()
			r.lastConsumedMs = now
			r.records++
			r.bytes += int64(len(rec.Key) + len(rec.Value))
			if r.plan.detailed && now-r.lastReportMs >= r.plan.reportingInterval {
				r.report(now)
			}
		})
	}
	r.endMs = r.clock()
	return r.records < r.plan.numRecords && ctx.Err() == nil, nil
}

// report sends the periodic line, as the original checks on every record.
func (r *consumerRun) report(now int64) {
	rebalance := r.rebalanceMs.Load()
	r.reports <- newDetailedLine(now, r.lastReportMs, r.bytes, r.records, r.bytes-r.lastBytes, r.records-r.lastRecords, rebalance-r.lastRebalance)
	r.lastReportMs, r.lastRecords, r.lastBytes, r.lastRebalance = now, r.records, r.bytes, rebalance
}

func (r *consumerRun) snapshot() consumerSnapshot {
	return consumerSnapshot{startMs: r.startMs, endMs: r.endMs, records: r.records, bytes: r.bytes, rebalanceMs: r.rebalanceMs.Load()}
}

// fatalConsumeError is an error the Java consumer throws out of poll()
// rather than retrying: a refusal by the broker that waiting does not
// change.
func fatalConsumeError(err error) bool {
	return errors.Is(err, kerr.InvalidGroupID) || errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed) ||
		errors.Is(err, kerr.SaslAuthenticationFailed)
}
