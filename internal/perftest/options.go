package perftest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/jvm"
)

// options are the settings of one PerfTest run, read from the command line
// (and the environment variables that override it) in PerfTest's order.
type options struct {
	id                                 string
	idGiven                            bool // -d given, even empty
	exchangeType, exchangeName         string
	queues                             []string // -u, split at commas; nil without
	routingKey                         string   // -k; "" = a random UUID per run
	randomRoutingKey, skipBinding      bool
	interval                           int // -i, seconds
	producerRate, consumerRate         float64
	producers, consumers               int
	producerChannels, consumerChannels int
	producerTx, consumerTx             int
	confirm                            int64 // -c; -1 = off
	confirmTimeout                     int   // -ct, seconds
	autoAck                            bool
	multiAckEvery                      int
	channelPrefetch, consumerPrefetch  int
	minMsgSize                         int
	slowStart                          bool
	timeLimit                          int // -z, seconds; 0 = none
	producerMsgCount, consumerMsgCount int
	flags                              []string
	frameMax, heartbeat                int
	predeclared                        bool
	legacyMetrics                      bool
	autoDelete                         bool
	useMillis                          bool
	queueArgs                          map[string]any
	consumerLatencyMicros              int
	uris                               []string
	outputFile                         string
	queuePattern                       string
	patternFrom, patternTo             int
	exclusive                          bool
	quorum                             bool
	nack, requeue                      bool
	metricsFormat                      string        // "default" or "compact" (2.19+)
	publishingInterval                 float64       // -P, seconds; 0 = off
	exitWhen                           string        // -ew: "", "empty" or "idle"
	disableRecovery                    bool          // -dcr
	recoveryDelay                      recoveryDelay // -cri
	shutdownTimeout                    int
	serversStartupTimeout              int        // -sst, seconds; <= 0 = fail at once
	messageProperties                  []keyValue // -mp, in the order given
	routingKeyCacheSize                int        // -rkcs; > 0 cycles through that many random keys
	// variableRates, variableSizes, variableLatencies are -vr, -vs and -vl
	// (VALUE:SECONDS each, validated).
	variableRates, variableSizes, variableLatencies []string
	polling                                         bool // -po: basic.get instead of basic.consume
	pollingInterval                                 int  // -pi, ms between gets; <= 0 none
	bodyFiles                                       []string
	bodyContentType                                 string // -T
	jsonBody                                        bool   // -jb
	bodyFieldCount, bodyCount                       int    // -bfc, -bc
	verbose, verboseFull                            bool   // --verbose, --verbose-full
	// nioThreads and nioPool are -niot and -niotp, -1 when absent; main
	// checks them as the Java client's NIO set-up does.
	nioThreads, nioPool  int
	useDefaultSSLContext bool // -udsc: verify the broker's certificate
	nioErr               error
	// saslExternal is -se; oauth2 the OAuth2 options (2.19+), checked
	// by main where PerfTest sets its credentials provider up.
	saslExternal bool
	oauth2       oauth2Request
	// producerStartDelay is -prsd in seconds: each producer waits a random
	// 1 ms to that many seconds before its first message; <= 0 none. As in
	// PerfTest 2.20+, any rate option (-r, -vr, -P) without -prsd makes it 1.
	producerStartDelay int
	// consumerStartDelay is -csd (2.19+) in seconds: the consumers start
	// consuming that long after the run starts; <= 0 at once.
	consumerStartDelay int
	consumerArgs       map[string]any // -ca, basic.consume's arguments; nil without
	serversUpLimit     int            // -sul; -1 = every URI
	// sendBuffer and receiveBuffer are -tsbs and -trbs (SO_SNDBUF and
	// SO_RCVBUF), set on each socket when > 0; tcpNoDelay is -tnd.
	sendBuffer, receiveBuffer int
	tcpNoDelay                bool
	socketErr                 error    // a bad -tsbs or -trbs number
	serverNames               []string // -sni, the TLS server name(s)
	// expectedInstances is -ei: 2 or more synchronize that many PerfTest
	// instances before the run, for -ist seconds (syncTimeout) at most;
	// syncNamespace is -isn. syncTimeoutErr is a bad -ist number, which
	// main reports where PerfTest reads it.
	expectedInstances int
	syncNamespace     string
	syncTimeout       int
	syncTimeoutErr    error
	// ignored lists options given that this clone parses but does not act
	// on; the run names them on stderr.
	ignored []string
	// line is the parsed line itself: the metrics options are read from
	// it where PerfTest reads them, once the connection settings are made.
	line *commandLine
}

// commandLine is the parsed line with PerfTest's environment-variable
// overrides (CommandLineProxy): for an option's long name NAME-X, a set
// variable NAME_X (with RABBITMQ_PERF_TEST_ENV_PREFIX) wins over the line.
type commandLine struct {
	line   *javaopts.CommonsLine
	byKey  map[string]*javaopts.CommonsOption
	getenv func(string) string
}

