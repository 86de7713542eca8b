package kafkaperf

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/javaprops"
	"github.com/perfclones/perfclones/internal/lineout"
)

const (
	defaultTransactionIDPrefix   = "performance-producer-"
	defaultTransactionDurationMs = 3000
	exactlyOnePayload            = "Note that you must provide exactly one of --record-size, --payload-file or --payload-monotonic."
)

// producerParser is kafka-producer-perf-test's command line as Kafka 4.4
// declares it. It is a superset: the options of every release from 2.2 on
// are accepted (--producer-props and --producer.config still work, with the
// deprecation notice 4.2+ prints).
func producerParser() *javaopts.ArgParser {
	return &javaopts.ArgParser{
		Prog: "kafka-producer-perf-test",
		Description: "This tool is used to verify the producer performance. To enable transactions, you can specify a " +
			"transactional id or set a transaction duration using --transaction-duration-ms. There are three ways to specify " +
			"the transactional id: set transactional.id=<id> via --command-property, set transactional.id=<id> in the config " +
			"file via --command-config, or use --transactional-id <id>.",
		DefaultHelp:  true,
		HelpOnNoArgs: true,
		Groups:       []javaopts.Group{{Name: "payload", Mutex: true, Required: true, Description: exactlyOnePayload}},
		Args: []javaopts.Arg{
			{Flags: []string{"--bootstrap-server"}, Metavar: "BOOTSTRAP-SERVER", Dest: "bootstrapServer",
				Help: "The server(s) to connect to. This config takes precedence over bootstrap.servers specified via --command-property or --command-config."},
			{Flags: []string{"--topic"}, Required: true, Metavar: "TOPIC", Help: "Produce records to this topic."},
			{Flags: []string{"--num-records"}, Type: javaopts.TypeLong, Required: true, Metavar: "NUM-RECORDS", Dest: "numRecords",
				Help: "Number of records to produce."},
			{Flags: []string{"--record-size"}, Type: javaopts.TypeInteger, Metavar: "RECORD-SIZE", Dest: "recordSize", Group: "payload",
				Help: "Record size in bytes. " + exactlyOnePayload},
			{Flags: []string{"--payload-file"}, Metavar: "PAYLOAD-FILE", Dest: "payloadFile", Group: "payload",
				Help: "File to read the record payloads from. This works only for UTF-8 encoded text files. Payloads will be read " +
					"from this file and a payload will be randomly selected when sending records. " + exactlyOnePayload},
			{Flags: []string{"--payload-monotonic"}, Type: javaopts.TypeFlag, Dest: "payloadMonotonic", Group: "payload",
				Help: "Payload is a monotonically increasing integer. " + exactlyOnePayload},
			{Flags: []string{"--payload-delimiter"}, Metavar: "PAYLOAD-DELIMITER", Dest: "payloadDelimiter", Default: `\n`,
				Help: "Provides the delimiter to be used when --payload-file is provided. Defaults to new line. Note that this " +
					"parameter will be ignored if --payload-file is not provided."},
			{Flags: []string{"--throughput"}, Type: javaopts.TypeDouble, Required: true, Metavar: "THROUGHPUT",
				Help: "Throttle maximum record throughput to *approximately* THROUGHPUT records/sec. Set this to -1 to disable throttling."},
			{Flags: []string{"--producer-props"}, Nargs: "+", Metavar: "PROP-NAME=PROP-VALUE", Dest: "producerConfig",
				Help: "(DEPRECATED) Kafka producer related configuration properties like client.id. These configs take precedence " +
					"over those passed via --command-config or --producer.config. This option will be removed in a future version. " +
					"Use --command-property instead. Example: --command-property linger.ms=10 batch.size=32768"},
			{Flags: []string{"--command-property"}, Nargs: "+", Metavar: "PROP-NAME=PROP-VALUE", Dest: "commandProperties",
				Help: "Kafka producer related configuration properties like client.id. These configs take precedence over those " +
					"passed via --command-config or --producer.config. Example: --command-property linger.ms=10 batch.size=32768"},
			{Flags: []string{"--producer.config"}, Metavar: "CONFIG-FILE", Dest: "producerConfigFile",
				Help: "(DEPRECATED) Producer config properties file. This option will be removed in a future version. Use --command-config instead."},
			{Flags: []string{"--command-config"}, Metavar: "CONFIG-FILE", Dest: "commandConfigFile", Help: "Producer config properties file."},
			{Flags: []string{"--print-metrics"}, Type: javaopts.TypeFlag, Dest: "printMetrics", Help: "Print out metrics at the end of the test."},
			{Flags: []string{"--transactional-id"}, Metavar: "TRANSACTIONAL-ID", Dest: "transactionalId",
				Help: "The transactional id to use. This config takes precedence over the transactional.id specified via " +
					"--command-property or --command-config. Note that if the transactional id is not specified while " +
					"--transaction-duration-ms is provided, the default value for the transactional id will be " +
					"performance-producer- followed by a random uuid."},
			{Flags: []string{"--transaction-duration-ms"}, Type: javaopts.TypeLong, Metavar: "TRANSACTION-DURATION", Dest: "transactionDurationMs",
				Help: "The maximum duration of each transaction. The commitTransaction will be called after this time has elapsed. " +
					"The value should be greater than 0. If the transactional id is specified via --command-property, " +
					"--command-config or --transactional-id but --transaction-duration-ms is not specified, the default value will be 3000."},
			{Flags: []string{"--warmup-records"}, Type: javaopts.TypeLong, Metavar: "WARMUP-RECORDS", Dest: "warmupRecords", Default: int64(0),
				Help: "The number of records to treat as warmup. These initial records will not be included in steady-state " +
					"statistics. An additional summary line will be printed describing the steady-state statistics."},
			{Flags: []string{"--reporting-interval"}, Type: javaopts.TypeLong, Metavar: "INTERVAL-MS", Dest: "reportingInterval", Default: int64(5000),
				Help: "Interval in milliseconds at which to print progress info."},
			{Flags: []string{"--record-key-range"}, Type: javaopts.TypeLong, Metavar: "KEY-RANGE", Dest: "recordKeyRange",
				Help: "The range of keys to use when --key-distribution is 'range' or 'random'. Keys will be integers in " +
					"[0, KEY-RANGE). Required for range and random distributions."},
			{Flags: []string{"--key-distribution"}, Metavar: "KEY-DISTRIBUTION", Dest: "keyDistribution", Default: "none",
				Help: "The key distribution to use: 'none' for null keys, 'range' for round-robin keys in [0, KEY-RANGE), or " +
					"'random' for random keys in [0, KEY-RANGE). Requires --record-key-range when set to 'range' or 'random'."},
			{Flags: []string{"--random-seed"}, Type: javaopts.TypeLong, Metavar: "RANDOM-SEED", Dest: "randomSeed", Default: int64(0),
				Help: "Seed for the pseudo-random number generator used by --key-distribution random and random payload " +
					"generation. The default value of 0 ensures deterministic, reproducible benchmark runs. Set to a different " +
					"value when non-repeating sequences are required."},
		},
	}
}

