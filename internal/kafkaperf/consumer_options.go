package kafkaperf

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/javaprops"
	"github.com/perfclones/perfclones/internal/jvm"
)

const consumerDescription = "This tool is used to verify the consumer performance."

// jopt-simple option builders, in the terms of the Java builder calls.
func joptString(name, argName, desc string, defaults ...string) javaopts.JoptOption {
	return javaopts.JoptOption{Names: []string{name}, Description: desc, Arg: javaopts.RequiredArg, Type: "String", ArgName: argName, Defaults: defaults}
}

func joptTyped(name, typ, argName, desc string, defaults ...string) javaopts.JoptOption {
	o := joptString(name, argName, desc, defaults...)
	o.Type = typ
	return o
}

func joptFlag(name, desc string) javaopts.JoptOption {
	return javaopts.JoptOption{Names: []string{name}, Description: desc, Arg: javaopts.NoArg}
}

func joptForHelp(o javaopts.JoptOption) javaopts.JoptOption {
	o.ForHelp = true
	return o
}

// joptHidden is an option of another release: parsed, not in the help.
func joptHidden(o javaopts.JoptOption) javaopts.JoptOption {
	o.Hidden = true
	return o
}

func joptTimeout() javaopts.JoptOption {
	o := joptTyped("timeout", "Long", "milliseconds", "The maximum allowed time in milliseconds between returned records.", "10000")
	o.Arg = javaopts.OptionalArg
	return o
}

// consumerOptions44 is Kafka 4.4's option table, plus the options 4.0
// removed (--broker-list, --threads, --num-fetch-threads), hidden, so that
// scripts written for any release from 2.2 on still run.
func consumerOptions44(group string) []javaopts.JoptOption {
	return []javaopts.JoptOption{
		joptString("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to."),
		joptHidden(joptString("broker-list", "broker-list", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. "+
			"The broker list string in the form HOST1:PORT1,HOST2:PORT2.")),
		joptString("topic", "topic", "The topic to consume from."),
		joptString("include", "Java regex (String)", "Regular expression specifying list of topics to include for consumption."),
		joptString("group", "gid", "The group id to consume on.", group),
		joptTyped("messages", "Long", "count", "(DEPRECATED) The number of records to consume. This option will be removed in a "+
			"future version. Use --num-records instead."),
		joptTyped("num-records", "Long", "count", "REQUIRED: The number of records to consume."),
		joptFlag("print-metrics", "Print out the metrics."),
		joptTyped("fetch-size", "Integer", "size", "The maximum amount of data to fetch from a single partition per request.", "1048576"),
		joptTyped("socket-buffer-size", "Integer", "size", "The size of the tcp RECV size.", "2097152"),
		joptHidden(joptTyped("threads", "Integer", "count", "DEPRECATED AND IGNORED: Number of processing threads.", "10")),
		joptHidden(joptTyped("num-fetch-threads", "Integer", "count", "DEPRECATED AND IGNORED: Number of fetcher threads.", "1")),
		joptString("consumer.config", "config file", "(DEPRECATED) Consumer config properties file. This option will be removed in "+
			"a future version. Use --command-config instead."),
		joptString("command-property", "prop1=val1", "Kafka consumer related configuration properties like client.id. These "+
			"configs take precedence over those passed via --command-config or --consumer.config."),
		joptString("command-config", "config file", "Config properties file."),
		joptTyped("reporting-interval", "Long", "interval_ms", "Interval in milliseconds at which to print progress info.", "5000"),
		joptFlag("show-detailed-stats", "If set, stats are reported for each reporting interval as configured by reporting-interval."),
		joptString("date-format", "date format", "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options.",
			javafmt.DefaultDatePattern),
		joptFlag("hide-header", "If set, skips printing the header for the stats."),
		joptFlag("from-latest", "If the consumer does not already have an established offset to consume from, start with the "+
			"latest record present in the log rather than the earliest record."),
		joptTimeout(),
		joptForHelp(joptFlag("help", "Print usage information.")),
		joptForHelp(joptFlag("version", "Display Kafka version.")),
	}
}