func envName(getenv func(string) string, long string) string {
	name := strings.ToUpper(strings.ReplaceAll(long, "-", "_"))
	prefix := getenv("RABBITMQ_PERF_TEST_ENV_PREFIX")
	if strings.TrimSpace(prefix) == "" {
		return name
	}
	if strings.HasSuffix(prefix, "_") {
		return prefix + name
	}
	return prefix + "_" + name
}

func (c *commandLine) override(key string) (string, bool) {
	o := c.byKey[key]
	if o == nil || o.Long == "" {
		return "", false
	}
	v := c.getenv(envName(c.getenv, o.Long))
	return v, v != ""
}

func (c *commandLine) has(key string) bool {
	if v, ok := c.override(key); ok {
		return strings.EqualFold(v, "true")
	}
	return c.line.Has(key)
}

func (c *commandLine) str(key, def string) string {
	if v, ok := c.override(key); ok {
		return v
	}
	return c.line.ValueOr(key, def)
}

func (c *commandLine) list(key string) []string {
	if v, ok := c.override(key); ok {
		return strings.Split(v, ",")
	}
	return c.line.Values(key)
}

// numberError is a NumberFormatException thrown while reading the options.
type numberError struct{ msg string }

func (e *numberError) Error() string { return e.msg }

func (c *commandLine) integer(key string, def int) (int, error) {
	v, ok := c.lookupValue(key)
	if !ok {
		return def, nil
	}
	n, err := javaopts.ParseJavaInt(v)
	if err != nil {
		return 0, &numberError{msg: err.Error()}
	}
	return int(n), nil
}

func (c *commandLine) float(key string, def float64) (float64, error) {
	v, ok := c.lookupValue(key)
	if !ok {
		return def, nil
	}
	f, err := javaopts.ParseJavaDouble(v)
	if err != nil {
		return 0, &numberError{msg: err.Error()}
	}
	return float64(float32(f)), nil
}

func (c *commandLine) lookupValue(key string) (string, bool) {
	if v, ok := c.override(key); ok {
		return v, true
	}
	return c.line.Value(key)
}

// parseOptions reads args as the release's PerfTest main does, up to the
// point where it connects. Every early ending (help, version, a parse or
// validation error) is an *cli.Exit with the release's text; a bad number
// is a *numberError, which the caller reports as PerfTest's catch-all.
func parseOptions(d *diff, args []string, getenv func(string) string) (*options, error) {
	all := append(append([]javaopts.CommonsOption{}, d.optionTable...), d.metricsTable...)
	parser := &javaopts.CommonsParser{Options: all}
	line, err := parser.Parse(args)
	if err != nil && strings.HasPrefix(err.Error(), "Unrecognized option: ") {
		// Options of the other releases stay accepted (and are named on
		// stderr when this release does not act on them); a line the
		// release's own table rejects for any other reason, or that no
		// release knows, gets the release's error.
		union := withOtherReleases(all)
		if l, uerr := (&javaopts.CommonsParser{Options: union}).Parse(args); uerr == nil {
			line, err, all = l, nil, union
		}
	}
	if err != nil {
		return nil, &cli.Exit{Code: 0, Stderr: "Parsing failed. Reason: " + err.Error() + "\n", Stdout: parser.Help("<program>")}
	}
	c := &commandLine{line: line, byKey: map[string]*javaopts.CommonsOption{}, getenv: getenv}
	for i := range all {
		c.byKey[all[i].Key()] = &all[i]
	}
	main := &javaopts.CommonsParser{Options: d.optionTable}
	metrics := &javaopts.CommonsParser{Options: d.metricsTable}
	switch {
	case c.has("mh") && c.has("env"):
		return nil, &cli.Exit{Stdout: envHelp(metrics)}
	case c.has("mh"):
		return nil, &cli.Exit{Stdout: metrics.Help("<program>")}
	case c.has("env"):
		return nil, &cli.Exit{Stdout: envHelp(main)}
	case c.has("?"):
		return nil, &cli.Exit{Stdout: main.Help("<program>")}
	case c.has("v"):
		return nil, &cli.Exit{Stdout: versionText(d)}
	}
	return readOptions(d, c)
}

// withOtherReleases is table followed by every option of the other
// releases whose names it lacks.
func withOtherReleases(table []javaopts.CommonsOption) []javaopts.CommonsOption {
	have := map[string]bool{}
	for _, o := range table {
		have[o.Key()], have["--"+o.Long] = true, o.Long != ""
	}
	out := append([]javaopts.CommonsOption{}, table...)
	for _, rel := range releases.List {
		for _, group := range [][]javaopts.CommonsOption{rel.Diff.optionTable, rel.Diff.metricsTable} {
			for _, o := range group {
				if !have[o.Key()] && (o.Long == "" || !have["--"+o.Long]) {
					out = append(out, o)
					have[o.Key()], have["--"+o.Long] = true, o.Long != ""
				}
			}
		}
	}
	return out
}

