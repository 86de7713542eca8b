package rmqbench

import (
	"strings"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/jvm"
)

// ToolName is the multi-call name; the first argument is the mode.
const ToolName = "rocketmq-benchmark"

// mode is one of the benchmark's programs: the class a distribution script
// starts, the app name its help prints, and its options.
type mode struct {
	Name string // producer, consumer, batchproducer, tproducer
	App  string // benchmarkProducer ...
	// options lists the program's options in the order the Java code adds
	// them (ServerUtil's -h and -n first), which is the order ambiguous
	// prefixes are reported in; help sorts its own copy.
	options func(d *diff) []javaopts.CommonsOption
}

// opt is a commons-cli option that takes one value, as every benchmark
// option but -h does.
func opt(short, long, desc string) javaopts.CommonsOption {
	return javaopts.CommonsOption{Short: short, Long: long, Desc: desc, Arg: javaopts.CommonsOneArg}
}

// common are ServerUtil.buildCommandlineOptions' two options.
func common() []javaopts.CommonsOption {
	return []javaopts.CommonsOption{
		{Short: "h", Long: "help", Desc: "Print help", Arg: javaopts.CommonsNoArg},
		opt("n", "namesrvAddr", "Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876'"),
	}
}

// The help texts of -ak and -sk name each other's default, as the
// originals' do (the real defaults are accessKey rocketmq2, secretKey
// 12345678).
func aclOptions() []javaopts.CommonsOption {
	return []javaopts.CommonsOption{
		opt("a", "aclEnable", "Acl Enable, Default: false"),
		opt("ak", "accessKey", "Acl access key, Default: 12345678"),
		opt("sk", "secretKey", "Acl secret key, Default: rocketmq2"),
	}
}

func reportIntervalOption() javaopts.CommonsOption {
	return opt("ri", "reportInterval", "The number of ms between reports, Default: 10000")
}

func compressOptions(withEnable bool) []javaopts.CommonsOption {
	var out []javaopts.CommonsOption
	if withEnable {
		out = append(out, opt("c", "compressEnable", "Enable compress msg over 4K, Default: false"))
	}
	return append(out,
		opt("ct", "compressType", "Message compressed type, Default: ZLIB"),
		opt("cl", "compressLevel", "Message compressed level, Default: 5"),
		opt("ch", "compressOverHowMuch", "Compress message when body over how much(unit Byte), Default: 4096"),
	)
}

var producerMode = mode{Name: "producer", App: "benchmarkProducer", options: func(d *diff) []javaopts.CommonsOption {
	o := append(common(),
		opt("w", "threadCount", "Thread count, Default: 64"),
		opt("s", "messageSize", "Message Size, Default: 128"),
		opt("k", "keyEnable", "Message Key Enable, Default: false"),
		opt("t", "topic", "Topic name, Default: BenchmarkTest"),
		opt("l", "tagCount", "Tag count, Default: 0"),
		opt("m", "msgTraceEnable", "Message Trace Enable, Default: false"),
	)
	o = append(o, aclOptions()...)
	o = append(o,
		opt("q", "messageQuantity", "Send message quantity, Default: 0, running forever"),
		opt("d", "delayEnable", "Delay message Enable, Default: false"),
		opt("e", "delayLevel", "Delay message level, Default: 1"),
		opt("y", "asyncEnable", "Enable async produce, Default: false"),
	)
	if d.Compress {
		o = append(o, compressOptions(true)...)
	}
	if d.ReportInterval {
		o = append(o, reportIntervalOption())
	}
	return o
}}

var consumerMode = mode{Name: "consumer", App: "benchmarkConsumer", options: func(d *diff) []javaopts.CommonsOption {
	o := append(common(),
		opt("t", "topic", "Topic name, Default: BenchmarkTest"),
		opt("w", "threadCount", "Thread count, Default: 20"),
		opt("g", "group", "Consumer group name, Default: benchmark_consumer"),
		opt("p", "group prefix enable", "Is group prefix enable, Default: false"),
		opt("f", "filterType", "TAG, SQL92"),
		opt("e", "expression", "filter expression content file path.ie: ./test/expr"),
		opt("r", "fail rate", "consumer fail rate, default 0"),
		opt("m", "msgTraceEnable", "Message Trace Enable, Default: false"),
	)
	o = append(o, aclOptions()...)
	if d.ReportInterval {
		o = append(o, reportIntervalOption())
	}
	return o
}}