// producerOptions is what the command line asks for, checked.
type producerOptions struct {
	topic             string
	numRecords        int64
	recordSize        int32 // 0 when not given
	payloadFile       string
	payloadDelimiter  string
	payloadMonotonic  bool
	throughput        float64
	props             *javaprops.Properties
	printMetrics      bool
	transactional     bool
	transactionMs     int64
	warmupRecords     int64
	reportingInterval int64
	keyDistribution   string
	keyRange          int64
	randomSeed        int64
	notices           []string // stdout lines printed before the run (deprecations)
}

// javaException is an uncaught exception: the JVM prints "Exception in
// thread "main" <class>: <message>" and a stack trace, and exits 1. stdout
// holds the lines the tool printed before it happened.
type javaException struct {
	class, msg string
	stdout     []string
	cause      string // a "Caused by: " line, when the original has one
}

func (e *javaException) Error() string { return e.class + ": " + e.msg }

// parseProducerOptions turns the command line into options, returning a
// *javaopts.Exit for anything that ends the program early.
func parseProducerOptions(args []string, width int) (*producerOptions, error) {
	p := producerParser()
	ns, err := p.Parse(args, width)
	if err != nil {
		return nil, err
	}
	fail := func(msg string) (*producerOptions, error) { return nil, p.Fail(msg, width) }
	o := &producerOptions{}
	o.topic, _ = ns.String("topic")
	o.numRecords, _ = ns.Long("numRecords")
	if rs, ok := ns.Int("recordSize"); ok {
		o.recordSize = rs
	}
	o.payloadFile, _ = ns.String("payloadFile")
	o.payloadMonotonic = ns.Bool("payloadMonotonic")
	o.throughput, _ = ns.Double("throughput")
	o.printMetrics = ns.Bool("printMetrics")
	o.warmupRecords, _ = ns.Long("warmupRecords")
	o.warmupRecords = max(o.warmupRecords, 0)
	o.reportingInterval, _ = ns.Long("reportingInterval")
	o.keyDistribution, _ = ns.String("keyDistribution")
	o.keyRange, _ = ns.Long("recordKeyRange")
	o.randomSeed, _ = ns.Long("randomSeed")
	txnMs, hasTxnMs := ns.Long("transactionDurationMs")
	txnID, hasTxnID := ns.String("transactionalId")
	props, hasProps := ns.Strings("producerConfig")
	cmdProps, hasCmdProps := ns.Strings("commandProperties")
	configFile, hasConfigFile := ns.String("producerConfigFile")
	cmdConfigFile, hasCmdConfigFile := ns.String("commandConfigFile")
	bootstrap, hasBootstrap := ns.String("bootstrapServer")

	switch o.keyDistribution {
	case "none", "range", "random":
	default:
		return fail(fmt.Sprintf("argument --key-distribution: invalid choice: '%s' (choose from {none,range,random})", o.keyDistribution))
	}
	switch {
	case o.numRecords <= 0:
		return fail("--num-records should be greater than zero.")
	case o.warmupRecords >= o.numRecords:
		return fail("The value for --warmup-records must be strictly fewer than the number of records in the test, --num-records.")
	case ns.Has("recordSize") && o.recordSize <= 0:
		return fail("--record-size should be greater than zero.")
	case hasTxnMs && txnMs <= 0:
		return fail("--transaction-duration-ms should be greater than zero.")
	case o.reportingInterval <= 0:
		return fail("--reporting-interval should be greater than zero.")
	case o.keyDistribution != "none" && !ns.Has("recordKeyRange"):
		return fail("--record-key-range is required when --key-distribution is 'range' or 'random'.")
	case ns.Has("recordKeyRange") && o.keyRange <= 0:
		return fail("--record-key-range should be greater than zero.")
	case hasProps && hasCmdProps:
		return fail("--command-property and --producer-props cannot be specified together.")
	case hasConfigFile && hasCmdConfigFile:
		return fail("--command-config and --producer.config cannot be specified together.")
	case !hasBootstrap && !hasProps && !hasCmdProps && !hasConfigFile && !hasCmdConfigFile:
		return fail("At least one of --bootstrap-server, --command-property, --producer-props, --producer.config or --command-config must be specified.")
	}
	if hasProps {
		o.notices = append(o.notices, "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.")
	}
	if hasConfigFile {
		o.notices = append(o.notices, "Option --producer.config has been deprecated and will be removed in a future version. Use --command-config instead.")
	}

	delim, _ := ns.String("payloadDelimiter")
	if delim == `\n` {
		// The default is shown as \n in the help; it means a newline.
		delim = "\n"
	}
	o.payloadDelimiter = delim

	// The file first, then the properties on the command line, then
	// --bootstrap-server; later ones win, as in the original.
	o.props = javaprops.New()
	if file := cmp(configFile, cmdConfigFile); file != "" {
		loaded, err := javaprops.LoadFile(file)
		if err != nil {
			return nil, &javaException{class: "java.nio.file.NoSuchFileException", msg: file, stdout: o.notices}
		}
		o.props.Merge(loaded)
	}
	for _, prop := range append(props, cmdProps...) {
		// Java splits on every '=' and wants exactly two pieces, so a value
		// containing '=' (or an empty one) is refused here as there.
		pieces := javaSplit(prop, "=")
		if len(pieces) != 2 {
			return nil, &javaException{class: "java.lang.IllegalArgumentException", msg: "Invalid property: " + prop, stdout: o.notices}
		}
		o.props.Set(pieces[0], pieces[1])
	}
	if hasBootstrap {
		o.props.Set("bootstrap.servers", bootstrap)
	}
	if _, ok := o.props.Get("client.id"); !ok {
		o.props.Set("client.id", "perf-producer-client")
	}
	_, idInProps := o.props.Get("transactional.id")
	o.transactional = hasTxnMs || hasTxnID || idInProps
	if o.transactional {
		id, _ := o.props.Get("transactional.id")
		switch {
		case hasTxnID:
			id = txnID
		case !idInProps:
			id = defaultTransactionIDPrefix + randomUUID()
		}
		o.props.Set("transactional.id", id)
		o.transactionMs = defaultTransactionDurationMs
		if hasTxnMs {
			o.transactionMs = txnMs
		}
	}
	return o, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// javaSplit is Java's String.split(sep) for a literal separator: trailing
// empty strings are removed.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return []string{""}
	}
	return parts
}

