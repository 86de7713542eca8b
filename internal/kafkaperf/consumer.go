package kafkaperf

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/javaprops"
	"github.com/perfclones/perfclones/internal/lineout"
)

// kafkaVersion is what --version prints: the Kafka release whose tool this
// clone follows.
const kafkaVersion = "4.4.0"

const consumerDescription = "This tool is used to verify the consumer performance."

// consumerParser is kafka-consumer-perf-test's command line: Kafka 4.4's
// options plus those 4.0 removed (--broker-list, --threads,
// --num-fetch-threads), so that scripts written for any release from 2.2
// on still run. --bootstrap-server is required unless --broker-list is
// given, as in 2.5-3.9.
func consumerParser(group string) *javaopts.JoptParser {
	str := func(name, argName, desc string, defaults ...string) javaopts.JoptOption {
		return javaopts.JoptOption{Names: []string{name}, Description: desc, Arg: javaopts.RequiredArg, Type: "String", ArgName: argName, Defaults: defaults}
	}
	typed := func(name, typ, argName, desc string, defaults ...string) javaopts.JoptOption {
		o := str(name, argName, desc, defaults...)
		o.Type = typ
		return o
	}
	flag := func(name, desc string) javaopts.JoptOption {
		return javaopts.JoptOption{Names: []string{name}, Description: desc, Arg: javaopts.NoArg}
	}
	bootstrap := str("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to.")
	// Options that 4.0 removed are still accepted, without a line in the
	// help, so that the help is 4.4's byte for byte and old scripts run.
	removed := func(o javaopts.JoptOption) javaopts.JoptOption {
		o.Hidden = true
		return o
	}
	timeout := typed("timeout", "Long", "milliseconds", "The maximum allowed time in milliseconds between returned records.", "10000")
	timeout.Arg = javaopts.OptionalArg
	help := flag("help", "Print usage information.")
	help.ForHelp = true
	version := flag("version", "Display Kafka version.")
	version.ForHelp = true
	return &javaopts.JoptParser{Options: []javaopts.JoptOption{
		bootstrap,
		removed(str("broker-list", "broker-list", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. "+
			"The broker list string in the form HOST1:PORT1,HOST2:PORT2.")),
		str("topic", "topic", "The topic to consume from."),
		str("include", "Java regex (String)", "Regular expression specifying list of topics to include for consumption."),
		str("group", "gid", "The group id to consume on.", group),
		typed("messages", "Long", "count", "(DEPRECATED) The number of records to consume. This option will be removed in a "+
			"future version. Use --num-records instead."),
		typed("num-records", "Long", "count", "REQUIRED: The number of records to consume."),
		flag("print-metrics", "Print out the metrics."),
		typed("fetch-size", "Integer", "size", "The maximum amount of data to fetch from a single partition per request.", "1048576"),
		typed("socket-buffer-size", "Integer", "size", "The size of the tcp RECV size.", "2097152"),
		removed(typed("threads", "Integer", "count", "DEPRECATED AND IGNORED: Number of processing threads.", "10")),
		removed(typed("num-fetch-threads", "Integer", "count", "DEPRECATED AND IGNORED: Number of fetcher threads.", "1")),
		str("consumer.config", "config file", "(DEPRECATED) Consumer config properties file. This option will be removed in "+
			"a future version. Use --command-config instead."),
		str("command-property", "prop1=val1", "Kafka consumer related configuration properties like client.id. These "+
			"configs take precedence over those passed via --command-config or --consumer.config."),
		str("command-config", "config file", "Config properties file."),
		typed("reporting-interval", "Long", "interval_ms", "Interval in milliseconds at which to print progress info.", "5000"),
		flag("show-detailed-stats", "If set, stats are reported for each reporting interval as configured by reporting-interval."),
		str("date-format", "date format", "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options.",
			javafmt.DefaultDatePattern),
		flag("hide-header", "If set, skips printing the header for the stats."),
		flag("from-latest", "If the consumer does not already have an established offset to consume from, start with the "+
			"latest record present in the log rather than the earliest record."),
		timeout,
		help,
		version,
	}}
}

// consumerOptions is the checked command line.
type consumerOptions struct {
	bootstrap         string
	topic             string
	include           *regexp.Regexp
	group             string
	numRecords        int64
	fetchSize         int32
	socketBuffer      int32
	fromLatest        bool
	props             *javaprops.Properties
	printMetrics      bool
	detailed          bool
	reportingInterval int64
	dateFormat        *javafmt.DateFormat
	hideHeader        bool
	timeoutMs         int64
	notices           []string // stdout warnings printed before the header

	set *javaopts.OptionSet // values are read from it after the header, as the original does
}