var batchProducerMode = mode{Name: "batchproducer", App: "benchmarkBatchProducer", options: func(d *diff) []javaopts.CommonsOption {
	o := append(common(),
		// Re-adding -n replaces ServerUtil's (same key), as in the original.
		opt("n", "namesrv", "name server, Default: 127.0.0.1:9876"),
		opt("t", "topic", "Topic name, Default: BenchmarkTest"),
		opt("w", "threadCount", "Thread count, Default: 64"),
		opt("s", "messageSize", "Message Size, Default: 128"),
		opt("b", "batchSize", "Batch Size, Default: 16"),
		opt("k", "keyEnable", "Message Key Enable, Default: false"),
		opt("p", "propertySize", "Property Size, Default: 0"),
		opt("l", "tagCount", "Tag count, Default: 0"),
		opt("m", "msgTraceEnable", "Message Trace Enable, Default: false"),
		opt("a", "aclEnable", "Acl Enable, Default: false"),
	)
	if d.Compress {
		o = append(o,
			opt("ak", "accessKey", "Acl Access Key, Default: rocketmq2"),
			opt("sk", "secretKey", "Acl Secret Key, Default: 123456789"),
		)
		o = append(o, compressOptions(true)...)
	} else {
		o = append(o,
			opt("c", "accessKey", "Acl Access Key, Default: rocketmq2"),
			opt("e", "secretKey", "Acl Secret Key, Default: 123456789"),
		)
	}
	if d.ReportInterval {
		o = append(o, reportIntervalOption())
	}
	return o
}}

var transactionProducerMode = mode{Name: "tproducer", App: "TransactionProducer", options: func(d *diff) []javaopts.CommonsOption {
	o := append(common(),
		opt("w", "threadCount", "Thread count, Default: 32"),
		opt("s", "messageSize", "Message Size, Default: 2048"),
		opt("t", "topic", "Topic name, Default: BenchmarkTest"),
		opt("sr", "send rollback rate", "Send rollback rate, Default: 0.0"),
		opt("su", "send unknown rate", "Send unknown rate, Default: 0.0"),
		opt("cr", "check rollback rate", "Check rollback rate, Default: 0.0"),
		opt("cu", "check unknown rate", "Check unknown rate, Default: 0.0"),
		opt("b", "test batch id", "test batch id, Default: System.currentMillis()"),
		opt("i", "send interval", "sleep interval in millis between messages, Default: 0"),
	)
	o = append(o, aclOptions()...)
	o = append(o, opt("m", "msgTraceEnable", "Message Trace Enable, Default: false"))
	if d.ReportInterval {
		o = append(o, reportIntervalOption())
	}
	return o
}}

// modes are the programs by the name the multi-call binary and the
// distribution scripts use.
var modes = map[string]*mode{
	"producer":      &producerMode,
	"consumer":      &consumerMode,
	"batchproducer": &batchProducerMode,
	"tproducer":     &transactionProducerMode,
}

// parsed is a parsed command line: its values by option key.
type parsed struct {
	line *javaopts.CommonsLine
}

// parse parses args as ServerUtil.parseCmdLine does: -h prints the help on
// stdout and exits 0; a parse error prints (5.1.4+) its message on stderr,
// then the help, and exits 1.
func parse(m *mode, d *diff, args []string) (*parsed, error) {
	options := m.options(d)
	tokens := jvm.Args(args)
	var err error
	if !d.DefaultParser {
		tokens, err = posixTokens(options, tokens)
	}
	var line *javaopts.CommonsLine
	if err == nil {
		line, err = (&javaopts.CommonsParser{Options: options}).Parse(tokens)
	}
	help := helpText(m.App, options)
	if err != nil {
		exit := &cli.Exit{Code: 1, Stdout: help}
		if d.ParseErrorLine {
			exit.Stderr = err.Error() + "\n"
		}
		return nil, exit
	}
	if line.Has("h") {
		return nil, &cli.Exit{Code: 0, Stdout: help}
	}
	return &parsed{line: line}, nil
}