func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// readPayloadFile splits the file with the delimiter, a Java regex, as the
// original's Scanner does (empty tokens between delimiters are dropped).
func readPayloadFile(path, delimiter string, out func(string)) ([][]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	out("Reading payloads from: " + abs)
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return nil, &javaException{class: "java.lang.IllegalArgumentException", msg: "File does not exist or empty file provided."}
	}
	re, err := regexp.Compile(delimiter)
	if err != nil {
		return nil, &javaException{class: "java.util.regex.PatternSyntaxException", msg: err.Error()}
	}
	var values [][]byte
	for _, tok := range re.Split(string(data), -1) {
		if tok != "" {
			values = append(values, []byte(tok))
		}
	}
	out(fmt.Sprintf("Number of messages read: %d", len(values)))
	return values, nil
}

// ProducerMain runs kafka-producer-perf-test and returns its exit code.
// getenv supplies COLUMNS, which sets the help's wrap width as in argparse4j.
func ProducerMain(ctx context.Context, args []string, sys cli.IO) int {
	out := lineout.New(sys.Stdout)
	errOut := lineout.New(sys.Stderr)
	width := javaopts.FormatWidth(sys.Getenv("COLUMNS"))
	o, err := parseProducerOptions(args, width)
	if err != nil {
		return reportFatal(err, out, errOut)
	}
	for _, n := range o.notices {
		out.Line(n)
	}
	plan := &producerPlan{
		topic:             o.topic,
		numRecords:        o.numRecords,
		warmupRecords:     o.warmupRecords,
		throughput:        o.throughput,
		reportingInterval: o.reportingInterval,
		transactional:     o.transactional,
		transactionMs:     o.transactionMs,
		printMetrics:      o.printMetrics,
	}
	switch {
	case o.payloadFile != "":
		values, err := readPayloadFile(o.payloadFile, o.payloadDelimiter, out.Line)
		if err != nil {
			return reportFatal(err, out, errOut)
		}
		plan.payloads = &filePayloads{values: values, rng: mrand.New(mrand.NewPCG(uint64(o.randomSeed), 0))}
	case o.payloadMonotonic:
		plan.payloads = monotonicPayloads{}
	default:
		plan.payloads = newRandomPayloads(int(o.recordSize), uint64(o.randomSeed))
	}
	keys := newKeySource(o.keyDistribution, o.keyRange, uint64(o.randomSeed))
	largest := int(o.recordSize)
	if fp, ok := plan.payloads.(*filePayloads); ok {
		for _, v := range fp.values {
			largest = max(largest, len(v))
		}
	}
	if o.payloadMonotonic {
		largest = 20
	}

	clock := wallMs
	settings, err := newClientSettings(producerClient, o.props, log4jTime)
	if err != nil {
		return reportFatal(err, out, errOut)
	}
	for _, w := range settings.warnings {
		errOut.Line(w)
	}
	pc, err := settings.applyProducer(largest)
	if err != nil {
		return reportFatal(err, out, errOut)
	}
	if err := resolvableBootstrap(settings.bootstrap, errOut.Line); err != nil {
		return reportFatal(&javaException{class: "org.apache.kafka.common.KafkaException", msg: "Failed to construct kafka producer",
			cause: "org.apache.kafka.common.config.ConfigException: " + err.Error()}, out, errOut)
	}
	if o.transactional {
		settings.cfg.Producer.Transaction.ID = pc.transactionalID
		if id, ok := o.props.Get("transactional.id"); ok {
			settings.cfg.Producer.Transaction.ID = id
		}
	}
	client, err := connectClient(ctx, settings, pc.maxBlock, o.topic)
	if err != nil {
		errOut.Line(err.Error())
		return 1
	}
	defer client.Close()
	producer, err := sarama.NewAsyncProducerFromClient(client)
	if err != nil {
		errOut.Line(javaClientError(err))
		return 1
	}
	if o.warmupRecords > 0 {
		out.Line(fmt.Sprintf("Warmup first %d records. Steady state results will print after the complete test summary.", o.warmupRecords))
	}
	run := &producerRun{
		plan:            plan,
		deliveryTimeout: pc.deliveryTimeout,
		producer:        producer,
		clock:           clock,
		out:             out.Line,
		errOut:          errOut.Line,
		keys:            keys,
	}
	run.stats = newProducerStats(o.numRecords, o.reportingInterval, clock, out.Line)
	if err := run.run(ctx, pc); err != nil {
		errOut.Line(javaClientError(err))
	}
	out.Line(run.stats.totalLine())
	if s := run.steadyStats.Load(); s != nil {
		out.Line(s.totalLine())
	}
	if o.printMetrics {
		out.Write(formatMetrics(producerMetrics(run, settings.cfg)))
	}
	return 0
}

