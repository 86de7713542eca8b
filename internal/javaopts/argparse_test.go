package javaopts

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/perfclones/perfclones/internal/javafmt"
)

// kafkaProducer3x is ProducerPerformance's parser as of Kafka 3.5-3.8.
func kafkaProducer3x() *ArgParser {
	return &ArgParser{
		Prog:         "producer-performance",
		Description:  "This tool is used to verify the producer performance.",
		DefaultHelp:  true,
		HelpOnNoArgs: true,
		Groups: []Group{{Name: "payload", Mutex: true, Required: true,
			Description: "either --record-size or --payload-file must be specified but not both."}},
		Args: []Arg{
			{Flags: []string{"--topic"}, Required: true, Metavar: "TOPIC", Help: "produce messages to this topic"},
			{Flags: []string{"--num-records"}, Type: TypeLong, Required: true, Metavar: "NUM-RECORDS", Dest: "numRecords",
				Help: "number of messages to produce"},
			{Flags: []string{"--record-size"}, Type: TypeInteger, Metavar: "RECORD-SIZE", Dest: "recordSize", Group: "payload",
				Help: "message size in bytes. Note that you must provide exactly one of --record-size or --payload-file."},
			{Flags: []string{"--payload-file"}, Metavar: "PAYLOAD-FILE", Dest: "payloadFile", Group: "payload",
				Help: "file to read the message payloads from. This works only for UTF-8 encoded text files. " +
					"Payloads will be read from this file and a payload will be randomly selected when sending messages. " +
					"Note that you must provide exactly one of --record-size or --payload-file."},
			{Flags: []string{"--payload-delimiter"}, Metavar: "PAYLOAD-DELIMITER", Dest: "payloadDelimiter", Default: `\n`,
				Help: "provides delimiter to be used when --payload-file is provided. Defaults to new line. " +
					"Note that this parameter will be ignored if --payload-file is not provided."},
			{Flags: []string{"--throughput"}, Type: TypeInteger, Required: true, Metavar: "THROUGHPUT",
				Help: "throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to -1 to disable throttling."},
			{Flags: []string{"--producer-props"}, Nargs: "+", Metavar: "PROP-NAME=PROP-VALUE", Dest: "producerConfig",
				Help: "kafka producer related configuration properties like bootstrap.servers,client.id etc. " +
					"These configs take precedence over those passed via --producer.config."},
			{Flags: []string{"--producer.config"}, Metavar: "CONFIG-FILE", Dest: "producerConfigFile", Help: "producer config properties file."},
			{Flags: []string{"--print-metrics"}, Type: TypeFlag, Dest: "printMetrics", Help: "print out metrics at the end of the test."},
			{Flags: []string{"--transactional-id"}, Metavar: "TRANSACTIONAL-ID", Dest: "transactionalId",
				Default: "performance-producer-default-transactional-id",
				Help:    "The transactionalId to use if transaction-duration-ms is > 0. Useful when testing the performance of concurrent transactions."},
			{Flags: []string{"--transaction-duration-ms"}, Type: TypeLong, Metavar: "TRANSACTION-DURATION", Dest: "transactionDurationMs",
				Default: int64(0),
				Help:    "The max age of each transaction. The commitTransaction will be called after this time has elapsed. Transactions are only enabled if this value is positive."},
		},
	}
}

