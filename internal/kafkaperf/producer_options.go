package kafkaperf

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/javaprops"
	"github.com/perfclones/perfclones/internal/jvm"
)

const exactlyOnePayload44 = "Note that you must provide exactly one of --record-size, --payload-file or --payload-monotonic."

// producerArgs44 is kafka-producer-perf-test's option table in Kafka 4.4.
// It is also the superset every release parses with (producerAllArgs): the
// options of every release from 2.2 on are in it.
var producerArgs44 = []javaopts.Arg{
	{Flags: []string{"--bootstrap-server"}, Metavar: "BOOTSTRAP-SERVER", Dest: "bootstrapServer",
		Help: "The server(s) to connect to. This config takes precedence over bootstrap.servers specified via --command-property or --command-config."},
	{Flags: []string{"--topic"}, Required: true, Metavar: "TOPIC", Help: "Produce records to this topic."},
	{Flags: []string{"--num-records"}, Type: javaopts.TypeLong, Required: true, Metavar: "NUM-RECORDS", Dest: "numRecords",
		Help: "Number of records to produce."},
	{Flags: []string{"--record-size"}, Type: javaopts.TypeInteger, Metavar: "RECORD-SIZE", Dest: "recordSize", Group: "payload",
		Help: "Record size in bytes. " + exactlyOnePayload44},
	{Flags: []string{"--payload-file"}, Metavar: "PAYLOAD-FILE", Dest: "payloadFile", Group: "payload",
		Help: "File to read the record payloads from. This works only for UTF-8 encoded text files. Payloads will be read " +
			"from this file and a payload will be randomly selected when sending records. " + exactlyOnePayload44},
	{Flags: []string{"--payload-monotonic"}, Type: javaopts.TypeFlag, Dest: "payloadMonotonic", Group: "payload",
		Help: "Payload is a monotonically increasing integer. " + exactlyOnePayload44},
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
}

const exactlyOnePayload39 = "Note that you must provide exactly one of --record-size or --payload-file or --payload-monotonic."

// producerArgs39 is the option table of Kafka 3.9's tool: lower-case
// "message" texts, defaults shown for the transactional options, no 4.x
// options. Dests are those of producerArgs44, so that one reader serves
// both tables.
var producerArgs39 = []javaopts.Arg{
	{Flags: []string{"--topic"}, Required: true, Metavar: "TOPIC", Help: "produce messages to this topic"},
	{Flags: []string{"--num-records"}, Type: javaopts.TypeLong, Required: true, Metavar: "NUM-RECORDS", Dest: "numRecords",
		Help: "number of messages to produce"},
	{Flags: []string{"--record-size"}, Type: javaopts.TypeInteger, Metavar: "RECORD-SIZE", Dest: "recordSize", Group: "payload",
		Help: "message size in bytes. " + exactlyOnePayload39},
	{Flags: []string{"--payload-file"}, Metavar: "PAYLOAD-FILE", Dest: "payloadFile", Group: "payload",
		Help: "file to read the message payloads from. This works only for UTF-8 encoded text files. Payloads will be read " +
			"from this file and a payload will be randomly selected when sending messages. " + exactlyOnePayload39},
	{Flags: []string{"--payload-monotonic"}, Type: javaopts.TypeFlag, Dest: "payloadMonotonic", Group: "payload",
		Help: "payload is monotonically increasing integer. " + exactlyOnePayload39},
	{Flags: []string{"--payload-delimiter"}, Metavar: "PAYLOAD-DELIMITER", Dest: "payloadDelimiter", Default: `\n`,
		Help: "provides delimiter to be used when --payload-file is provided. Defaults to new line. Note that this " +
			"parameter will be ignored if --payload-file is not provided."},
	{Flags: []string{"--throughput"}, Type: javaopts.TypeDouble, Required: true, Metavar: "THROUGHPUT",
		Help: "throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to -1 to disable throttling."},
	{Flags: []string{"--producer-props"}, Nargs: "+", Metavar: "PROP-NAME=PROP-VALUE", Dest: "producerConfig",
		Help: "kafka producer related configuration properties like bootstrap.servers,client.id etc. These configs take " +
			"precedence over those passed via --producer.config."},
	{Flags: []string{"--producer.config"}, Metavar: "CONFIG-FILE", Dest: "producerConfigFile", Help: "producer config properties file."},
	{Flags: []string{"--print-metrics"}, Type: javaopts.TypeFlag, Dest: "printMetrics", Help: "print out metrics at the end of the test."},
	{Flags: []string{"--transactional-id"}, Metavar: "TRANSACTIONAL-ID", Dest: "transactionalId",
		Default: "performance-producer-default-transactional-id",
		Help:    "The transactionalId to use if transaction-duration-ms is > 0. Useful when testing the performance of concurrent transactions."},
	{Flags: []string{"--transaction-duration-ms"}, Type: javaopts.TypeLong, Metavar: "TRANSACTION-DURATION", Dest: "transactionDurationMs",
		Default: int64(0),
		Help:    "The max age of each transaction. The commitTransaction will be called after this time has elapsed. Transactions are only enabled if this value is positive."},
}

