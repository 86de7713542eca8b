package kafkaperf

import (
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/jvm"
)

// producerPlan is everything one producer run needs, decided once from
// the options and the client settings before any record is sent.
type producerPlan struct {
	topic             string
	numRecords        int64
	warmupRecords     int64   // 0: no steady-state summary
	throughput        float64 // records/s; negative means unthrottled
	reportingInterval int64   // ms between window lines
	payloads          payloadSource
	keys              keySource
	transactional     bool
	transactionMs     int64 // commit interval when transactional
	transactionalID   string
	printMetrics      bool

	// The client: the sarama configuration and bootstrap list, and the
	// Java settings the run enforces itself.
	client          *clientSettings
	maxBlock        time.Duration // max.block.ms
	deliveryTimeout time.Duration // delivery.timeout.ms
	maxRequestSize  int64         // max.request.size
	// lanes is how many sarama producers share the records (see
	// producerRun.producers); laneBatch how many records one gets in a row.
	lanes     int
	laneBatch int64
}

// newProducerPlan reads the payload file (printing the original's lines
// through out), prints the deprecation notices, reads the client
// properties (in Java's order), maps the client settings (their warnings go to warn) and
// makes the checks the release makes while it builds the producer. A
// failure is a *cli.Exit.
func newProducerPlan(o *producerOptions, rel *producerRelease, out, warn func(string)) (*producerPlan, error) {
	p := &producerPlan{
		topic:             o.topic,
		numRecords:        o.numRecords,
		warmupRecords:     o.warmupRecords,
		throughput:        o.throughput,
		reportingInterval: o.reportingInterval,
		transactional:     o.transactional,
		transactionMs:     o.transactionMs,
		printMetrics:      o.printMetrics,
		keys:              newKeySource(o.keyDistribution, o.keyRange, uint64(o.randomSeed)),
	}
	largest := int(max(o.recordSize, 0))
	switch {
	case o.payloadFile != "":
		values, err := readPayloadFile(o.payloadFile, o.payloadDelimiter, rel.payloadCountLine, rel.payloadTokens, out)
		if err != nil {
			return nil, err
		}
		for _, v := range values {
			largest = max(largest, len(v))
		}
		p.payloads = &filePayloads{values: values, rng: mrand.New(mrand.NewPCG(uint64(o.randomSeed), 0))}
	case o.payloadMonotonic:
		p.payloads = monotonicPayloads{}
		largest = 20
	}
	for _, n := range o.notices {
		out(n)
	}
	if err := o.readProps(rel); err != nil {
		return nil, err
	}
	settings, err := newClientSettings(producerClient, o.props, log4jTime)
	if err != nil {
		return nil, uncaughtConfig(err)
	}
	for _, w := range rel.logged(settings.warnings) {
		warn(w)
	}
	printed := len(settings.warnings)
	if err := settings.applyProducer(p, largest, rel); err != nil {
		if be, ok := err.(*buildError); ok {
			e, cause := constructionFailed("producer", be.cause)
			return nil, jvm.Uncaught(e, nil, cause)
		}
		return nil, uncaughtConfig(err)
	}
	for _, w := range settings.warnings[printed:] {
		warn(w)
	}
	if err := resolvableBootstrap(settings.bootstrap, warn); err != nil {
		e, cause := constructionFailed("producer", err.(*configError))
		return nil, jvm.Uncaught(e, nil, cause)
	}
	if p.transactional {
		id, _ := o.props.Get("transactional.id")
		p.transactionalID = id
		settings.cfg.Producer.Transaction.ID = id
	}
	p.client = settings
	// What Java throws after building the producer, when the parser let
	// the values through (before 4.0): the payload array, then the Stats'
	// sampling division and its latency array.
	if !rel.checksAtParse {
		switch {
		case o.hasRecordSize && o.recordSize < 0:
			return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.NegativeArraySizeException", Message: fmt.Sprint(o.recordSize)}, nil)
		case o.numRecords == 0:
			return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.ArithmeticException", Message: "/ by zero"}, nil)
		case o.numRecords == -1:
			// No records, then the empty sample array's first percentile.
			return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.ArrayIndexOutOfBoundsException", Message: "Index 0 out of bounds for length 0"}, nil)
		case o.numRecords < -1:
			return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.NegativeArraySizeException", Message: fmt.Sprint(o.numRecords + 1)}, nil)
		}
	}
	if fp, ok := p.payloads.(*filePayloads); ok && len(fp.values) == 0 {
		// Thrown when the first record's payload is made.
		return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: rel.noPayloads}, nil)
	}
	if p.payloads == nil {
		p.payloads = newRandomPayloads(largest, uint64(o.randomSeed))
		if rel.onePayload {
			p.payloads = fixedPayload(p.payloads.payload(0))
		}
	}
	return p, nil
}