// envHelp is -env's usage: the options' environment-variable names, with
// no dash, in place of the options (help, version and -env left out).
func envHelp(p *javaopts.CommonsParser) string {
	var env []javaopts.CommonsOption
	for _, o := range p.Options {
		if o.Short == "?" || o.Short == "v" || o.Short == "env" {
			continue
		}
		env = append(env, javaopts.CommonsOption{Short: strings.ToUpper(strings.ReplaceAll(o.Long, "-", "_")), Desc: o.Desc})
	}
	q := &javaopts.CommonsParser{Options: env, NoOptPrefix: true}
	return q.Help("<program>. For multi-value options, separate values with commas, e.g. VARIABLE_RATE='100:60,1000:10,500:15'")
}

func versionText(d *diff) string {
	return "\x1b[1m" + d.versionLine + "\n" +
		"\x1b[0mRabbitMQ AMQP Client version: perfclones (github.com/rabbitmq/amqp091-go)\n"
}

// validation is a one-line error that ends the run with code 1, on the
// stream the release prints it (2.18: stdout for most).
func validation(d *diff, toStderr bool, msg string) *cli.Exit {
	if toStderr || d.validationToStderr {
		return &cli.Exit{Code: 1, Stderr: msg + "\n"}
	}
	return &cli.Exit{Code: 1, Stdout: msg + "\n"}
}

