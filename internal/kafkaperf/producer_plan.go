package kafkaperf

import (
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/jvm"
)

// producerToolName is the original's command name, which the result file
// names the tool by.
const producerToolName = "kafka-producer-perf-test"

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

	// The client: the shared settings, and the producer's Java settings
	// (producerClientOptions maps them onto franz-go).
	client             *clientSettings
	clientID           string        // client.id as the Java producer names itself
	acks               int16         // -1 (all), 0 or 1
	idempotent         bool          // enable.idempotence as the release resolves it
	batchSize          int64         // batch.size
	maxBatchBytes      int32         // franz-go's batch limit: batch.size, or one record of this run if larger
	linger             time.Duration // linger.ms
	compression        kgo.CompressionCodec
	compressionName    string
	bufferMemory       int64         // buffer.memory: bytes of records sent and not yet completed
	inFlight           int64         // max.in.flight.requests.per.connection
	retries            int64         // retries; math.MaxInt32 means until delivery.timeout.ms
	maxBlock           time.Duration // max.block.ms
	deliveryTimeout    time.Duration // delivery.timeout.ms
	requestTimeout     time.Duration // request.timeout.ms
	maxRequestSize     int64         // max.request.size
	transactionTimeout time.Duration // transaction.timeout.ms
	// The partitioner's settings (partitioner.*).
	adaptivePartitioning, ignoreKeys, roundRobin bool
}

