package kafkaperf

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/throttle"
)

// producerPlan is one producer run, decided from the options before any
// record is sent.
type producerPlan struct {
	topic             string
	numRecords        int64
	warmupRecords     int64
	throughput        float64 // records/s; negative means unthrottled
	reportingInterval int64   // ms
	payloads          payloadSource
	transactional     bool
	transactionMs     int64 // commit interval when transactional
	printMetrics      bool
}

// payloadSource gives the value of record i.
type payloadSource interface {
	payload(i int64) []byte
}

// randomPayloads serves --record-size values: random A-Z bytes, a different
// value for every record as in Kafka 3.0+. Instead of drawing recordSize
// random letters per record (the cost that halved the original's
// throughput, PR #13410), values are windows at random offsets into one
// block of random letters drawn once; the block is never written again, so
// the producer may keep the slices until they are sent.
type randomPayloads struct {
	size  int
	block []byte
	rng   *rand.Rand
}

const randomBlockSize = 4 << 20

func newRandomPayloads(size int, seed uint64) *randomPayloads {
	rng := rand.New(rand.NewPCG(seed, 0))
	block := make([]byte, randomBlockSize+size)
	for i := range block {
		block[i] = byte('A' + rng.IntN(26))
	}
	return &randomPayloads{size: size, block: block, rng: rng}
}

func (p *randomPayloads) payload(int64) []byte {
	off := p.rng.IntN(randomBlockSize)
	return p.block[off : off+p.size : off+p.size]
}

// filePayloads picks one of the file's payloads at random for every record.
type filePayloads struct {
	values [][]byte
	rng    *rand.Rand
}

func (p *filePayloads) payload(int64) []byte { return p.values[p.rng.IntN(len(p.values))] }

// monotonicPayloads is --payload-monotonic: the record index in decimal.
type monotonicPayloads struct{}

func (monotonicPayloads) payload(i int64) []byte { return strconv.AppendInt(nil, i, 10) }