// readOptions is the body of PerfTest's main between the help checks and
// the connection: values in the original's order, so the first bad
// number is the one reported.
func readOptions(d *diff, c *commandLine) (*options, error) {
	o := &options{line: c}
	var err error
	num := func(key string, def int) int {
		if err != nil {
			return def
		}
		var v int
		v, err = c.integer(key, def)
		return v
	}
	flt := func(key string, def float64) float64 {
		if err != nil {
			return def
		}
		var v float64
		v, err = c.float(key, def)
		return v
	}
	if ownOption(d, "ei") {
		// 2.20+ read -ei first of all; two instances or more need an ID.
		if o.expectedInstances = num("ei", 0); err != nil {
			return nil, err
		}
		if _, id := c.lookupValue("d"); o.expectedInstances >= 2 && !id {
			return nil, validation(d, true, "A test ID is mandatory when instance synchronization is activated")
		}
		o.syncTimeout = 600
		if v, ok := c.lookupValue("ist"); ok {
			o.syncTimeout, o.syncTimeoutErr = javaIntOrError(v)
		}
		o.syncNamespace, _ = c.lookupValue("isn")
	}
	o.id = c.str("d", "")
	o.idGiven = c.has("d")
	o.exchangeType = c.str("t", "direct")
	o.exchangeName = exchangeName(c, o.exchangeType)
	if q := c.str("u", ""); c.lineOrEnv("u") {
		o.queues = strings.Split(q, ",")
	}
	o.routingKey = c.str("k", "")
	o.randomRoutingKey = c.has("K")
	o.skipBinding = c.has("sb")
	o.interval = num("i", 1)
	o.producerRate = flt("r", -1)
	o.consumerRate = flt("R", -1)
	o.producers = num("x", 1)
	o.consumers = num("y", 1)
	o.producerChannels = num("X", 1)
	o.consumerChannels = num("Y", 1)
	o.producerTx = num("m", 0)
	o.consumerTx = num("n", 0)
	o.confirm = int64(num("c", -1))
	o.confirmTimeout = num("ct", 30)
	o.autoAck = c.has("a")
	o.multiAckEvery = num("A", 0)
	o.channelPrefetch = num("Q", 0)
	o.consumerPrefetch = num("q", 0)
	o.minMsgSize = num("s", 0)
	o.slowStart = c.has("S")
	o.timeLimit = num("z", 0)
	o.producerMsgCount = num("C", 0)
	o.consumerMsgCount = num("D", 0)
	o.flags = c.list("f")
	o.frameMax = num("M", 0)
	o.heartbeat = num("b", 0)
	o.predeclared = c.has("p")
	o.legacyMetrics = d.legacyMetrics && c.has("l")
	o.autoDelete = strings.EqualFold(c.str("ad", "true"), "true")
	o.useMillis = c.has("ms")
	queueArgs := c.str("qa", "")
	o.consumerLatencyMicros = num("L", 0)
	// -hst, -pst and -ctp size Java thread pools (heartbeat senders,
	// producer schedulers, consumer dispatchers); goroutines need none, so
	// a valid number changes nothing here, but a bad one fails as there.
	num("hst", -1)
	o.messageProperties = keyValuePairs(c.str("mp", ""))
	o.routingKeyCacheSize = num("rkcs", 0)
	o.exclusive = c.has("E")
	o.producerStartDelay = num("prsd", -1)
	if ownOption(d, "csd") {
		o.consumerStartDelay = num("csd", -1)
	}
	num("pst", -1)
	num("ctp", -1)
	o.shutdownTimeout = num("st", 5)
	o.serversStartupTimeout = num("sst", -1)
	o.serversUpLimit = num("sul", -1)
	var thrown *jvm.Exception
	if o.consumerArgs, thrown = consumerArguments(d, c.str("ca", "")); thrown != nil {
		return nil, &javaThrow{*thrown}
	}
	o.disableRecovery = c.has("dcr")
	o.nack = c.has("na")
	o.requeue = strings.EqualFold(c.str("re", "true"), "true")
	o.metricsFormat = "default"
	if d.metricsRefactor {
		o.metricsFormat = c.str("mf", "default")
	}
	if err != nil {
		return nil, err
	}
	// PerfTest reads -cri right after -M, -b and -i, whether or not
	// recovery is on.
	var cri *jvm.Exception
	if o.recoveryDelay, cri = parseRecoveryInterval(c.str("cri", "")); cri != nil {
		return nil, &javaThrow{*cri}
	}
	if v := c.str("P", ""); v != "" {
		if msg := checkPublishingInterval(v); msg != "" {
			return nil, validation(d, false, "Invalid value for --publishing-interval: "+msg)
		}
		o.publishingInterval, _ = strconv.ParseFloat(v, 64)
	}
	for _, key := range []string{"vr", "vs", "vl"} {
		for _, v := range c.list(key) {
			if !validVariable(v) {
				return nil, validation(d, false, "Invalid variable value definition: "+v+
					". Should be [VALUE]:[DURATION] with VALUE integer >= 0 and DURATION integer > 0")
			}
		}
	}
	o.variableRates, o.variableSizes, o.variableLatencies = c.list("vr"), c.list("vs"), c.list("vl")
	if d.metricsRefactor && (len(o.variableRates) > 0 || o.producerRate >= 0 || o.publishingInterval > 0) && o.producerStartDelay < 0 {
		o.producerStartDelay = 1
	}
	o.polling = c.has("po")
	o.pollingInterval = num("pi", -1)
	o.jsonBody = c.has("jb")
	if o.bodyFieldCount = num("bfc", 1000); err == nil && o.bodyFieldCount < 0 {
		return nil, validation(d, false, "Body field count should greater than 0.")
	}
	if o.bodyCount = num("bc", 100); err == nil && o.bodyCount < 0 {
		return nil, validation(d, false, "Number of pre-generated message bodies should be greater than 0.")
	}
	if err != nil {
		return nil, err
	}
	uri := c.str("h", "amqp://localhost")
	if c.has("H") {
		// Java's String.split: trailing empty pieces go, and a value
		// without a comma is one piece even when empty.
		pieces := strings.Split(c.str("H", ""), ",")
		for len(pieces) > 1 && pieces[len(pieces)-1] == "" {
			pieces = pieces[:len(pieces)-1]
		}
		if len(pieces) == 1 && pieces[0] == "" && strings.Contains(c.str("H", ""), ",") {
			pieces = nil
		}
		o.uris = []string{}
		for _, one := range pieces {
			o.uris = append(o.uris, strings.TrimSpace(one))
		}
	} else {
		o.uris = []string{uri}
	}
	o.outputFile = c.str("o", "")
	if b := c.str("B", ""); c.lineOrEnv("B") {
		// String.split: "" is one (empty) file name, trailing empty
		// pieces go.
		o.bodyFiles = strings.Split(b, ",")
		for len(o.bodyFiles) > 0 && o.bodyFiles[len(o.bodyFiles)-1] == "" && b != "" {
			o.bodyFiles = o.bodyFiles[:len(o.bodyFiles)-1]
		}
	}
	o.bodyContentType = c.str("T", "")
	o.verbose, o.verboseFull = c.has("verbose"), c.has("verbose-full")
	o.useDefaultSSLContext = c.has("udsc")
	o.saslExternal = c.has("se")
	if ownOption(d, "o2uri") {
		o.oauth2.endpoint = c.str("o2uri", "")
		o.oauth2.clientID, o.oauth2.idSet = c.lookupValue("o2id")
		o.oauth2.secret, o.oauth2.secretSet = c.lookupValue("o2sec")
		o.oauth2.grantType = c.str("o2gr", "client_credentials")
		o.oauth2.params = c.list("o2p")
	}
	o.sendBuffer, o.receiveBuffer, o.tcpNoDelay = -1, -1, true
	if ownOption(d, "tsbs") {
		// 2.22+ reads these with the TLS server names, once the TLS and
		// NIO settings are made: main reports socketErr at that point.
		if v, ok := c.lookupValue("tsbs"); ok {
			o.sendBuffer, o.socketErr = javaIntOrError(v)
		}
		if v, ok := c.lookupValue("trbs"); ok && o.socketErr == nil {
			o.receiveBuffer, o.socketErr = javaIntOrError(v)
		}
		o.tcpNoDelay = strings.EqualFold(c.str("tnd", "true"), "true")
	}
	if sni := c.str("sni", ""); strings.TrimSpace(sni) != "" {
		// String.split drops trailing empty pieces; each name is trimmed.
		pieces := strings.Split(sni, ",")
		for len(pieces) > 1 && pieces[len(pieces)-1] == "" {
			pieces = pieces[:len(pieces)-1]
		}
		for _, name := range pieces {
			o.serverNames = append(o.serverNames, strings.TrimSpace(name))
		}
	}
	o.nioThreads, o.nioPool = -1, -1
	if v, ok := c.lookupValue("niot"); ok {
		o.nioThreads, o.nioErr = javaIntOrError(v)
	}
	if v, ok := c.lookupValue("niotp"); ok && o.nioErr == nil {
		o.nioPool, o.nioErr = javaIntOrError(v)
	}
	for _, pair := range strings.Split(queueArgs, ",") {
		if pair != "" && strings.Trim(pair, "=") == "" {
			// "=".split("=") is empty; PerfTest reads its element 0.
			return nil, &javaThrow{jvm.Exception{Class: "java.lang.ArrayIndexOutOfBoundsException", Message: "Index 0 out of bounds for length 0"}}
		}
	}
	o.queueArgs = keyValues(queueArgs)
	o.quorum = c.has("qq")
	if o.quorum {
		if !contains(o.flags, "persistent") {
			o.flags = append(append([]string{}, o.flags...), "persistent")
		}
		o.autoDelete = false
		if o.queueArgs == nil {
			o.queueArgs = map[string]any{}
		}
		o.queueArgs["x-queue-type"] = "quorum"
	}
	if d.metricsRefactor && c.has("sq") {
		if o.quorum {
			return nil, validation(d, true, "Use quorum queues or stream queues, not both.")
		}
		// Stream queues: persistent, kept, 20 GB / 500 MB segments, and a
		// prefetch of 200 unless -q says otherwise.
		if !contains(o.flags, "persistent") {
			o.flags = append(append([]string{}, o.flags...), "persistent")
		}
		o.autoDelete = false
		if o.queueArgs == nil {
			o.queueArgs = map[string]any{}
		}
		o.queueArgs["x-queue-type"] = "stream"
		o.queueArgs["x-max-length-bytes"] = int64(20_000_000_000)
		o.queueArgs["x-stream-max-segment-size-bytes"] = int64(500_000_000)
		if !c.lineOrEnv("q") {
			o.consumerPrefetch = 200
		}
	}
	if ew := c.str("ew", ""); c.has("ew") {
		if ew != "empty" && ew != "idle" {
			return nil, validation(d, false, "--exit-when must be 'empty' or 'idle'.")
		}
		o.exitWhen = ew
	}
	if d.metricsRefactor && o.metricsFormat != "default" && o.metricsFormat != "compact" {
		return nil, validation(d, true, "Unknown metrics formatter: "+o.metricsFormat+". Possible values are compact, default.")
	}
	if d.multiAckAtMostQos && o.consumerPrefetch > 0 && o.multiAckEvery > o.consumerPrefetch {
		return nil, validation(d, true, "--multi-ack-every must be less than or equal to --qos")
	}
	o.queuePattern = c.str("qp", "")
	o.patternFrom = num("qpf", -1)
	o.patternTo = num("qpt", -1)
	if err != nil {
		return nil, err
	}
	if o.queuePattern != "" || o.patternFrom >= 0 || o.patternTo >= 0 {
		if o.queuePattern == "" || o.patternFrom < 0 || o.patternTo < 0 {
			return nil, validation(d, true, "Queue pattern, from, and to options should all be set or none should be set")
		}
		if o.patternFrom > o.patternTo {
			return nil, validation(d, true, "'To' option should be more than or equals to 'from' option")
		}
	}
	if qf := c.str("qf", ""); qf != "" {
		if o.queuePattern != "" && o.queues != nil {
			return nil, validation(d, true, "Too many ways to list queues, use only the queue file argument")
		}
		data, ferr := os.ReadFile(qf)
		if ferr != nil {
			return nil, validation(d, true, "Queue file "+qf+" does not exist or is not readable")
		}
		if len(data) == 0 {
			// No queue at all: PerfTest divides by the queue count.
			return nil, &javaThrow{jvm.Exception{Class: "java.lang.ArithmeticException", Message: "/ by zero"}}
		}
		o.queues = nil
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			o.queues = append(o.queues, strings.TrimSpace(l))
		}
	}
	if ownOption(d, "mlb") {
		if e := streamArguments(d, c, o); e != nil {
			return nil, e
		}
	}
	// The 2.19+ options act in the releases that have them (-se and the
	// OAuth2 options in auth.go, -em with the metrics options); given to
	// an earlier release, they are named.
	for _, key := range []string{"mlb", "smssb", "ll", "ma", "sco", "csd", "em", "ei", "isn", "ist",
		"o2uri", "o2id", "o2sec", "o2gr", "o2p", "tsbs", "trbs", "tnd"} {
		if c.byKey[key] != nil && c.line.Has(key) && !ownOption(d, key) {
			o.ignored = append(o.ignored, "-"+key)
		}
	}
	if !d.legacyMetrics && c.byKey["l"] != nil && c.line.Has("l") {
		o.ignored = append(o.ignored, "-l")
	}
	if !d.metricsRefactor {
		for _, key := range []string{"mf", "sq"} {
			if c.byKey[key] != nil && c.line.Has(key) {
				o.ignored = append(o.ignored, "-"+key)
			}
		}
	}
	return o, nil
}