// minBatchBytes is the smallest batch limit franz-go accepts.
const minBatchBytes = 512

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
		p.payloads = monotonicPayloads{text: new(decimalText)}
		largest = 20
	}
	for _, n := range o.notices {
		out(n)
	}
	if err := o.readProps(rel); err != nil {
		return nil, err
	}
	// Reading the properties decides whether the run is transactional.
	p.transactional, p.transactionMs = o.transactional, o.transactionMs
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
	p.transactionalID = ""
	if p.transactional {
		// A transactional.id without a transactional run (3.9 without
		// --transaction-duration-ms) is not used, as in the tool.
		id, _ := o.props.Get("transactional.id")
		p.transactionalID = id
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
// batch, as Java's max.request.size check counts it: the batch header (61
// bytes) and the record's varints and attributes, and a --key-distribution
// key adds at most 20 digits.
const recordOverhead = 64

// batchOverhead is what a batch of one record adds to the record's value
// as franz-go counts it against its batch limit: the batch header (61
// bytes), the produce request's topic and partition fields, and the
// record's own varints and key.
const batchOverhead = 160

// applyProducer reads the producer settings into the plan, with the Java
// client's defaults where franz-go's differ: acks=all with idempotence
// (from 3.0), batch.size=16384, linger.ms as the release's client, retries
// unbounded within delivery.timeout.ms=120000, max.block.ms=60000,
// buffer.memory=33554432. largestRecord is the biggest value the run will
// send, which sizes franz-go's batch limit.
func (s *clientSettings) applyProducer(pc *producerPlan, largestRecord int, rel *producerRelease) error {
	pc.clientID = s.clientID
	if pc.clientID == "" {
		// Before 3.1 the tool sets none and the Java client names itself.
		pc.clientID = "producer-1"
	}
	acks, ok := s.get("acks")
	if !ok {
		acks = rel.client.acks
	}
	switch strings.TrimSpace(acks) {
	case "", "all", "-1":
		pc.acks = -1
	case "1":
		pc.acks = 1
	case "0":
		pc.acks = 0
	default:
		return &configError{fmt.Sprintf(`Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1`, acks)}
	}
	var err error
	if pc.batchSize, err = s.atLeast("batch.size", 16384, 0); err != nil {
		return err
	}
	lingerMs, err := s.atLeast("linger.ms", rel.client.lingerMs, 0)
	if err != nil {
		return err
	}
	pc.linger = time.Duration(lingerMs) * time.Millisecond
	if pc.maxRequestSize, err = s.intValue("max.request.size", 1048576); err != nil {
		return err
	}
	// Java fills a batch per partition up to batch.size bytes, and makes a
	// batch of its own for a larger record; franz-go's batch limit is hard,
	// so it is batch.size or one record of this run, whichever is larger,
	// and at least the 512 bytes franz-go allows (Java takes any batch.size
	// >= 0; below a record's size every batch holds one record).
	pc.maxBatchBytes = int32(min(max(pc.batchSize, int64(largestRecord+batchOverhead), minBatchBytes), math.MaxInt32/2))
	if pc.inFlight, err = s.atLeast("max.in.flight.requests.per.connection", 5, 1); err != nil {
		return err
	}
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
	pc.requestTimeout = time.Duration(reqTimeoutMs) * time.Millisecond
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
	if _, err := s.durationMs("retry.backoff.max.ms", 1000); err != nil {
		return err
	}
	if pc.retries, err = s.atLeast("retries", math.MaxInt32, 0); err != nil {
		return err
	}
	txnTimeoutMs, err := s.atLeast("transaction.timeout.ms", 60000, 0)
	if err != nil {
		return err
	}
	pc.transactionTimeout = time.Duration(txnTimeoutMs) * time.Millisecond

	ct, _ := s.get("compression.type")
	pc.compressionName = strings.TrimSpace(ct)
	level := func(key string) (int, bool, error) {
		if _, ok := s.get(key); !ok {
			return 0, false, nil
		}
		n, err := s.intValue(key, 0)
		return int(n), true, err
	}
	switch pc.compressionName {
	case "", "none":
		pc.compressionName = "none"
		pc.compression = kgo.NoCompression()
	case "gzip":
		pc.compression = kgo.GzipCompression()
		if n, ok, err := level("compression.gzip.level"); err != nil {
			return err
		} else if ok {
			pc.compression = pc.compression.WithLevel(n)
		}
	case "snappy":
		pc.compression = kgo.SnappyCompression()
	case "lz4":
		pc.compression = kgo.Lz4Compression()
		if n, ok, err := level("compression.lz4.level"); err != nil {
			return err
		} else if ok {
			pc.compression = pc.compression.WithLevel(n)
		}
	case "zstd":
		pc.compression = kgo.ZstdCompression()
		if n, ok, err := level("compression.zstd.level"); err != nil {
			return err
		} else if ok {
			pc.compression = pc.compression.WithLevel(n)
		}
	default:
		return &configError{fmt.Sprintf("Invalid value %s for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd", ct)}
	}
	if pc.bufferMemory, err = s.atLeast("buffer.memory", 33554432, 0); err != nil {
		return err
	}
	adaptive, _, err := s.boolValue("partitioner.adaptive.partitioning.enable", true)
	if err != nil {
		return err
	}
	ignoreKeys, _, err := s.boolValue("partitioner.ignore.keys", false)
	if err != nil {
		return err
	}
	class, _ := s.get("partitioner.class")
	pc.adaptivePartitioning, pc.ignoreKeys = adaptive, ignoreKeys
	pc.roundRobin = strings.HasSuffix(strings.TrimSpace(class), "RoundRobinPartitioner")

	// Idempotence is on by default when acks=all (Java 3.0+; off by default
	// before); an explicit acks other than all turns the default off, an
	// explicit true with acks other than all is an error, as in the Java
	// client.
	idem, explicit, err := s.boolValue("enable.idempotence", rel.client.idempotence)
	if err != nil {
		return err
	}
	idempotent := idem && pc.acks == -1
	if explicit {
		idempotent = idem
		if idempotent && pc.acks != -1 {
			return &configError{"Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."}
		}
	}
	if idempotent && pc.inFlight > 5 {
		if rel.client.inFlightOver5Fails {
			return &configError{fmt.Sprintf("To use the idempotent producer, max.in.flight.requests.per.connection must be set to at most 5. Current value is %d.", pc.inFlight)}
		}
		if explicit {
			return &configError{"Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."}
		}
		// Before 4.0 the default idempotence gives way, with a warning.
		s.warnings = append(s.warnings, fmt.Sprintf("[%s] WARN Idempotence will be disabled because max.in.flight.requests.per.connection is set to %d, which is greater than 5. Please note that in v4.0.0 and onward, this will become an error. (org.apache.kafka.clients.producer.ProducerConfig)", log4jTime(), pc.inFlight))
		idempotent = false
	}
	if id, ok := s.get("transactional.id"); ok && id != "" {
		pc.transactionalID = id
	}
	pc.idempotent = idempotent || pc.transactionalID != ""
	if pc.idempotent && pc.inFlight < maxIdempotentInflight {
		s.limitProduceInflight(int(pc.inFlight))
	}
	return nil
}

// producerClientOptions are the franz-go options of the plan's producer.
func (p *producerPlan) producerClientOptions() []kgo.Opt {
	opts := append(p.client.options(),
		kgo.ClientID(p.clientID),
		kgo.DefaultProduceTopic(p.topic),
		// Java's producer asks for the topic with auto-creation allowed
		// (the broker decides).
		kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchMaxBytes(p.maxBatchBytes),
		kgo.ProducerBatchCompression(p.compression),
		kgo.RecordPartitioner(javaPartitioner(int(p.batchSize), p.adaptivePartitioning, p.ignoreKeys, p.roundRobin)),
		// buffer.memory: the run itself keeps the bytes of records sent and
		// not yet completed under it (waiting at most max.block.ms, as
		// send() does), so franz-go's own bound never blocks first.
		kgo.MaxBufferedBytes(int(min(p.bufferMemory, math.MaxInt32)*2+int64(p.maxBatchBytes))),
		kgo.MaxBufferedRecords(math.MaxInt32),
		// The produce request's own timeout is request.timeout.ms, and the
		// client waits that long again for the answer at most.
		kgo.ProduceRequestTimeout(max(p.requestTimeout, time.Millisecond)),
		// delivery.timeout.ms: franz-go fails a record that long after its
		// timestamp (its send time) only when it is safe to, that is when
		// no request that may have written it is unanswered: a failed
		// record was not written.
		kgo.RecordDeliveryTimeout(max(p.deliveryTimeout, time.Millisecond)),
		kgo.UnknownTopicRetries(-1),
	)
	if p.linger > 0 {
		opts = append(opts, kgo.ProducerLinger(p.linger))
	}
	if p.retries < math.MaxInt32 {
		opts = append(opts, kgo.RecordRetries(int(p.retries)+1))
	}
	switch p.acks {
	case -1:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case 1:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	default:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if !p.idempotent {
		// Without idempotence, max.in.flight.requests.per.connection
		// requests per broker; with it franz-go keeps up to 5 (Java's
		// bound) and the client's connections hold it to fewer.
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(int(p.inFlight)))
	}
	if p.transactionalID != "" {
		opts = append(opts, kgo.TransactionalID(p.transactionalID), kgo.TransactionTimeout(max(p.transactionTimeout, time.Millisecond)))
	}
	return opts
}
