package javaopts

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// perfTestLike is a commons-cli table in PerfTest's style: one-letter and
// multi-letter short names, names that prefix others, an optional value,
// repeatable values, long-only options, a short name that is also a long
// name's prefix. testdata/commonscli_oracle.txt is what commons-cli 1.9.0
// (DefaultParser, HelpFormatter) does with the same table.
func perfTestLike() *CommonsParser {
	o := func(short, long string, arg CommonsArg, desc string) CommonsOption {
		return CommonsOption{Short: short, Long: long, Arg: arg, Desc: desc}
	}
	return &CommonsParser{Options: []CommonsOption{
		o("?", "help", CommonsNoArg, "show usage"),
		o("d", "id", CommonsOneArg, "test ID"),
		o("h", "uri", CommonsOneArg, "connection URI"),
		o("H", "uris", CommonsOneArg, "connection URIs (separated by commas)"),
		o("t", "type", CommonsOneArg, "exchange type"),
		o("e", "exchange", CommonsOptionalArg, "exchange name"),
		o("u", "queue", CommonsOneArg, "queue name"),
		o("x", "producers", CommonsOneArg, "producer count"),
		o("y", "consumers", CommonsOneArg, "consumer count"),
		o("X", "producer-channel-count", CommonsOneArg, "channels per producer"),
		o("Y", "consumer-channel-count", CommonsOneArg, "channels per consumer"),
		o("prsd", "producer-random-start-delay", CommonsOneArg, "max random delay in seconds to start producers"),
		o("pst", "producer-scheduler-threads", CommonsOneArg, "number of threads to use when using --publishing-interval"),
		o("c", "confirm", CommonsOneArg, "max unconfirmed publishes"),
		o("ct", "confirm-timeout", CommonsOneArg, "waiting timeout for unconfirmed publishes before failing (in seconds)"),
		o("C", "pmessages", CommonsOneArg, "producer message count"),
		o("a", "autoack", CommonsNoArg, "auto ack"),
		o("A", "multi-ack-every", CommonsOneArg, "multi ack every"),
		o("s", "size", CommonsOneArg, "message size in bytes"),
		o("S", "slow-start", CommonsNoArg, "start consumers slowly (1 sec delay between each)"),
		o("z", "time", CommonsOneArg, "run duration in seconds (unlimited by default)"),
		o("f", "flag", CommonsUnlimited, "message flag(s), supported values: persistent and mandatory. Use the option several times to specify several values."),
		o("p", "predeclared", CommonsNoArg, "allow use of predeclared objects"),
		o("ad", "auto-delete", CommonsOneArg, "should the queue be auto-deleted, default is true"),
		o("ms", "use-millis", CommonsNoArg, "should latency be collected in milliseconds, default is false. Set to true if producers are consumers run on different machines."),
		o("qa", "queue-args", CommonsOneArg, "queue arguments as key/value pairs, separated by commas, e.g. x-max-length=10"),
		o("qp", "queue-pattern", CommonsOneArg, "queue name pattern for creating queues in sequence"),
		o("qpf", "queue-pattern-from", CommonsOneArg, "queue name pattern range start (inclusive)"),
		o("qpt", "queue-pattern-to", CommonsOneArg, "queue name pattern range end (inclusive)"),
		o("qq", "quorum-queue", CommonsNoArg, "create quorum queue(s)"),
		o("cri", "connection-recovery-interval", CommonsOneArg, "connection recovery interval in seconds. Default is 5 seconds. Interval syntax, e.g. 30-60, is supported to specify an random interval between 2 values between each attempt."),
		o("vr", "variable-rate", CommonsUnlimited, "variable publishing rate with [RATE]:[DURATION] syntax, where [RATE] integer >= 0 and [DURATION] integer > 0. Use the option several times to specify several values."),
		o("D", "cmessages", CommonsOneArg, "consumer message count"),
		o("Xmx", "xmax", CommonsOneArg, "a short name that is also a long prefix"),
		o("", "verbose", CommonsNoArg, "long only, no value"),
		{Long: "id-prefix", Arg: CommonsOneArg, ArgName: "prefix", Desc: "long only with a value and an arg name"},
		o("mf", "metrics-format", CommonsOneArg, "metrics format (default, compact), default is default\nsecond line after a newline"),
		o("env", "environment-variables", CommonsNoArg, "show usage with environment variables"),
		o("L", "consumer-latency", CommonsOneArg, "consumer latency in microseconds"),
		o("l", "legacy-metrics", CommonsNoArg, "display legacy metrics (min/avg/max latency)"),
	}}
}