const exactlyOnePayload27 = "Note that you must provide exactly one of --record-size or --payload-file."

// producerArgs27 is the option table of Kafka 2.7's tool: 3.9's without
// --payload-monotonic, and --throughput an Integer.
var producerArgs27 = func() []javaopts.Arg {
	var args []javaopts.Arg
	for _, a := range producerArgs39 {
		switch a.Flags[0] {
		case "--payload-monotonic":
			continue
		case "--throughput":
			a.Type = javaopts.TypeInteger
		case "--record-size", "--payload-file":
			a.Help = strings.Replace(a.Help, exactlyOnePayload39, exactlyOnePayload27, 1)
		}
		args = append(args, a)
	}
	return args
}()

// parser is the release's own argparse4j parser: its table, texts and
// program name.
func (r *producerRelease) parser() *javaopts.ArgParser {
	return r.parserWith(r.args)
}

// allParser parses the release's options and every other release's
// (those of producerArgs44, the newest, that the release lacks) under the
// release's name, for command lines that use an option of another
// release. The release's own options keep their types: 2.7's
// --throughput still takes only integers.
func (r *producerRelease) allParser() *javaopts.ArgParser {
	own := map[string]bool{}
	for _, a := range r.args {
		for _, f := range a.Flags {
			own[f] = true
		}
	}
	args := append([]javaopts.Arg{}, r.args...)
	for _, a := range producerArgs44 {
		if !own[a.Flags[0]] {
			args = append(args, a)
		}
	}
	return r.parserWith(args)
}

func (r *producerRelease) parserWith(args []javaopts.Arg) *javaopts.ArgParser {
	return &javaopts.ArgParser{
		Prog:         r.prog,
		Description:  r.description,
		DefaultHelp:  true,
		HelpOnNoArgs: true,
		Groups:       []javaopts.Group{{Name: "payload", Mutex: true, Required: true, Description: r.payloadGroup}},
		Args:         args,
	}
}