// consumerArguments is -ca as PerfTest's convertKeyValuePairs reads it:
// "k=v" pairs split at commas, a long where the value is one (2.20+: a
// boolean for true and false), "" for a key alone, the exchange name
// amq.default as "", and (2.20+) x-single-active-consumer as a boolean; a
// pair with neither key nor value throws as there, and so (2.18) does a
// key given twice.
func consumerArguments(d *diff, s string) (map[string]any, *jvm.Exception) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]any{}
	for _, entry := range javaSplit(s, ",") {
		kv := javaSplit(entry, "=")
		if len(kv) == 0 {
			return nil, &jvm.Exception{Class: "java.lang.ArrayIndexOutOfBoundsException", Message: "Index 1 out of bounds for length 0"}
		}
		var v any = ""
		if len(kv) > 1 {
			if n, err := strconv.ParseInt(kv[1], 10, 64); err == nil {
				v = n
			} else if d.metricsRefactor && (kv[1] == "true" || kv[1] == "false") {
				v = kv[1] == "true"
			} else {
				v = kv[1]
			}
		}
		switch {
		case kv[0] == "x-dead-letter-exchange" && v == "amq.default":
			v = ""
		case kv[0] == "x-single-active-consumer" && d.metricsRefactor:
			v = strings.EqualFold(fmt.Sprint(v), "true")
		}
		if was, ok := out[kv[0]]; ok && !d.metricsRefactor {
			// 2.20+ keep the last value.
			return nil, &jvm.Exception{Class: "java.lang.IllegalStateException",
				Message: fmt.Sprintf("Duplicate key %s (attempted merging values %v and %v)", kv[0], was, v)}
		}
		out[kv[0]] = v
	}
	return out, nil
}