// javaTrim is String.trim: it strips every char up to U+0020 from both
// ends (control characters too), and nothing else (not U+00A0).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// posixTokens reads a command line as commons-cli 1.2's PosixParser and
// Parser do (RocketMQ 4.9) and rewrites it into tokens that 1.5's
// DefaultParser reads the same way: every option as "--longName=value"
// (or "-h"), the leftovers after "--". 1.2 differs from 1.5 in how it
// splits tokens (-t=X is -t "=X", -thread is -t "hread", no long
// prefixes, but --t is -t), in what it takes as a value (anything that is
// not a known option: "--", "-", "--1") and in stripping quotes (a
// leading and a trailing '"' independently).
func posixTokens(options []javaopts.CommonsOption, args []string) ([]string, error) {
	get := func(name string) *javaopts.CommonsOption {
		name = strings.TrimPrefix(name, "-")
		name = strings.TrimPrefix(name, "-")
		for i := range options {
			if options[i].Short == name {
				return &options[i]
			}
		}
		for i := range options {
			if options[i].Long == name {
				return &options[i]
			}
		}
		return nil
	}
	// PosixParser.flatten.
	var flat []string
	for i, tok := range args {
		switch {
		case tok == "--":
			flat = append(flat, args[i:]...)
		case tok == "-":
			flat = append(flat, tok)
		case strings.HasPrefix(tok, "--"):
			name, value, eq := strings.Cut(tok, "=")
			if get(name) == nil {
				flat = append(flat, tok)
			} else if flat = append(flat, name); eq {
				flat = append(flat, value)
			}
		case strings.HasPrefix(tok, "-"):
			if len(tok) == 2 || get(tok) != nil {
				flat = append(flat, tok)
				break
			}
			for j := 1; j < len(tok); j++ { // burstToken
				o := get(tok[j : j+1])
				if o == nil {
					flat = append(flat, tok)
					break
				}
				flat = append(flat, "-"+tok[j:j+1])
				if o.Arg != javaopts.CommonsNoArg && j+1 < len(tok) {
					flat = append(flat, tok[j+1:])
					break
				}
			}
		default:
			flat = append(flat, tok)
		}
		if tok == "--" {
			break
		}
	}
	// Parser.parse.
	var out, rest []string
	for i := 0; i < len(flat); i++ {
		t := flat[i]
		switch {
		case t == "--":
			for _, r := range flat[i+1:] {
				if r != "--" {
					rest = append(rest, r)
				}
			}
			i = len(flat)
		case t == "-" || !strings.HasPrefix(t, "-"):
			rest = append(rest, t)
		default:
			o := get(t)
			if o == nil {
				return nil, &javaopts.CommonsError{Msg: "Unrecognized option: " + t}
			}
			if o.Arg == javaopts.CommonsNoArg {
				out = append(out, "-"+o.Key())
				continue
			}
			// processArgs: the next token is the value unless it is a
			// known option.
			if i+1 >= len(flat) || (strings.HasPrefix(flat[i+1], "-") && get(flat[i+1]) != nil) {
				return nil, &javaopts.CommonsError{Msg: "Missing argument for option: " + o.Key()}
			}
			i++
			out = append(out, "--"+o.Long+"="+strip12Quotes(flat[i]))
		}
	}
	if len(rest) > 0 {
		out = append(append(out, "--"), rest...)
	}
	return out, nil
}

// strip12Quotes is commons-cli 1.2's Util.stripLeadingAndTrailingQuotes:
// a leading '"' and a trailing '"' go, each on its own.
func strip12Quotes(s string) string {
	s = strings.TrimPrefix(s, "\"")
	return strings.TrimSuffix(s, "\"")
}

// str is the option's first value, trimmed when the original trims it,
// or def.
func (p *parsed) str(key, def string, trim bool) string {
	v, ok := p.line.Value(key)
	if !ok {
		return def
	}
	if trim {
		return javaTrim(v)
	}
	return v
}

func (p *parsed) has(key string) bool { return p.line.Has(key) }

// boolean is commandLine.hasOption(k) && Boolean.parseBoolean(value).
func (p *parsed) boolean(key string) bool {
	v, ok := p.line.Value(key)
	return ok && strings.EqualFold(v, "true")
}

// numberError is the uncaught NumberFormatException a bad number ends
// main with, after what was printed before.
func numberError(err error, before []string) *cli.Exit {
	return jvm.Uncaught(jvm.Exception{Class: "java.lang.NumberFormatException", Message: err.Error()}, before)
}

// integer is Integer.parseInt of the value, or def.
func (p *parsed) integer(key string, def int, trim bool) (int, error) {
	v, ok := p.line.Value(key)
	if !ok {
		return def, nil
	}
	if trim {
		v = javaTrim(v)
	}
	n, err := javaopts.ParseJavaInt(v)
	if err != nil {
		return 0, numberError(err, nil)
	}
	return int(n), nil
}

// long is Long.parseLong of the value, or def.
func (p *parsed) long(key string, def int64) (int64, error) {
	v, ok := p.line.Value(key)
	if !ok {
		return def, nil
	}
	n, err := javaopts.ParseJavaLong(v)
	if err != nil {
		return 0, numberError(err, nil)
	}
	return n, nil
}

// double is Double.parseDouble of the trimmed value, or def.
func (p *parsed) double(key string, def float64) (float64, error) {
	v, ok := p.line.Value(key)
	if !ok {
		return def, nil
	}
	n, err := javaopts.ParseJavaDouble(javaTrim(v))
	if err != nil {
		return 0, numberError(err, nil)
	}
	return n, nil
}