// connectClient connects to the cluster and waits for the topic's metadata,
// for at most max.block.ms as the Java producer's first send does. Unlike the
// original, which then fails every record after another max.block.ms, an
// unreachable cluster ends the run with one line.
func connectClient(ctx context.Context, s *clientSettings, maxBlock time.Duration, topic string) (sarama.Client, error) {
	timeout := fmt.Errorf("org.apache.kafka.common.errors.TimeoutException: Topic %s not present in metadata after %d ms.", topic, maxBlock.Milliseconds())
	ctx, cancel := context.WithTimeout(ctx, maxBlock)
	defer cancel()
	type result struct {
		client sarama.Client
		err    error
	}
	done := make(chan result, 1)
	go func() {
		for {
			client, err := sarama.NewClient(s.bootstrap, s.cfg)
			if err == nil {
				for ctx.Err() == nil {
					if parts, perr := client.Partitions(topic); perr == nil && len(parts) > 0 {
						done <- result{client: client}
						return
					}
					sleepCtx(ctx, 100*time.Millisecond)
					_ = client.RefreshMetadata(topic)
				}
				client.Close()
				done <- result{err: timeout}
				return
			}
			var cfgErr sarama.ConfigurationError
			if errors.As(err, &cfgErr) {
				done <- result{err: fmt.Errorf("org.apache.kafka.common.config.ConfigException: %s", string(cfgErr))}
				return
			}
			if ctx.Err() != nil {
				done <- result{err: timeout}
				return
			}
			sleepCtx(ctx, s.cfg.Metadata.Retry.Backoff)
		}
	}()
	select {
	case r := <-done:
		return r.client, r.err
	case <-ctx.Done():
		// The attempt in progress may still be dialling; the program ends
		// after this error, so it is left to finish on its own.
		return nil, timeout
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// javaClientError names a client-side failure as the Java tool's stack
// trace would start.
func javaClientError(err error) string {
	var cfgErr sarama.ConfigurationError
	if errors.As(err, &cfgErr) {
		return "org.apache.kafka.common.config.ConfigException: " + string(cfgErr)
	}
	if strings.HasPrefix(err.Error(), "org.apache.kafka") {
		return err.Error()
	}
	return "org.apache.kafka.common.KafkaException: " + err.Error()
}

// reportFatal prints what ends the program before the run and returns the exit code.
func reportFatal(err error, out, errOut *lineout.Writer) int {
	var exit *javaopts.Exit
	var jex *javaException
	var cfg *configError
	switch {
	case errors.As(err, &exit):
		out.Write(exit.Stdout)
		errOut.Write(exit.Stderr)
		return exit.Code
	case errors.As(err, &jex):
		for _, l := range jex.stdout {
			out.Line(l)
		}
		errOut.Line(fmt.Sprintf("Exception in thread \"main\" %s: %s", jex.class, jex.msg))
		if jex.cause != "" {
			errOut.Line("Caused by: " + jex.cause)
		}
		return 1
	case errors.As(err, &cfg):
		errOut.Line("Exception in thread \"main\" org.apache.kafka.common.config.ConfigException: " + cfg.msg)
		return 1
	}
	errOut.Line(err.Error())
	return 1
}