// consumerOptions39 is Kafka 3.9's option table (the "messages" texts,
// --broker-list and the ignored thread options), plus 4.x's options,
// hidden. --bootstrap-server is required unless --broker-list is given,
// which jopt-simple checks while parsing.
func consumerOptions39(group string) []javaopts.JoptOption {
	bootstrap := joptString("bootstrap-server", "server to connect to", "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to.")
	bootstrap.RequiredUnless = []string{"broker-list"}
	return []javaopts.JoptOption{
		bootstrap,
		joptString("broker-list", "broker-list", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. "+
			"The broker list string in the form HOST1:PORT1,HOST2:PORT2."),
		joptString("topic", "topic", "REQUIRED: The topic to consume from."),
		joptHidden(joptString("include", "Java regex (String)", "Regular expression specifying list of topics to include for consumption.")),
		joptString("group", "gid", "The group id to consume on.", group),
		joptTyped("messages", "Long", "count", "REQUIRED: The number of messages to send or consume"),
		joptHidden(joptTyped("num-records", "Long", "count", "REQUIRED: The number of records to consume.")),
		joptFlag("print-metrics", "Print out the metrics."),
		joptTyped("fetch-size", "Integer", "size", "The amount of data to fetch in a single request.", "1048576"),
		joptTyped("socket-buffer-size", "Integer", "size", "The size of the tcp RECV size.", "2097152"),
		joptTyped("threads", "Integer", "count", "DEPRECATED AND IGNORED: Number of processing threads.", "10"),
		joptTyped("num-fetch-threads", "Integer", "count", "DEPRECATED AND IGNORED: Number of fetcher threads.", "1"),
		joptString("consumer.config", "config file", "Consumer config properties file."),
		joptHidden(joptString("command-property", "prop1=val1", "Kafka consumer related configuration properties like client.id.")),
		joptHidden(joptString("command-config", "config file", "Config properties file.")),
		joptTyped("reporting-interval", "Long", "interval_ms", "Interval in milliseconds at which to print progress info.", "5000"),
		joptFlag("show-detailed-stats", "If set, stats are reported for each reporting interval as configured by reporting-interval"),
		joptString("date-format", "date format", "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options.",
			javafmt.DefaultDatePattern),
		joptFlag("hide-header", "If set, skips printing the header for the stats"),
		joptFlag("from-latest", "If the consumer does not already have an established offset to consume from, start with the "+
			"latest message present in the log rather than the earliest message."),
		joptTimeout(),
		joptForHelp(joptFlag("help", "Print usage information.")),
		joptForHelp(joptFlag("version", "Display Kafka version.")),
	}
}

// consumerChecks is what a release's checks look at after parsing.
type consumerChecks struct {
	set         *javaopts.OptionSet
	noArgs      bool
	version     string // what --version prints
	description string // the line above the help table
	usage       func(msg string) error
}

// consumerOptions27 is Kafka 2.7's (Scala) option table: 3.9's, with
// --reporting-interval an Integer and two spaces in --broker-list's text.
func consumerOptions27(group string) []javaopts.JoptOption {
	opts := consumerOptions39(group)
	for i, o := range opts {
		switch o.Names[0] {
		case "broker-list":
			opts[i].Description = strings.Replace(o.Description, "specified. The", "specified.  The", 1)
		case "reporting-interval":
			opts[i].Type = "Integer"
		}
	}
	return opts
}

// consumerChecks39 is 3.9's order: help, --version, then the required
// arguments one at a time (--bootstrap-server was checked while parsing).
// 4.x's --include and --num-records stand in for --topic and --messages.
func consumerChecks39(c *consumerChecks) error {
	set := c.set
	switch {
	case set.Has("help"):
		return c.usage(c.description)
	case set.Has("version"):
		return &cli.Exit{Stdout: c.version + "\n"}
	case !set.Has("topic") && !set.Has("include"):
		return c.usage(`Missing required argument "[topic]"`)
	case !set.Has("messages") && !set.Has("num-records"):
		return c.usage(`Missing required argument "[messages]"`)
	}
	return nil
}

// consumerChecks44 is 4.4's order: help (also for no arguments), --version,
// --bootstrap-server (or 3.9's --broker-list), exactly one of --topic and
// --include, of --messages and --num-records, and not both config files.
func consumerChecks44(c *consumerChecks) error {
	set := c.set
	switch {
	case set.Has("help") || c.noArgs:
		return c.usage(c.description)
	case set.Has("version"):
		return &cli.Exit{Stdout: c.version + "\n"}
	case !set.Has("bootstrap-server") && !set.Has("broker-list"):
		return c.usage(`Missing required argument "[bootstrap-server]"`)
	case set.Has("topic") == set.Has("include"):
		return c.usage("Exactly one of the following arguments is required: [topic], [include]")
	case set.Has("messages") == set.Has("num-records"):
		return c.usage("Exactly one of the following arguments is required: [messages], [num-records]")
	case set.Has("consumer.config") && set.Has("command-config"):
		return c.usage(`Option "[consumer.config]" can't be used with option "[command-config]"`)
	}
	return nil
}