// buildError is a setting the Java producer refuses while it is built,
// after ConfigDef accepted it: the KafkaException wraps the ConfigException.
type buildError struct{ cause *configError }

func (e *buildError) Error() string { return e.cause.msg }

// uncaughtConfig is how a setting the Java client refuses ends the
// producer: an uncaught ConfigException.
func uncaughtConfig(err error) error {
	if ce, ok := err.(*configError); ok {
		return jvm.Uncaught(configException(ce.msg), nil)
	}
	return err
}

// recordOverhead bounds what a record adds to its value in a v2 record
// batch: sarama counts 36 bytes of varints and attributes, and a
// --key-distribution key adds at most 20 digits.
const recordOverhead = 64

// applyProducer maps the producer settings onto sarama and into the plan,
// with the Java client's defaults stated explicitly because sarama's
// differ: acks=all with idempotence, batch.size=16384, linger.ms as the
// release's client, retries unbounded within delivery.timeout.ms=120000,
// max.block.ms=60000. largestRecord is the biggest value the run will
// send, which sarama needs to know for batch.size.
func (s *clientSettings) applyProducer(pc *producerPlan, largestRecord int, rel *producerRelease) error {
	c := s.cfg
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	if _, ok := s.get("client.id"); !ok {
		// Before 3.1 the tool sets none and the Java client names itself.
		c.ClientID = "producer-1"
	}

	acks, ok := s.get("acks")
	if !ok {
		acks = rel.client.acks
	}
	switch strings.TrimSpace(acks) {
	case "", "all", "-1":
		c.Producer.RequiredAcks = sarama.WaitForAll
	case "1":
		c.Producer.RequiredAcks = sarama.WaitForLocal
	case "0":
		c.Producer.RequiredAcks = sarama.NoResponse
	default:
		return &configError{fmt.Sprintf(`Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1`, acks)}
	}
	batchSize, err := s.atLeast("batch.size", 16384, 0)
	if err != nil {
		return err
	}
	// Java fills a batch per partition up to batch.size bytes and sends it
	// when it is full or linger.ms has passed; with linger.ms=0 it sends at
	// once whatever has gathered while earlier requests were in flight.
	// sarama caps each partition's batch at Producer.MaxMessageBytes, which
	// is also its largest accepted record, so the cap is batch.size or one
	// record of this run, whichever is larger (Java too lets a large record
	// make a batch of its own). The record limit proper, max.request.size,
	// is checked before each send.
	lingerMs, err := s.atLeast("linger.ms", rel.client.lingerMs, 0)
	if err != nil {
		return err
	}
	linger := time.Duration(lingerMs) * time.Millisecond
	if linger > 0 {
		// Only the timer flushes; a partition batch that would overflow
		// batch.size flushes the request at once, as a full batch does in Java.
		c.Producer.Flush.Frequency = linger
	}
	if pc.maxRequestSize, err = s.intValue("max.request.size", 1048576); err != nil {
		return err
	}
	c.Producer.MaxMessageBytes = int(min(max(batchSize, int64(largestRecord+recordOverhead+1)), int64(sarama.MaxRequestSize-1)))
	c.Producer.Partitioner = newStickyPartitioner(int(batchSize), 0)
	inflight, err := s.atLeast("max.in.flight.requests.per.connection", 5, 1)
	if err != nil {
		return err
	}
	// One request in flight per sarama producer, as many producers as
	// Java keeps requests in flight per connection.
	c.Net.MaxOpenRequests = 1
	pc.lanes = int(min(inflight, 5))
	pc.laneBatch = max(batchSize/int64(largestRecord+recordOverhead), 1)
	maxBlockMs, err := s.atLeast("max.block.ms", 60000, 0)
	if err != nil {
		return err
	}
	pc.maxBlock = time.Duration(maxBlockMs) * time.Millisecond
	deliveryMs, err := s.atLeast("delivery.timeout.ms", 120000, 0)
	if err != nil {
		return err
	}
	reqTimeoutMs, err := s.atLeast("request.timeout.ms", 30000, 0)
	if err != nil {
		return err
	}
	reqTimeout := time.Duration(reqTimeoutMs) * time.Millisecond
	// Checked as the producer is built: an explicit delivery.timeout.ms
	// below linger.ms + request.timeout.ms is refused; the default is raised
	// to that sum.
	if deliveryMs < lingerMs+reqTimeoutMs {
		if _, explicit := s.get("delivery.timeout.ms"); explicit {
			return &buildError{&configError{"delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms"}}
		}
		deliveryMs = lingerMs + reqTimeoutMs
	}
	pc.deliveryTimeout = time.Duration(deliveryMs) * time.Millisecond
	c.Producer.Timeout = reqTimeout
	backoff, _ := s.durationMs("retry.backoff.ms", 100)
	maxBackoff, err := s.durationMs("retry.backoff.max.ms", 1000)
	if err != nil {
		return err
	}
	retries, err := s.atLeast("retries", math.MaxInt32, 0)
	if err != nil {
		return err
	}
	// Java retries until delivery.timeout.ms has passed, backing off
	// exponentially from retry.backoff.ms to retry.backoff.max.ms; sarama
	// counts retries, so allow as many as that schedule fits in the timeout.
	backoffFor := func(attempt int) time.Duration {
		return min(backoff<<min(attempt, 20), max(maxBackoff, backoff))
	}
	c.Producer.Retry.BackoffFunc = func(retries, _ int) time.Duration { return backoffFor(retries) }
	fit, spent := int64(0), time.Duration(0)
	for spent < pc.deliveryTimeout && fit < math.MaxInt32 {
		spent += max(backoffFor(int(fit)), time.Millisecond)
		fit++
	}
	c.Producer.Retry.Max = int(min(retries, fit, math.MaxInt32))
	c.Metadata.Timeout = pc.maxBlock
	c.Metadata.Retry.Max = int(max(int64(pc.maxBlock/max(backoff, time.Millisecond)), 1))

	switch ct, _ := s.get("compression.type"); strings.TrimSpace(ct) {
	case "", "none":
		c.Producer.Compression = sarama.CompressionNone
	case "gzip":
		c.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		c.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		c.Producer.Compression = sarama.CompressionLZ4
	case "zstd":
		c.Producer.Compression = sarama.CompressionZSTD
	default:
		return &configError{fmt.Sprintf("Invalid value %s for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd", ct)}
	}
	bufferMemory, err := s.atLeast("buffer.memory", 33554432, 0)
	if err != nil {
		return err
	}
	// buffer.memory bounds the records waiting to be sent; sarama bounds its
	// input channel in messages, so size it for typical small records.
	c.ChannelBufferSize = int(min(max(bufferMemory/1024/int64(pc.lanes), 256), 65536))

	// Idempotence is on by default when acks=all (Java 3.0+; off by default
	// before); an explicit acks other than all turns the default off, an
	// explicit true with acks other than all is an error, as in the Java
	// client.
	idem, explicit, err := s.boolValue("enable.idempotence", rel.client.idempotence)
	if err != nil {
		return err
	}
	idempotent := idem && c.Producer.RequiredAcks == sarama.WaitForAll
	if explicit {
		idempotent = idem
		if idempotent && c.Producer.RequiredAcks != sarama.WaitForAll {
			return &configError{"Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."}
		}
	}
	if idempotent && inflight > 5 {
		if rel.client.inFlightOver5Fails {
			return &configError{fmt.Sprintf("To use the idempotent producer, max.in.flight.requests.per.connection must be set to at most 5. Current value is %d.", inflight)}
		}
		if explicit {
			return &configError{"Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."}
		}
		// Before 4.0 the default idempotence gives way, with a warning.
		s.warnings = append(s.warnings, fmt.Sprintf("[%s] WARN Idempotence will be disabled because max.in.flight.requests.per.connection is set to %d, which is greater than 5. Please note that in v4.0.0 and onward, this will become an error. (org.apache.kafka.clients.producer.ProducerConfig)", log4jTime(), inflight))
		idempotent = false
	}
	if id, ok := s.get("transactional.id"); ok && id != "" {
		pc.transactionalID = id
	}
	if idempotent || pc.transactionalID != "" {
		c.Producer.Idempotent = true
		c.Producer.Retry.Max = max(c.Producer.Retry.Max, 1)
	}
	if pc.transactionalID != "" {
		pc.lanes = 1
	}
	return nil
}