// toolError is a failure the Java tool reports from its catch-all: the
// message, then (in Java) a stack trace, on stderr, exit 1.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// parseConsumerOptions parses and makes the checks that the original makes
// before it prints anything; a failure is a *javaopts.Exit. The values are
// read afterwards by readValues.
func parseConsumerOptions(args []string, group string) (*consumerOptions, error) {
	p := consumerParser(group)
	set, err := p.Parse(args)
	if err != nil {
		var jerr *javaopts.JoptError
		if errors.As(err, &jerr) {
			return nil, p.UsageExit(jerr.Msg)
		}
		return nil, err
	}
	o := &consumerOptions{set: set}
	// 2.7-3.9 warn on stdout about the ignored thread options before anything else.
	threadsWarning := ""
	if set.Has("threads") || set.Has("num-fetch-threads") {
		threadsWarning = "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test\n"
		o.notices = append(o.notices, strings.TrimSuffix(threadsWarning, "\n"))
	}
	usage := func(msg string) (*consumerOptions, error) {
		exit := p.UsageExit(msg)
		exit.Stdout = threadsWarning + exit.Stdout
		return nil, exit
	}
	if set.Has("help") || len(args) == 0 {
		return usage(consumerDescription)
	}
	if set.Has("version") {
		return nil, &javaopts.Exit{Code: 0, Stdout: threadsWarning + kafkaVersion + "\n"}
	}
	if !set.Has("bootstrap-server") && !set.Has("broker-list") {
		return usage(`Missing required argument "[bootstrap-server]"`)
	}
	if set.Has("topic") == set.Has("include") {
		return usage("Exactly one of the following arguments is required: [topic], [include]")
	}
	if set.Has("messages") == set.Has("num-records") {
		return usage("Exactly one of the following arguments is required: [messages], [num-records]")
	}
	if set.Has("consumer.config") && set.Has("command-config") {
		return usage(`Option "[consumer.config]" can't be used with option "[command-config]"`)
	}
	if set.Has("messages") {
		o.notices = append(o.notices, "Warning: --messages is deprecated. Use --num-records instead.")
	}
	if set.Has("consumer.config") {
		o.notices = append(o.notices, "Warning: --consumer.config is deprecated. Use --command-config instead.")
	}
	o.hideHeader = set.Has("hide-header")
	o.detailed = set.Has("show-detailed-stats")
	return o, nil
}

// readValues converts the option values, as jopt-simple does when they are
// asked for: a bad number or a repeated option fails here, after the header
// has been printed, with the message the original prints.
func (o *consumerOptions) readValues() error {
	set := o.set
	var errs []error
	str := func(name string) string {
		v, _, err := set.String(name)
		errs = append(errs, err)
		return v
	}
	long := func(name string) int64 {
		v, _, err := set.Long(name)
		errs = append(errs, err)
		return v
	}
	integer := func(name string) int32 {
		v, _, err := set.Int(name)
		errs = append(errs, err)
		return v
	}
	o.bootstrap = str("bootstrap-server")
	if o.bootstrap == "" {
		o.bootstrap = str("broker-list")
	}
	o.topic = str("topic")
	include := str("include")
	o.group = str("group")
	if set.Has("messages") {
		o.numRecords = long("messages")
	} else {
		o.numRecords = long("num-records")
	}
	o.fetchSize = integer("fetch-size")
	o.socketBuffer = integer("socket-buffer-size")
	o.reportingInterval = long("reporting-interval")
	o.timeoutMs = long("timeout")
	pattern := str("date-format")
	file := str("consumer.config")
	if file == "" {
		file = str("command-config")
	}
	for _, err := range errs {
		if err != nil {
			return &toolError{err.Error()}
		}
	}
	if set.Has("include") {
		re, err := regexp.Compile("^(?:" + include + ")$")
		if err != nil {
			return &toolError{fmt.Sprintf("java.util.regex.PatternSyntaxException: %v", err)}
		}
		o.include = re
	}
	if o.reportingInterval <= 0 {
		return &toolError{"Reporting interval must be greater than 0."}
	}
	df, err := javafmt.NewDateFormat(pattern)
	if err != nil {
		return &toolError{"java.lang.IllegalArgumentException: " + err.Error()}
	}
	o.dateFormat = df
	o.fromLatest = set.Has("from-latest")
	o.printMetrics = set.Has("print-metrics")

	// The file, then --command-property on top, then the settings the tool
	// always forces; a group.id in the file is therefore ignored.
	o.props = javaprops.New()
	if file != "" {
		loaded, err := javaprops.LoadFile(file)
		if err != nil {
			return &toolError{fmt.Sprintf("%s (No such file or directory)", file)}
		}
		o.props.Merge(loaded)
	}
	for _, prop := range set.Values("command-property") {
		k, v, ok := strings.Cut(prop, "=")
		if !ok {
			return &toolError{"Invalid command property: " + prop}
		}
		o.props.Set(k, v)
	}
	o.props.Set("bootstrap.servers", o.bootstrap)
	o.props.Set("group.id", o.group)
	o.props.Set("receive.buffer.bytes", strconv.Itoa(int(o.socketBuffer)))
	o.props.Set("max.partition.fetch.bytes", strconv.Itoa(int(o.fetchSize)))
	if o.fromLatest {
		o.props.Set("auto.offset.reset", "latest")
	} else {
		o.props.Set("auto.offset.reset", "earliest")
	}
	o.props.Set("check.crcs", "false")
	if _, ok := o.props.Get("client.id"); !ok {
		o.props.Set("client.id", "perf-consumer-client")
	}
	return nil
}