// producerRelease is how one release's kafka-producer-perf-test differs.
type producerRelease struct {
	// prog is argparse4j's program name in usage and error lines.
	prog        string
	description string
	// args is the release's own option table: it alone drives the help,
	// the usage and the parse errors. The other releases' options are
	// parsed by producerAllArgs when a command line uses them.
	args []javaopts.Arg
	// payloadGroup is the payload group's help description.
	payloadGroup string
	// noClientConfig is the parser error when no option gives client
	// settings.
	noClientConfig string
	// checksAtParse: 4.x refuses --num-records, --record-size and
	// --transaction-duration-ms below 1 as parser errors. Before, a zero
	// --num-records ends in "/ by zero" and a negative --record-size in
	// NegativeArraySizeException once the producer is built, and a
	// duration below 1 means no transactions.
	checksAtParse bool
	// deprecationNotices: 4.2+ print a notice on stdout for each use of
	// --producer-props and --producer.config.
	deprecationNotices bool
	transactions       transactionRules
	// payloadCountLine is the format of the line after "Reading payloads
	// from: ..." ("messages" up to 3.9, "records" in 4.x).
	payloadCountLine string
	// payloadTokens splits the --payload-file text at the delimiter:
	// String.split up to 3.9, a Scanner from 4.0 (empty tokens count
	// differently).
	payloadTokens func(text string, delimiter *regexp.Regexp) []string
	// noPayloads is the message of the IllegalArgumentException when the
	// file holds no payload.
	noPayloads string
	// clientID is the client.id the tool sets when none is given
	// ("perf-producer-client" from 3.1; before, none: the Java client
	// names itself producer-1).
	clientID string
	// onePayload: up to 2.8, --record-size sends one value drawn once
	// with every record; from 3.0 each record gets fresh random letters.
	onePayload bool
	// client are the Java client's defaults of the release.
	client producerClientDefaults
	// unknownConfigWarn: up to 2.8 the Java clients log a setting they do
	// not know at WARN, which the tools print; from 3.0 at INFO, which
	// they do not.
	unknownConfigWarn bool
	// bootstrapRequired: the 4.x producer has no default bootstrap.servers
	// (ConfigDef refuses a producer without it); before, an empty list is
	// the constructor's "No resolvable bootstrap urls".
	bootstrapRequired bool
	// dirHasNoPayloads: a --payload-file that is a directory gives no
	// payloads (4.x) rather than an IOException (up to 3.9).
	dirHasNoPayloads bool
}

// logged are the client warnings the release's tool prints (see
// unknownConfigWarn).
func (r *producerRelease) logged(warnings []string) []string {
	return loggedWarnings(warnings, r.unknownConfigWarn)
}

// producerClientDefaults are the Java producer's defaults that changed
// under the tool.
type producerClientDefaults struct {
	acks        string // "1" up to 2.8, "all" from 3.0 (KIP-679)
	idempotence bool   // enable.idempotence: false up to 2.8, true from 3.0
	lingerMs    int64  // 0 up to 3.9, 5 from 4.0 (KIP-1030)
	// inFlightOver5Fails: with default idempotence, more than 5 requests in
	// flight is an error from 4.0; before, idempotence is turned off with a
	// warning.
	inFlightOver5Fails bool
}

// transactionRules say when a run is transactional and with which id.
type transactionRules struct {
	// onlyWithDuration: up to 3.9 transactions are on only when
	// --transaction-duration-ms is positive; from 4.0 also when a
	// transactional id is given, with a default duration.
	onlyWithDuration  bool
	defaultDurationMs int64
	// defaultID is the transactional.id when none is given; "" means
	// "performance-producer-" and a random UUID (4.0+).
	defaultID string
}

// producerOptions is what the command line asks for, checked.
type producerOptions struct {
	topic             string
	numRecords        int64
	recordSize        int32 // 0 when not given
	hasRecordSize     bool
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
	client            clientInputs
}

// parseProducer parses with the release's own table, so that help, usage
// and errors are the release's; a command line it refuses is parsed again
// with every release's options, and accepted if that succeeds (a 3.9 run
// may use --bootstrap-server). When both refuse it, the release's error
// stands.
func (r *producerRelease) parseProducer(args []string, width int) (*javaopts.Namespace, error) {
	ns, err := r.parser().Parse(args, width)
	if err == nil {
		return ns, nil
	}
	if ns, allErr := r.allParser().Parse(args, width); allErr == nil {
		return ns, nil
	}
	return nil, err
}