// sendStart is what a record carries through the producer so that its
// completion can be measured and attributed.
type sendStart struct {
	ms     int64
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

// producerRun holds the counters of one run; sent = acked + failed at the end.
type producerRun struct {
	plan     *producerPlan
	producer sarama.AsyncProducer
	clock    func() int64
	out      func(string)
	errOut   func(string)
	keys     keySource

	stats       *producerStats
	steadyStats atomic.Pointer[producerStats]

	deliveryTimeout time.Duration
	inFlight        inFlight

	sent, acked, failed atomic.Int64
}

// run sends every record, then waits for all completions. It returns once
// the producer is closed; the caller prints the summary.
func (r *producerRun) run(ctx context.Context, pc *producerConfig) error {
	maxBlock := pc.maxBlock
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for msg := range r.producer.Successes() {
			r.complete(msg, nil)
		}
	}()
	go func() {
		defer wg.Done()
		for perr := range r.producer.Errors() {
			r.complete(perr.Msg, perr.Err)
		}
	}()

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
				for _, s := range r.inFlight.expire(r.clock() - r.deliveryTimeout.Milliseconds()) {
					r.failed.Add(1)
					r.errOut(fmt.Sprintf("org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for %s: %d ms has passed since the record was sent",
						r.plan.topic, r.clock()-s.ms))
				}
			}
		}
	}()
	defer func() {
		close(stopWatchdog)
		<-watchdogDone
	}()

	plan := r.plan
	throttler := newThrottle(plan.throughput, r.clock)
	txnStart := int64(0)
	inTxn := false
	var loopErr error
	input := r.producer.Input()
	blockTimer := time.NewTimer(time.Hour)
	blockTimer.Stop()
	for i := int64(0); i < plan.numRecords; i++ {
		if ctx.Err() != nil {
			loopErr = ctx.Err()
			break
		}
		if plan.warmupRecords > 0 && i == plan.warmupRecords {
			steady := newProducerStats(plan.numRecords-plan.warmupRecords, plan.reportingInterval, r.clock, r.out)
			steady.suffix = " steady state"
			steady.steadyBanner = "In steady state."
			r.steadyStats.Store(steady)
			r.stats.suppress()
		}
		value := plan.payloads.payload(i)
		if plan.transactional && !inTxn {
			if err := r.producer.BeginTxn(); err != nil {
				loopErr = err
				break
			}
			inTxn = true
			txnStart = r.clock()
		}
		start := r.clock()
		if size := int64(len(value) + recordOverhead); size > pc.maxRequestSize {
			// Java refuses such a record in send() and hands the callback the exception.
			r.sent.Add(1)
			r.failed.Add(1)
			r.errOut(fmt.Sprintf("org.apache.kafka.common.errors.RecordTooLargeException: The message is %d bytes when serialized which is larger than %d, which is the value of the max.request.size configuration.", size, pc.maxRequestSize))
			continue
		}
		meta := &sendStart{ms: start, bytes: int64(len(value)), steady: plan.warmupRecords > 0 && i >= plan.warmupRecords}
		msg := &sarama.ProducerMessage{
			Topic:    plan.topic,
			Key:      r.keys.key(i),
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
			blockTimer.Reset(maxBlock)
			select {
			case input <- msg:
				if !blockTimer.Stop() {
					<-blockTimer.C
				}
			case <-blockTimer.C:
				r.complete(msg, fmt.Errorf("%w: Failed to allocate memory within the configured max blocking time %d ms.", errBufferExhausted, maxBlock.Milliseconds()))
			case <-ctx.Done():
				r.complete(msg, ctx.Err())
				loopErr = ctx.Err()
			}
		}
		if loopErr != nil {
			break
		}
		if plan.transactional && plan.transactionMs <= start-txnStart {
			if err := r.producer.CommitTxn(); err != nil {
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
		loopErr = r.producer.CommitTxn()
	}
	// Like Java's close(), wait for the records still in flight; sarama
	// would fail the ones it is still retrying when it shuts down, so give
	// them until delivery.timeout.ms has passed since the last send.
	deadline := time.Now().Add(pc.deliveryTimeout)
	for r.acked.Load()+r.failed.Load() < r.sent.Load() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	// AsyncClose, not Close: Close drains the Successes and Errors channels
	// itself, and the completions it swallows would be missing from the
	// counts. Our readers end when sarama closes both channels.
	r.producer.AsyncClose()
	wg.Wait()
	return loopErr
}

var errBufferExhausted = errors.New("org.apache.kafka.common.errors.TimeoutException")

// complete counts a completion. Only successes reach the stats (Kafka 3.5+);
// a failure prints the exception on stderr, as the original's callback does.
func (r *producerRun) complete(msg *sarama.ProducerMessage, err error) {
	start, _ := msg.Metadata.(*sendStart)
	if !start.state.CompareAndSwap(recordPending, recordCompleted) {
		return // already counted as expired
	}
	if err != nil {
		r.failed.Add(1)
		r.errOut(exceptionLine(err))
		return
	}
	r.acked.Add(1)
	now := r.clock()
	latency := now - start.ms
	r.stats.record(latency, start.bytes, now)
	if start.steady {
		if s := r.steadyStats.Load(); s != nil {
			s.record(latency, start.bytes, now)
		}
	}
}

// exceptionLine renders a send failure the way the Java callback's
// printStackTrace starts: the exception class, a colon and the message.
func exceptionLine(err error) string {
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return fmt.Sprintf("org.apache.kafka.common.errors.%s: %s", kafkaExceptionName(kerr), kerr.Error())
	}
	if errors.Is(err, errBufferExhausted) {
		return err.Error()
	}
	if errors.Is(err, sarama.ErrShuttingDown) {
		// Still unacknowledged when the delivery timeout ran out.
		return "org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s): delivery.timeout.ms has passed since the record was sent"
	}
	return "org.apache.kafka.common.KafkaException: " + err.Error()
}

// kafkaExceptionNames are the Java exception classes of the broker error
// codes a producer is likely to meet.
var kafkaExceptionNames = map[sarama.KError]string{
	sarama.ErrUnknownTopicOrPartition:      "UnknownTopicOrPartitionException",
	sarama.ErrLeaderNotAvailable:           "LeaderNotAvailableException",
	sarama.ErrNotLeaderForPartition:        "NotLeaderOrFollowerException",
	sarama.ErrRequestTimedOut:              "TimeoutException",
	sarama.ErrMessageSizeTooLarge:          "RecordTooLargeException",
	sarama.ErrNetworkException:             "NetworkException",
	sarama.ErrNotEnoughReplicas:            "NotEnoughReplicasException",
	sarama.ErrNotEnoughReplicasAfterAppend: "NotEnoughReplicasAfterAppendException",
	sarama.ErrInvalidRequiredAcks:          "InvalidRequiredAcksException",
	sarama.ErrTopicAuthorizationFailed:     "TopicAuthorizationException",
	sarama.ErrOutOfOrderSequenceNumber:     "OutOfOrderSequenceException",
	sarama.ErrDuplicateSequenceNumber:      "DuplicateSequenceException",
	sarama.ErrKafkaStorageError:            "KafkaStorageException",
	sarama.ErrInvalidRecord:                "InvalidRecordException",
}

func kafkaExceptionName(k sarama.KError) string {
	if n, ok := kafkaExceptionNames[k]; ok {
		return n
	}
	return "ApiException"
}

// newThrottle starts the original's throttler clock now.
func newThrottle(target float64, clock func() int64) *throttle.Throttler {
	return throttle.New(target, clock(), clock)
}