// commonsReport renders a parse as the oracle program does.
func commonsReport(p *CommonsParser, args []string) string {
	line, err := p.Parse(args)
	if err != nil {
		return "ERR " + err.Error() + "\n"
	}
	var b strings.Builder
	b.WriteString("OK\n")
	for _, s := range line.opts {
		b.WriteString("opt " + s.opt.Key())
		for _, v := range s.values {
			b.WriteString(" [" + v + "]")
		}
		b.WriteString("\n")
	}
	for _, k := range []string{"x", "f", "e", "vr", "producers"} {
		if line.Has(k) {
			v, _ := line.Value(k)
			if _, ok := line.Value(k); !ok {
				v = "null"
			}
			fmt.Fprintf(&b, "value %s [%s]\n", k, v)
		}
	}
	for _, a := range line.Args() {
		b.WriteString("arg [" + a + "]\n")
	}
	return b.String()
}

func readCommonsOracle(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("testdata/commonscli_oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, chunk := range strings.Split(string(data), "--- end\n") {
		if chunk == "" {
			continue
		}
		header, body, _ := strings.Cut(chunk, "\n")
		out[strings.TrimPrefix(header, "=== ")] = body
	}
	return out
}

func TestCommonsParseMatchesCommonsCLI(t *testing.T) {
	oracle := readCommonsOracle(t)
	p := perfTestLike()
	n := 0
	for header, want := range oracle {
		if strings.HasPrefix(header, "HELP") {
			continue
		}
		var args []string
		if header != "" {
			args = strings.Split(header, "\t")
		}
		n++
		if got := commonsReport(p, args); got != want {
			t.Errorf("%q:\ngot:\n%swant:\n%s", args, got, want)
		}
	}
	if n < 80 {
		t.Fatalf("only %d command lines in the oracle", n)
	}
}

func TestCommonsHelpMatchesHelpFormatter(t *testing.T) {
	oracle := readCommonsOracle(t)
	p := perfTestLike()
	if got, want := p.Help("<program>"), oracle["HELP"]; got != want {
		t.Errorf("help:\ngot:\n%s\nwant:\n%s", got, want)
	}
	for _, w := range []int{40, 60} {
		got := p.HelpWidth("<program> with a long syntax that needs wrapping", w)
		if want := oracle[fmt.Sprintf("HELP%d", w)]; got != want {
			t.Errorf("help at width %d:\ngot:\n%s\nwant:\n%s", w, got, want)
		}
	}
}

func TestCommonsLineLookups(t *testing.T) {
	p := perfTestLike()
	line, err := p.Parse([]string{"--producers", "3", "-x", "4", "-f", "persistent", "-f", "mandatory", "-qq", "word"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"Value x (the first occurrence wins)", line.ValueOr("x", "1"), "3"},
		{"Value by long name", line.ValueOr("--producers", "1"), "3"},
		{"default", line.ValueOr("y", "1"), "1"},
		{"Values f", strings.Join(line.Values("flag"), ","), "persistent,mandatory"},
		{"Has qq", line.Has("quorum-queue"), true},
		{"Has a", line.Has("a"), false},
		{"unknown name", line.Has("nope"), false},
		{"Args", strings.Join(line.Args(), ","), "word"},
		{"Given", len(line.Given()), 5},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