// javaSplit is Java's String.split with a literal separator: trailing
// empty pieces go (all of them when every piece is empty), but a text
// without the separator is one piece, even when empty.
func javaSplit(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// serverNameError is the IllegalArgumentException SNIHostName throws for
// a name that is not a valid ASCII host name (IDN.toASCII with the STD3
// rules, then its own checks); nil for a valid one. A name with non-ASCII
// letters is let through: Java would send its punycode form.
func serverNameError(name string) *jvm.Exception {
	bad := func(msg string) *jvm.Exception {
		return &jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: msg}
	}
	labels := strings.Split(name, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	for _, l := range labels {
		if l == "" && name != "" {
			return bad("Empty label is not a legal name")
		}
		ascii := true
		for _, r := range l {
			ascii = ascii && r <= 127
		}
		if !ascii {
			continue
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return bad("Contains non-LDH ASCII characters")
			}
		}
		if strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return bad("Has leading or trailing hyphen")
		}
		if len(l) > 63 {
			return bad("The label in the input is too long")
		}
	}
	switch {
	case name == "":
		return bad("Server name value of host_name cannot be empty")
	case strings.HasSuffix(name, "."):
		return bad("Server name value of host_name cannot have the trailing dot")
	}
	return nil
}

// streamArguments reads the 2.20+ queue and consumer arguments for quorum
// queues and streams (-mlb, -smssb, -ma, -ll, -sco) into o, in PerfTest's
// order, with its messages for a value it refuses.
func streamArguments(d *diff, c *commandLine, o *options) error {
	queueArg := func(k string, v any) {
		if o.queueArgs == nil {
			o.queueArgs = map[string]any{}
		}
		o.queueArgs[k] = v
	}
	maxLength := int64(-1) // -1: none
	if o.queueArgs != nil && c.has("sq") {
		maxLength = o.queueArgs["x-max-length-bytes"].(int64)
	}
	if v, ok := c.lookupValue("mlb"); ok {
		n, valid := byteCapacity(v)
		if !valid {
			return validation(d, true, "'"+v+"' is not a valid byte capacity, valid example values: 100gb, 50mb")
		}
		if n == 0 {
			delete(o.queueArgs, "x-max-length-bytes")
			maxLength = -1
		} else {
			queueArg("x-max-length-bytes", n)
			maxLength = n
		}
	}
	segment := int64(-1)
	if v, ok := c.lookupValue("smssb"); ok {
		n, valid := byteCapacity(v)
		if !valid {
			return validation(d, true, "'"+v+"' is not a valid byte capacity, valid example values: 100gb, 50mb")
		}
		if n > 3_000_000_000 {
			return validation(d, true, "The maximum segment size cannot be more than 3 GB")
		}
		queueArg("x-stream-max-segment-size-bytes", n)
		segment = n
	}
	if v, ok := c.lookupValue("ma"); ok {
		secs, positive, valid := javaDuration(v)
		switch {
		case !valid:
			return validation(d, true, "'"+v+"' is not a valid duration, valid example values: PT15M, PT10H")
		case !positive:
			return validation(d, true, "'"+v+"' is not a valid duration, it must be positive")
		}
		queueArg("x-max-age", strconv.FormatInt(secs, 10)+"s")
	}
	if v, ok := c.lookupValue("ll"); ok {
		if v != "client-local" && v != "balanced" {
			return validation(d, true, "'"+v+"' is not a valid queue leader locator strategy. Valid values are client-local and balanced.")
		}
		queueArg("x-queue-leader-locator", v)
	}
	if v, ok := c.lookupValue("sco"); ok {
		offset, valid := streamOffset(v)
		if !valid {
			return validation(d, true, "'"+v+"' is not a valid stream offset value.")
		}
		if o.consumerArgs == nil {
			o.consumerArgs = map[string]any{}
		}
		o.consumerArgs["x-stream-offset"] = offset
	}
	if maxLength >= 0 && segment >= 0 && maxLength <= segment {
		return validation(d, true, "Max length bytes must be greather than stream max segment size")
	}
	return nil
}