const (
	consumerHeader = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	detailedHeader = "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)

// ConsumerMain runs kafka-consumer-perf-test and returns its exit code.
func ConsumerMain(ctx context.Context, args []string, sys cli.IO) int {
	out := lineout.New(sys.Stdout)
	errOut := lineout.New(sys.Stderr)
	// The default group is random per run, as in the original, so that
	// every run reads the topic from the start.
	group := fmt.Sprintf("perf-consumer-%d", rand.IntN(100000))
	o, err := parseConsumerOptions(args, group)
	if err != nil {
		return consumerFatal(err, out, errOut)
	}
	for _, n := range o.notices {
		out.Line(n)
	}
	if !o.hideHeader {
		if o.detailed {
			out.Line(detailedHeader)
		} else {
			out.Line(consumerHeader)
		}
	}
	if err := o.readValues(); err != nil {
		return consumerFatal(err, out, errOut)
	}
	constructFailed := func(cause string) int {
		errOut.Line("Failed to construct kafka consumer")
		errOut.Line("Caused by: " + cause)
		return 1
	}
	settings, err := newClientSettings(consumerClient, o.props, log4jTime)
	if err != nil {
		return constructFailed("org.apache.kafka.common.config.ConfigException: " + err.Error())
	}
	for _, w := range settings.warnings {
		errOut.Line(w)
	}
	if err := settings.applyConsumer(o); err != nil {
		return constructFailed("org.apache.kafka.common.config.ConfigException: " + err.Error())
	}
	if err := resolvableBootstrap(settings.bootstrap, errOut.Line); err != nil {
		return constructFailed("org.apache.kafka.common.config.ConfigException: " + err.Error())
	}
	plan := &consumerPlan{
		include:           o.include,
		numRecords:        o.numRecords,
		timeoutMs:         o.timeoutMs,
		reportingInterval: o.reportingInterval,
		detailed:          o.detailed,
	}
	if o.topic != "" {
		plan.topics = []string{o.topic}
	}
	run := &consumerRun{plan: plan, settings: settings, groupID: o.group, clock: wallMs}
	run.report = func(l detailedLine) {
		out.Line(fmt.Sprintf("%s, %d, %s, %s, %d, %s, %d, %d, %s, %s",
			o.dateFormat.Format(time.UnixMilli(l.nowMs)), 0,
			javafmt.Fixed(mb(l.totalBytes), 4), javafmt.Fixed(1000.0*mb(l.intervalBytes)/float64(l.intervalMs), 4),
			l.totalRecords, javafmt.Fixed(1000.0*float64(l.intervalRecords)/float64(l.intervalMs), 4),
			l.intervalRebalanceMs, l.intervalFetchMs,
			javafmt.Fixed(l.intervalMBPerSec, 4), javafmt.Fixed(l.intervalRecordsPerSe, 4)))
	}
	timedOut, runErr := run.run(ctx)
	metrics := consumerMetrics(run, settings.cfg)
	if runErr != nil {
		errOut.Line(exceptionLine(runErr))
		return 1
	}
	if timedOut {
		out.Line(fmt.Sprintf("WARNING: Exiting before consuming the expected number of records: timeout (%d ms) exceeded. "+
			"You can use the --timeout option to increase the timeout.", o.timeoutMs))
	}
	if !o.detailed {
		out.Line(summaryLine(run, o.dateFormat))
	}
	if o.printMetrics {
		out.Write(formatMetrics(metrics))
	}
	return 0
}

func mb(bytes int64) float64 { return float64(bytes) / (1024 * 1024) }

// summaryLine is the final CSV line; a zero elapsed or fetch time prints
// NaN or Infinity as Java's division does.
func summaryLine(r *consumerRun, df *javafmt.DateFormat) string {
	elapsedSec := float64(r.endMs-r.startMs) / 1000.0
	totalMB := mb(r.bytes.Load())
	records := r.records.Load()
	rebalance := r.rebalanceMs.Load()
	fetchMs := r.endMs - r.startMs - rebalance
	fetchSec := float64(fetchMs) / 1000.0
	return fmt.Sprintf("%s, %s, %s, %s, %d, %s, %d, %d, %s, %s",
		df.Format(time.UnixMilli(r.startMs)), df.Format(time.UnixMilli(r.endMs)),
		javafmt.Fixed(totalMB, 4), javafmt.Fixed(totalMB/elapsedSec, 4),
		records, javafmt.Fixed(float64(records)/elapsedSec, 4),
		rebalance, fetchMs,
		javafmt.Fixed(totalMB/fetchSec, 4), javafmt.Fixed(float64(records)/fetchSec, 4))
}

func consumerFatal(err error, out, errOut *lineout.Writer) int {
	var exit *javaopts.Exit
	if errors.As(err, &exit) {
		out.Write(exit.Stdout)
		errOut.Write(exit.Stderr)
		return exit.Code
	}
	errOut.Line(err.Error())
	return 1
}

// applyConsumer maps the consumer settings onto sarama.
func (s *clientSettings) applyConsumer(o *consumerOptions) error {
	c := s.cfg
	c.Consumer.Return.Errors = false
	c.Consumer.Fetch.Default = o.fetchSize
	c.Consumer.Fetch.Max = o.fetchSize
	if v, ok := s.get("fetch.min.bytes"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return &configError{fmt.Sprintf("Invalid value %s for configuration fetch.min.bytes: Not a number of type INT", v)}
		}
		c.Consumer.Fetch.Min = int32(n)
	}
	wait, err := s.durationMs("fetch.max.wait.ms", 500)
	if err != nil {
		return err
	}
	c.Consumer.MaxWaitTime = wait
	if o.fromLatest {
		c.Consumer.Offsets.Initial = sarama.OffsetNewest
	} else {
		c.Consumer.Offsets.Initial = sarama.OffsetOldest
	}
	session, err := s.durationMs("session.timeout.ms", 45000)
	if err != nil {
		return err
	}
	c.Consumer.Group.Session.Timeout = session
	heartbeat, err := s.durationMs("heartbeat.interval.ms", 3000)
	if err != nil {
		return err
	}
	c.Consumer.Group.Heartbeat.Interval = heartbeat
	if v, ok := s.get("enable.auto.commit"); ok && strings.EqualFold(v, "false") {
		c.Consumer.Offsets.AutoCommit.Enable = false
	}
	interval, err := s.durationMs("auto.commit.interval.ms", 5000)
	if err != nil {
		return err
	}
	c.Consumer.Offsets.AutoCommit.Interval = interval
	if v, ok := s.get("isolation.level"); ok && v == "read_committed" {
		c.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	if v, ok := s.get("partition.assignment.strategy"); ok && strings.Contains(v, "RoundRobin") {
		c.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRoundRobin()}
	}
	return nil
}

// consumerMetrics reports the consumer's numbers under the Java client's
// metric names where they mean the same thing.
func consumerMetrics(r *consumerRun, cfg *sarama.Config) []metric {
	tags := [][2]string{{"client-id", cfg.ClientID}}
	m := func(name string, v any) metric {
		return metric{group: "consumer-fetch-manager-metrics", name: name, tags: tags, value: v}
	}
	return []metric{
		m("records-consumed-total", float64(r.records.Load())),
		m("bytes-consumed-total", float64(r.bytes.Load())),
	}
}