// kafkaProducer4x is ProducerPerformance's parser as of Kafka 4.0/4.1
// (Double throughput, --payload-monotonic, --warmup-records).
func kafkaProducer4x() *ArgParser {
	p := kafkaProducer3x()
	p.Description = "This tool is used to verify the producer performance. To enable transactions, " +
		"you can specify a transaction id or set a transaction duration using --transaction-duration-ms. " +
		"There are three ways to specify the transaction id: set transaction.id=<id> via --producer-props, " +
		"set transaction.id=<id> in the config file via --producer.config, or use --transaction-id <id>."
	const exactlyOne = "Note that you must provide exactly one of --record-size or --payload-file or --payload-monotonic."
	var args []Arg
	for _, a := range p.Args {
		switch a.Flags[0] {
		case "--record-size":
			a.Help = "message size in bytes. " + exactlyOne
		case "--payload-file":
			a.Help = strings.Replace(a.Help, "Note that you must provide exactly one of --record-size or --payload-file.", exactlyOne, 1)
		case "--throughput":
			a.Type = TypeDouble
		case "--transactional-id":
			a.Default = nil
			a.Help = "The transactional id to use. This config takes precedence over the transactional.id " +
				"specified via --producer.config or --producer-props. Note that if the transactional id " +
				"is not specified while --transaction-duration-ms is provided, the default value for the " +
				"transactional id will be performance-producer- followed by a random uuid."
		case "--transaction-duration-ms":
			a.Default = nil
			a.Help = "The max age of each transaction. The commitTransaction will be called after this time has elapsed. " +
				"The value should be greater than 0. If the transactional id is specified via --producer-props, " +
				"--producer.config, or --transactional-id but --transaction-duration-ms is not specified, " +
				"the default value will be 3000."
		}
		args = append(args, a)
		if a.Flags[0] == "--payload-file" {
			args = append(args, Arg{Flags: []string{"--payload-monotonic"}, Type: TypeFlag, Dest: "payloadMonotonic", Group: "payload",
				Help: "payload is monotonically increasing integer. " + exactlyOne})
		}
	}
	args = append(args, Arg{Flags: []string{"--warmup-records"}, Type: TypeLong, Metavar: "WARMUP-RECORDS", Dest: "warmupRecords",
		Default: int64(0),
		Help: "The number of records to treat as warmup; these initial records will not be included in steady-state statistics. " +
			"An additional summary line will be printed describing the steady-state statistics. (default: 0)."})
	p.Args = args
	return p
}

// nsString renders a Namespace like the oracle: key=Class:value, sorted.
func nsString(ns *Namespace) string {
	keys := make([]string, 0, len(ns.values))
	for k := range ns.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + javaValue(ns.values[k]) + "\n")
	}
	return b.String()
}

func javaValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "String:" + x
	case int64:
		return fmt.Sprintf("Long:%d", x)
	case int32:
		return fmt.Sprintf("Integer:%d", x)
	case float64:
		return "Double:" + javafmt.DoubleToString(x)
	case bool:
		return fmt.Sprintf("Boolean:%v", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = strings.SplitN(javaValue(e), ":", 2)[1]
		}
		return "ArrayList:[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("?%T:%v", v, v)
}

type oracleRecord struct {
	header         string
	width          int
	table          string
	args           []string
	exit           int
	ns, out, errst string
}