// byteCapacity is PerfTest's ByteCapacity.from: ASCII digits with an
// optional kb, mb, gb or tb (any case, powers of 1000); the digits must
// fit a long, and the product wraps as Java's does.
func byteCapacity(v string) (int64, bool) {
	digits := v
	mult := int64(1)
	if len(v) >= 2 {
		switch strings.ToLower(v[len(v)-2:]) {
		case "kb":
			mult = 1000
		case "mb":
			mult = 1000_000
		case "gb":
			mult = 1000_000_000
		case "tb":
			mult = 1000_000_000_000
		}
		if mult > 1 {
			digits = v[:len(v)-2]
		}
	}
	if !asciiDigits(digits) {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return n * mult, true
}

// asciiDigits: s is one or more of the digits 0-9, nothing else.
func asciiDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// javaDurationPattern is java.time.Duration.parse's grammar:
// [sign]P[nD][T[nH][nM][n[.f]S]], letters in any case, each number signed.
var javaDurationPattern = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// javaDuration parses v as Duration.parse does and returns its whole
// seconds (Duration.getSeconds, rounded down) and whether it is > 0; valid
// is false where Java throws DateTimeParseException (no part at all, a T
// with nothing after it, a number out of range).
func javaDuration(v string) (secs int64, positive, valid bool) {
	m := javaDurationPattern.FindStringSubmatch(v)
	if m == nil || strings.EqualFold(m[3], "T") || (m[2] == "" && m[3] == "") {
		return 0, false, false
	}
	big := new(bigDuration)
	for i, unit := range []int64{86400, 3600, 60, 1} {
		if s := m[2+i+boolInt(i > 0)]; s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || !big.add(n, unit) {
				return 0, false, false
			}
		}
	}
	nanos := int64(0)
	if f := m[7]; f != "" {
		f = (f + "000000000")[:9]
		nanos, _ = strconv.ParseInt(f, 10, 64)
		if strings.HasPrefix(m[6], "-") {
			nanos = -nanos
		}
	}
	if m[1] == "-" {
		if !big.negate() {
			return 0, false, false
		}
		nanos = -nanos
	}
	secs = big.secs
	// Duration keeps 0 <= nanos < 1e9 with the seconds rounded down.
	if nanos < 0 {
		secs--
		nanos += 1_000_000_000
	}
	return secs, secs > 0 || secs == 0 && nanos > 0, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bigDuration sums a Duration's parts in seconds, refusing an overflow as
// Math.multiplyExact and Math.addExact do.
type bigDuration struct{ secs int64 }

func (b *bigDuration) add(n, unit int64) bool {
	p := n * unit
	if n != 0 && p/unit != n {
		return false
	}
	s := b.secs + p
	if (p > 0 && s < b.secs) || (p < 0 && s > b.secs) {
		return false
	}
	b.secs = s
	return true
}

func (b *bigDuration) negate() bool {
	if b.secs == math.MinInt64 {
		return false
	}
	b.secs = -b.secs
	return true
}

// streamOffset is -sco's value as PerfTest sends it: "first", "last" or
// "next" (any case, sent in lower case), an unsigned long (sent as the
// signed long of its bits), or an ISO offset date-time (a timestamp).
func streamOffset(v string) (any, bool) {
	switch l := strings.ToLower(v); l {
	case "first", "last", "next":
		return l, true
	}
	if n, err := strconv.ParseUint(strings.TrimPrefix(v, "+"), 10, 64); err == nil && v != "" && v[0] != '-' {
		return int64(n), true
	}
	if t, err := parseOffsetDateTime(v); err == nil {
		return t, true
	}
	return nil, false
}

// ownOption: the release's own table has the option (not only another
// release's).
func ownOption(d *diff, key string) bool {
	for _, o := range d.optionTable {
		if o.Key() == key {
			return true
		}
	}
	return false
}

// javaIntOrError is Integer.parseInt, its failure as a *numberError.
func javaIntOrError(v string) (int, error) {
	n, err := javaopts.ParseJavaInt(v)
	if err != nil {
		return 0, &numberError{msg: err.Error()}
	}
	return int(n), nil
}

// lineOrEnv: the option has a value on the line or in the environment.
func (c *commandLine) lineOrEnv(key string) bool {
	_, ok := c.lookupValue(key)
	return ok
}

// exchangeName is -e's value (from the line or PerfTest's EXCHANGE
// variable: PerfTest reads it as a string, not through hasOption, which
// would take the variable for a boolean), or the exchange type when -e is
// absent or has no value; "amq.default" is the default exchange.
func exchangeName(c *commandLine, typ string) string {
	name := typ
	if v, ok := c.lookupValue("e"); ok {
		name = v
	}
	if name == "amq.default" {
		return ""
	}
	return name
}

func checkPublishingInterval(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "Must be a number"
	}
	if f <= 0 {
		return "Must be positive"
	}
	if f < 0.1 {
		return "Cannot be less than 0.1"
	}
	return ""
}