// consumerRelease is how one release's kafka-consumer-perf-test differs.
type consumerRelease struct {
	// description is the line above the help table ("... full zookeeper
	// consumer" in the Scala tool, up to 3.4).
	description string
	// version is what --version prints; "" means the release's Version
	// (the Java tool, 3.5+); the Scala tool adds its commit.
	version string
	// scala: the Scala tool (up to 3.4) reads every option value before it
	// prints the header, and a failure is the JVM's uncaught exception;
	// the Java tool (3.5+) prints the header first, and its catch-all
	// prints the exception's message (then the stack trace).
	scala bool
	// joinStartAtZero: up to 2.7 the rebalance clock starts at 0, so with
	// a 2.4+ client the first assignment adds the whole epoch time to
	// rebalance.time.ms and fetch.time.ms goes negative (KAFKA-10701).
	joinStartAtZero bool
	// options is the release's option table, with the other releases'
	// options hidden (parsed, not in the help).
	options func(group string) []javaopts.JoptOption
	// checks are the release's checks after parsing, in its order: help,
	// --version, then the required arguments.
	checks func(c *consumerChecks) error
	// threadsWarning is the stdout line printed when --threads or
	// --num-fetch-threads is given (2.7-3.9); "" when the release does not
	// know those options.
	threadsWarning string
	// deprecationNotices: 4.2+ warn on stdout about --messages and
	// --consumer.config.
	deprecationNotices bool
	// timeoutWarning is the format of the line printed when --timeout
	// ended the run early; 4.2 says "records" where earlier ones said
	// "messages".
	timeoutWarning string
	// unknownConfigWarn: as producerRelease's.
	unknownConfigWarn bool
	// bootstrapStrict: 4.x's ConfigDef refuses an empty bootstrap.servers
	// or an empty entry in it; before, the constructor finds no address.
	bootstrapStrict bool
	// emptyGroupAtConstruct: 4.x refuses an empty group id when the
	// consumer is built; before, the broker refuses it at the join.
	emptyGroupAtConstruct bool
}

// logged are the client warnings the release's tool prints.
func (r *consumerRelease) logged(warnings []string) []string {
	return loggedWarnings(warnings, r.unknownConfigWarn)
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

// parseConsumerOptions parses and makes the checks that the release makes
// before it prints anything; a failure is a *cli.Exit. The values are read
// afterwards by readValues.
func parseConsumerOptions(args []string, group string, rel *consumerRelease, version string) (*consumerOptions, error) {
	p := &javaopts.JoptParser{Options: rel.options(group)}
	set, err := p.Parse(jvm.Args(args))
	if err != nil {
		if jerr, ok := err.(*javaopts.JoptError); ok {
			return nil, p.UsageExit(jerr.Msg)
		}
		return nil, err
	}
	o := &consumerOptions{set: set}
	// 2.7-3.9 warn on stdout about the ignored thread options before anything else.
	before := ""
	if rel.threadsWarning != "" && (set.Has("threads") || set.Has("num-fetch-threads")) {
		before = rel.threadsWarning + "\n"
		o.notices = append(o.notices, rel.threadsWarning)
	}
	if rel.version != "" {
		version = rel.version
	}
	checks := &consumerChecks{set: set, noArgs: len(args) == 0, version: version, description: rel.description, usage: func(msg string) error {
		return p.UsageExit(msg)
	}}
	if err := rel.checks(checks); err != nil {
		if exit, ok := err.(*cli.Exit); ok {
			exit.Stdout = before + exit.Stdout
		}
		return nil, err
	}
	if rel.deprecationNotices && set.Has("messages") {
		o.notices = append(o.notices, "Warning: --messages is deprecated. Use --num-records instead.")
	}
	if rel.deprecationNotices && set.Has("consumer.config") {
		o.notices = append(o.notices, "Warning: --consumer.config is deprecated. Use --command-config instead.")
	}
	o.hideHeader = set.Has("hide-header")
	o.detailed = set.Has("show-detailed-stats")
	return o, nil
}

// readValues converts the option values, as jopt-simple does when they are
// asked for: a bad number or a repeated option fails here, with the
// message the original prints, in the release's way (thrown).
func (o *consumerOptions) readValues(rel *consumerRelease) error {
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
			return rel.thrown(jvm.Exception{Class: joptExceptionClass(err.Error()), Message: err.Error()})
		}
	}
	if set.Has("include") {
		re, _, err := javaPattern(include, "^(?:", ")$")
		if err != nil {
			return rel.thrown(jvm.Exception{Class: "java.util.regex.PatternSyntaxException", Message: err.Error()})
		}
		o.include = re
	}
	if o.reportingInterval <= 0 {
		return rel.thrown(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Reporting interval must be greater than 0."})
	}
	df, err := javafmt.NewDateFormat(pattern)
	if err != nil {
		msg := err.Error()
		if rel.scala {
			msg = "java.lang.IllegalArgumentException: " + msg
		}
		return rel.thrown(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: msg})
	}
	o.dateFormat = df
	o.fromLatest = set.Has("from-latest")
	o.printMetrics = set.Has("print-metrics")

	// The file, then --command-property on top, then the settings the tool
	// always forces; a group.id in the file is therefore ignored.
	o.props = javaprops.New()
	if set.Has("consumer.config") || set.Has("command-config") {
		loaded, ferr := loadPropsFile(file)
		switch {
		case ferr == nil:
			o.props.Merge(loaded)
		case ferr.directory:
			return rel.thrown(jvm.Exception{Class: "java.io.IOException", Message: "Is a directory"})
		case ferr.malformed:
			return rel.thrown(malformedEscape)
		case rel.scala:
			return rel.thrown(jvm.Exception{Class: "java.io.FileNotFoundException", Message: fmt.Sprintf("%s (No such file or directory)", file)})
		default:
			return rel.thrown(jvm.Exception{Class: "java.nio.file.NoSuchFileException", Message: file})
		}
	}
	for _, prop := range set.Values("command-property") {
		// A property without '=' is a key with an empty value, as the 4.4
		// tool reads it.
		k, v, _ := strings.Cut(prop, "=")
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
	return o.checkConsumer(rel)
}