// readArgparseOracle reads testdata/argparse4j_oracle.txt: the output of
// argparse4j 0.7.0 itself (run under Kafka's main error handling) for the
// two tables above, several widths and many command lines.
func readArgparseOracle(t *testing.T) []oracleRecord {
	data, err := os.ReadFile("testdata/argparse4j_oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	var recs []oracleRecord
	for _, chunk := range strings.Split(string(data), "--- end\n") {
		if strings.TrimSpace(chunk) == "" {
			continue
		}
		header, rest, _ := strings.Cut(chunk, "\n")
		fields := strings.Split(strings.TrimPrefix(header, "=== "), "\t")
		var r oracleRecord
		r.header = header
		fmt.Sscan(fields[0], &r.width)
		r.table = fields[1]
		r.args = fields[2:]
		if len(r.args) == 1 && r.args[0] == "<none>" {
			r.args = nil
		}
		exitLine, rest, _ := strings.Cut(rest, "\n")
		fmt.Sscanf(exitLine, "exit %d", &r.exit)
		rest = strings.TrimPrefix(rest, "--- ns\n")
		r.ns, rest, _ = strings.Cut(rest, "--- stdout\n")
		r.out, r.errst, _ = strings.Cut(rest, "--- stderr\n")
		recs = append(recs, r)
	}
	return recs
}

func TestArgparseOracle(t *testing.T) {
	recs := readArgparseOracle(t)
	if len(recs) < 200 {
		t.Fatalf("only %d oracle records", len(recs))
	}
	for _, r := range recs {
		p := kafkaProducer3x()
		if r.table == "k4" {
			p = kafkaProducer4x()
		}
		ns, err := p.Parse(r.args, r.width)
		var gotExit int
		var gotNS, gotOut, gotErr string
		if err != nil {
			var ex *Exit
			if !errors.As(err, &ex) {
				t.Fatalf("%s: error %T", r.header, err)
			}
			gotExit, gotOut, gotErr = ex.Code, ex.Stdout, ex.Stderr
		} else {
			gotNS = nsString(ns)
		}
		if gotExit != r.exit || gotNS != r.ns || gotOut != r.out || gotErr != r.errst {
			t.Errorf("%q\n exit got %d want %d\n ns got:\n%s want:\n%s stdout got:\n%s want:\n%s stderr got:\n%s want:\n%s",
				r.header, gotExit, r.exit, gotNS, r.ns, gotOut, r.out, gotErr, r.errst)
		}
	}
}

// specSample3x is the spec's verbatim Kafka 3.x help excerpt (wide
// terminal); "  ...\n" lines stand for elided lines.
const specSample3x = `usage: producer-performance [-h] --topic TOPIC --num-records NUM-RECORDS [--payload-delimiter PAYLOAD-DELIMITER] --throughput THROUGHPUT [--producer-props PROP-NAME=PROP-VALUE [PROP-NAME=PROP-VALUE ...]]
                            [--producer.config CONFIG-FILE] [--print-metrics] [--transactional-id TRANSACTIONAL-ID] [--transaction-duration-ms TRANSACTION-DURATION] (--record-size RECORD-SIZE |
                            --payload-file PAYLOAD-FILE)

This tool is used to verify the producer performance.

optional arguments:
  -h, --help             show this help message and exit
  --topic TOPIC          produce messages to this topic
  --num-records NUM-RECORDS
                         number of messages to produce
  --payload-delimiter PAYLOAD-DELIMITER
                         provides delimiter to be used when --payload-file is provided. Defaults to new line. Note that this parameter will be ignored if --payload-file is not provided. (default: \n)
  ...
  --print-metrics        print out metrics at the end of the test. (default: false)
  ...

  either --record-size or --payload-file must be specified but not both.

  --record-size RECORD-SIZE
                         message size in bytes. Note that you must provide exactly one of --record-size or --payload-file.
`

func TestArgparseSpecSample(t *testing.T) {
	// The sample's usage wraps after 203 and 193 columns, so its width was
	// between 203 and 221; COLUMNS=225 gives 220.
	help := kafkaProducer3x().Help(FormatWidth("225"))
	pos := 0
	for i, chunk := range strings.Split(specSample3x, "  ...\n") {
		k := strings.Index(help[pos:], chunk)
		if k < 0 || (i == 0 && k != 0) {
			t.Fatalf("chunk %d of the spec sample not found in order:\n%s\n--- help:\n%s", i, chunk, help)
		}
		pos += k + len(chunk)
	}
}

func TestArgparseHelpDefaultWidth(t *testing.T) {
	// Kafka 4.x description at the fallback width 75: wrapped, fully
	// justified lines, a break after "--".
	help := kafkaProducer4x().Help(DefaultFormatWidth)
	want := `This  tool  is  used  to   verify   the  producer  performance.  To  enable
transactions, you  can  specify  a  transaction  id  or  set  a transaction
duration using --transaction-duration-ms. There  are  three ways to specify
the transaction  id:  set  transaction.id=<id>  via  --producer-props,  set
transaction.id=<id> in the config  file  via  --producer.config,  or use --
transaction-id <id>.
`
	if !strings.Contains(help, want) {
		t.Errorf("help lacks justified description lines %q:\n%s", want, help)
	}
	_, body, _ := strings.Cut(help, "\n\n") // usage lines hold whole items
	for _, line := range strings.Split(body, "\n") {
		if jlen(line) > DefaultFormatWidth {
			t.Errorf("line longer than %d: %q", DefaultFormatWidth, line)
		}
	}
}

func TestArgparseNamespace(t *testing.T) {
	p := kafkaProducer4x()
	ns, err := p.Parse([]string{"--top", "t", "--num-records=7", "--payload-monotonic", "--throughput", "-1",
		"--producer-props", "acks=all", "linger.ms=5", "--producer-props", "bootstrap.servers=h:9092"}, 75)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := ns.String("topic"); !ok || s != "t" {
		t.Errorf("topic = %q, %v", s, ok)
	}
	if n, ok := ns.Long("--num-records"); !ok || n != 7 {
		t.Errorf("num-records = %d, %v", n, ok)
	}
	if d, ok := ns.Double("throughput"); !ok || d != -1 {
		t.Errorf("throughput = %v, %v", d, ok)
	}
	if props, _ := ns.Strings("producerConfig"); strings.Join(props, " ") != "bootstrap.servers=h:9092" {
		t.Errorf("producer-props = %q (last occurrence must replace)", props)
	}
	if ns.Count("--producer-props") != 2 {
		t.Errorf("count = %d", ns.Count("--producer-props"))
	}
	if !ns.Bool("payloadMonotonic") || ns.Bool("printMetrics") {
		t.Errorf("flags wrong")
	}
	if ns.Has("recordSize") || !ns.Has("warmupRecords") {
		t.Errorf("Has wrong")
	}
	if w, _ := ns.Long("warmupRecords"); w != 0 {
		t.Errorf("warmup default = %d", w)
	}
}

func TestArgparseFail(t *testing.T) {
	ex := kafkaProducer3x().Fail("Either --producer-props or --producer.config must be specified.", 75)
	want := "producer-performance: error: Either  --producer-props  or --producer.config\nmust be specified.\n"
	if ex.Code != 1 || ex.Stdout != "" || !strings.HasSuffix(ex.Stderr, want) || !strings.HasPrefix(ex.Stderr, "usage: producer-performance [-h]") {
		t.Errorf("Fail = %+v", ex)
	}
}

func TestFormatWidth(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"", 75}, {"80", 75}, {"+80", 75}, {"200", 195}, {"5", 75}, {"6", 1}, {"abc", 75}, {" 80", 75}, {"-3", 75}} {
		if got := FormatWidth(c.in); got != c.want {
			t.Errorf("FormatWidth(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestAdjustSpace(t *testing.T) {
	for _, c := range []struct {
		in       string
		width    int
		cur      int
		want     string
		describe string
	}{
		{"a b c ", 9, 6, "a   b   c", "4 spaces over 2 runs"},
		{"a b c d ", 10, 8, "a  b  c  d", "3 spaces over 3 runs"},
		{"a b c d e ", 14, 10, "a  b  c   d  e", "5 over 4 runs: the extra one to run 2"},
		{"a b c d e ", 12, 10, "a b  c  d  e", "3 over 4 runs: runs 1 to 3"},
		{"  lead trail  ", 14, 14, "lead     trail", "ends trimmed, width regained"},
		{"word", 10, 4, "word", "no space to widen"},
	} {
		if got := adjustSpace(c.in, c.width, c.cur); got != c.want {
			t.Errorf("%s: adjustSpace(%q, %d, %d) = %q, want %q", c.describe, c.in, c.width, c.cur, got, c.want)
		}
	}
}

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"topc", "topic", 1},   // one insertion
		{"topicc", "topic", 4}, // one deletion
		{"tpoic", "topic", 0},  // a swap costs nothing
		{"topix", "topic", 2},  // one substitution
		{"numrecords", "num-records", 1},
		{"", "abc", 3},
		{"abc", "", 3}, // the first column counts 1 per character
	} {
		if got := levenshtein(c.a, c.b, 0, 2, 1, 4); got != c.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