func validVariable(v string) bool {
	value, duration, ok := strings.Cut(v, ":")
	if !ok {
		return false
	}
	a, err1 := strconv.Atoi(value)
	b, err2 := strconv.Atoi(duration)
	return err1 == nil && err2 == nil && a >= 0 && b > 0
}

// keyValues is PerfTest's convertKeyValuePairs: "k=v,k=v", integers as
// longs, everything else a string; nil for "".
func keyValues(s string) map[string]any {
	if s == "" {
		return nil
	}
	out := map[string]any{}
	for _, pair := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(pair, "=")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		} else {
			out[k] = v
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ignoredNotice names, on stderr, options this clone accepts but does not
// act on, so a run is never silently different from the original's.
func ignoredNotice(ignored []string) string {
	if len(ignored) == 0 {
		return ""
	}
	return fmt.Sprintf("perfclones: perftest accepts but does not act on %s (another release's option, or not implemented)\n", strings.Join(ignored, ", "))
}

// recoveryDelay is -cri: the pause before each attempt to reconnect a lost
// connection, min itself when fixed, otherwise drawn to the millisecond
// from [min, max), as the Java client's delay handler draws it.
type recoveryDelay struct{ min, max time.Duration }

// defaultRecoveryDelay is the Java client's network recovery interval.
var defaultRecoveryDelay = recoveryDelay{min: 5 * time.Second, max: 5 * time.Second}

func (d recoveryDelay) next() time.Duration {
	if d.max <= d.min {
		return d.min
	}
	ms := int64((d.max - d.min) / time.Millisecond)
	return d.min + time.Duration(rand.Int64N(ms))*time.Millisecond
}

// parseRecoveryInterval reads -cri: "N" seconds, or "A-B" for a random
// delay from A up to B seconds (PerfTest adds one second to B, so that B
// itself may be drawn). Blank is the default. The exception is what
// PerfTest throws for a value it refuses.
func parseRecoveryInterval(s string) (recoveryDelay, *jvm.Exception) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if s == "" {
		return defaultRecoveryDelay, nil
	}
	lo, hi, ranged := strings.Cut(s, "-")
	if !asciiDigits(lo) || (ranged && !asciiDigits(hi)) {
		return recoveryDelay{}, &jvm.Exception{Class: "java.lang.IllegalArgumentException",
			Message: "Incorrect argument for connection recovery interval. Must be e.g. 30 or 30-60."}
	}
	seconds := func(v string) (time.Duration, *jvm.Exception) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, &jvm.Exception{Class: "java.lang.NumberFormatException", Message: `For input string: "` + v + `"`}
		}
		// Java multiplies by 1000 in a long; beyond a Duration's range a
		// delay is as good as forever.
		if n > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64, nil
		}
		return time.Duration(n) * time.Second, nil
	}
	min, e := seconds(lo)
	if e != nil {
		return recoveryDelay{}, e
	}
	if !ranged {
		return recoveryDelay{min: min, max: min}, nil
	}
	max, e := seconds(hi)
	if e != nil {
		return recoveryDelay{}, e
	}
	if max <= min {
		return recoveryDelay{}, &jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Wrong interval min-max values: " + s}
	}
	return recoveryDelay{min: min, max: max + time.Second}, nil
}