// checkConsumer makes the checks of the Java consumer, in its order, before
// any client library sees the settings: ConfigDef's (the tool prints the
// message and the ConfigException), the constructor's (a KafkaException
// caused by the ConfigException), then what subscribing and the first
// poll refuse.
func (o *consumerOptions) checkConsumer(rel *consumerRelease) error {
	err := checkBootstrapList(o.props, rel.bootstrapStrict)
	if err == nil {
		err = checkConfigDef(o.props, false)
	}
	if err != nil {
		if rel.scala {
			return jvm.Uncaught(configDefException(err), nil)
		}
		return &cli.Exit{Code: 1, Stderr: err.msg + "\n" + configDefException(err).String() + "\n"}
	}
	construct := checkConstruction(o.props)
	if v, ok := o.props.Get("partition.assignment.strategy"); ok && construct == nil {
		for _, class := range strings.Split(v, ",") {
			if class = javaTrimSet(class); class != "" && !strings.HasPrefix(class, "org.apache.kafka.") {
				construct = invalidValue(class, "partition.assignment.strategy", "Class "+class+" could not be found.")
				break
			}
		}
	}
	if construct == nil && rel.emptyGroupAtConstruct && o.group == "" {
		construct = &configDefError{"The configured groupId is invalid."}
	}
	if construct == nil {
		construct = checkHeartbeat(o.props)
	}
	if construct != nil {
		return rel.thrown(constructionException("consumer", construct))
	}
	switch v, _ := o.props.Get("receive.buffer.bytes"); {
	case javaTrimSet(v) == "0":
		// The socket refuses a receive buffer of 0 when the first
		// connection is made.
		return rel.thrown(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Invalid receive size"})
	case o.set.Has("topic") && o.topic == "":
		return rel.thrown(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Topic collection to subscribe to cannot contain null or empty topic"})
	case o.set.Has("topic") && !validTopicName(o.topic):
		// The broker's answer to the first metadata request.
		return rel.thrown(jvm.Exception{Class: "org.apache.kafka.common.errors.InvalidTopicException", Message: "Invalid topics: [" + o.topic + "]"})
	case o.group == "":
		// The broker's answer to joining the group.
		return rel.thrown(jvm.Exception{Class: "org.apache.kafka.common.errors.InvalidGroupIdException", Message: "The configured groupId is invalid."})
	}
	return nil
}

// validTopicName is Kafka's rule for a topic name: 1 to 249 of
// [a-zA-Z0-9._-], and neither "." nor "..".
func validTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// joptExceptionClass is the jopt-simple exception behind a value's error.
func joptExceptionClass(msg string) string {
	switch {
	case strings.HasPrefix(msg, "Found multiple arguments"):
		return "joptsimple.MultipleArgumentsForOptionException"
	case strings.HasPrefix(msg, "Cannot parse argument"):
		return "joptsimple.OptionArgumentConversionException"
	}
	return "joptsimple.OptionException"
}

// thrown is how the release ends on the exception e: the Scala tool's JVM
// prints it uncaught; the Java tool's catch-all prints its message, then
// the stack trace, of which only the causes are reproduced.
func (r *consumerRelease) thrown(e jvm.Exception, causes ...jvm.Exception) error {
	if r.scala {
		return jvm.Uncaught(e, nil, causes...)
	}
	var b strings.Builder
	b.WriteString(e.Message + "\n")
	for _, c := range causes {
		b.WriteString("Caused by: " + c.String() + "\n")
	}
	return &cli.Exit{Code: 1, Stderr: b.String()}
}