// parseProducerOptions turns the command line into options; a command
// line that ends the program early gives a *cli.Exit.
func parseProducerOptions(args []string, width int, rel *producerRelease) (*producerOptions, error) {
	ns, err := rel.parseProducer(jvm.Args(args), width)
	if err != nil {
		return nil, err
	}
	fail := func(msg string) (*producerOptions, error) { return nil, rel.parser().Fail(msg, width) }
	o := &producerOptions{}
	o.topic, _ = ns.String("topic")
	o.numRecords, _ = ns.Long("numRecords")
	o.recordSize, o.hasRecordSize = ns.Int("recordSize")
	o.payloadFile, _ = ns.String("payloadFile")
	o.payloadMonotonic = ns.Bool("payloadMonotonic")
	if d, ok := ns.Double("throughput"); ok {
		o.throughput = d
	} else if n, ok := ns.Long("throughput"); ok {
		o.throughput = float64(n) // an Integer before 3.9
	}
	o.printMetrics = ns.Bool("printMetrics")
	o.warmupRecords, _ = ns.Long("warmupRecords")
	o.warmupRecords = max(o.warmupRecords, 0)
	o.reportingInterval = 5000
	if v, ok := ns.Long("reportingInterval"); ok {
		o.reportingInterval = v
	}
	o.keyDistribution = "none"
	if v, ok := ns.String("keyDistribution"); ok {
		o.keyDistribution = v
	}
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
	case rel.checksAtParse && o.numRecords <= 0:
		return fail("--num-records should be greater than zero.")
	case o.warmupRecords > 0 && o.warmupRecords >= o.numRecords:
		return fail("The value for --warmup-records must be strictly fewer than the number of records in the test, --num-records.")
	case rel.checksAtParse && o.hasRecordSize && o.recordSize <= 0:
		return fail("--record-size should be greater than zero.")
	case rel.checksAtParse && hasTxnMs && txnMs <= 0:
		return fail("--transaction-duration-ms should be greater than zero.")
	case o.reportingInterval <= 0:
		return fail("--reporting-interval should be greater than zero.")
	case o.keyDistribution != "none" && !ns.Has("recordKeyRange"):
		return fail("--record-key-range is required when --key-distribution is 'range' or 'random'.")
	case ns.Has("recordKeyRange") && o.keyDistribution == "none":
		return fail("--key-distribution must be 'range' or 'random' when --record-key-range is specified.")
	case ns.Has("recordKeyRange") && o.keyRange <= 0:
		return fail("--record-key-range should be greater than zero.")
	case hasProps && hasCmdProps:
		return fail("--command-property and --producer-props cannot be specified together.")
	case hasConfigFile && hasCmdConfigFile:
		return fail("--command-config and --producer.config cannot be specified together.")
	case !hasBootstrap && !hasProps && !hasCmdProps && !hasConfigFile && !hasCmdConfigFile:
		return fail(rel.noClientConfig)
	}
	if rel.deprecationNotices && hasProps {
		o.notices = append(o.notices, "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.")
	}
	if rel.deprecationNotices && hasConfigFile {
		o.notices = append(o.notices, "Option --producer.config has been deprecated and will be removed in a future version. Use --command-config instead.")
	}

	if o.throughput == 0 {
		// Java's throttler waits forever at 0 after the first record; ours
		// refuses the value instead of hanging.
		return fail("argument --throughput: 0 would stop after the first record forever (the Java tool hangs); use -1 for no limit")
	}
	if ns.Has("payloadFile") {
		if err := rel.payloadFileIsDirectory(o.payloadFile); err != nil {
			return nil, err
		}
	}

	delim, _ := ns.String("payloadDelimiter")
	if delim == `\n` || delim == "" {
		// The default is shown as \n in the help; it means a newline.
		delim = "\n"
	}
	o.payloadDelimiter = delim
	if o.payloadFile != "" {
		// The file is split with the delimiter once it is read: a pattern
		// Java refuses ends the run then, after the file's path is printed.
		if st, err := os.Stat(o.payloadFile); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			_, translated, err := javaPattern(delim, "", "")
			if err != nil {
				abs, _ := filepath.Abs(o.payloadFile)
				return nil, jvm.Uncaught(jvm.Exception{Class: "java.util.regex.PatternSyntaxException", Message: err.Error()},
					[]string{"Reading payloads from: " + abs})
			}
			o.payloadDelimiter = translated
		}
	}

	o.client = clientInputs{
		propArgs: append(props, cmdProps...), configFile: firstNonEmpty(configFile, cmdConfigFile),
		hasConfigFile: hasConfigFile || hasCmdConfigFile,
		bootstrap:     bootstrap, hasBootstrap: hasBootstrap,
		txnID: txnID, hasTxnID: hasTxnID, txnMs: txnMs, hasTxnMs: hasTxnMs,
	}
	return o, nil
}

// clientInputs are the options that make the client's properties, read
// after the payload file as the original does (readProps).
type clientInputs struct {
	propArgs   []string // --producer-props or --command-property
	configFile string   // --producer.config or --command-config
	// hasConfigFile: a file was named (an empty name is the working
	// directory, as in Java).
	hasConfigFile bool
	bootstrap     string
	hasBootstrap  bool
	txnID         string
	hasTxnID      bool
	txnMs         int64
	hasTxnMs      bool
}

// readProps makes the client's properties: the file first, then the
// properties on the command line, then --bootstrap-server (later ones
// win), client.id and the transactional settings of the release. A file
// that cannot be read or a property without exactly one value ends the
// program with Java's exception.
func (o *producerOptions) readProps(rel *producerRelease) error {
	in := o.client
	o.props = javaprops.New()
	if in.hasConfigFile {
		loaded, ferr := loadPropsFile(in.configFile)
		switch {
		case ferr == nil:
			o.props.Merge(loaded)
		case ferr.directory:
			return jvm.Uncaught(jvm.Exception{Class: "java.io.IOException", Message: "Is a directory"}, nil)
		case ferr.malformed:
			return jvm.Uncaught(malformedEscape, nil)
		default:
			return jvm.Uncaught(jvm.Exception{Class: "java.nio.file.NoSuchFileException", Message: in.configFile}, nil)
		}
	}
	for _, prop := range in.propArgs {
		// Java splits on every '=' and wants exactly two pieces, so a value
		// containing '=' (or an empty one) is refused here as there.
		pieces := javaopts.JavaSplit(prop, "=")
		if len(pieces) != 2 {
			return jvm.Uncaught(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Invalid property: " + prop}, nil)
		}
		o.props.Set(pieces[0], pieces[1])
	}
	if in.hasBootstrap {
		o.props.Set("bootstrap.servers", in.bootstrap)
	}
	if _, ok := o.props.Get("client.id"); !ok && rel.clientID != "" {
		o.props.Set("client.id", rel.clientID)
	}
	o.transactional, o.transactionMs = rel.transactions.decide(o.props, in.txnID, in.hasTxnID, in.txnMs, in.hasTxnMs)
	// What building the Java producer refuses first, whatever client runs
	// underneath.
	return checkProducerConfig(o.props, rel.bootstrapRequired)
}

// decide says whether the run is transactional and its commit interval,
// and sets transactional.id in props when it is.
func (t transactionRules) decide(props *javaprops.Properties, id string, hasID bool, durationMs int64, hasDuration bool) (bool, int64) {
	if t.onlyWithDuration {
		if !hasDuration || durationMs <= 0 {
			return false, 0
		}
		if !hasID {
			id = t.defaultID
		}
		props.Set("transactional.id", id)
		return true, durationMs
	}
	propID, idInProps := props.Get("transactional.id")
	if !hasDuration && !hasID && !idInProps {
		return false, 0
	}
	switch {
	case hasID:
	case idInProps:
		id = propID
	case t.defaultID != "":
		id = t.defaultID
	default:
		id = "performance-producer-" + randomUUID()
	}
	props.Set("transactional.id", id)
	if !hasDuration {
		durationMs = t.defaultDurationMs
	}
	return true, durationMs
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// payloadFileIsDirectory is how the Java tool ends when --payload-file
// names a directory (an empty name is the working directory): it prints
// the path it reads from, then the IOException of reading it (up to 3.9)
// or, from 4.0, finds no payload in it.
func (r *producerRelease) payloadFileIsDirectory(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil
	}
	e := jvm.Exception{Class: "java.io.IOException", Message: "Is a directory"}
	if r.dirHasNoPayloads {
		e = jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: r.noPayloads}
	}
	return jvm.Uncaught(e, []string{"Reading payloads from: " + abs})
}
