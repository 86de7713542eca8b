package javaopts

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// kafkaConsumer3x is ConsumerPerformance's option table as of Kafka
// 3.5-3.9, with CommandDefaultOptions' --help and --version, and the
// random group default fixed.
func kafkaConsumer3x() *JoptParser {
	return &JoptParser{Options: []JoptOption{
		{Names: []string{"help"}, Description: "Print usage information.", ForHelp: true},
		{Names: []string{"version"}, Description: "Display Kafka version.", ForHelp: true},
		{Names: []string{"broker-list"}, Arg: RequiredArg, ArgName: "broker-list",
			Description: "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. The broker list string in the form HOST1:PORT1,HOST2:PORT2."},
		{Names: []string{"bootstrap-server"}, Arg: RequiredArg, ArgName: "server to connect to", RequiredUnless: []string{"broker-list"},
			Description: "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to."},
		{Names: []string{"topic"}, Arg: RequiredArg, ArgName: "topic", Description: "REQUIRED: The topic to consume from."},
		{Names: []string{"group"}, Arg: RequiredArg, ArgName: "gid", Defaults: []string{"perf-consumer-12345"}, Description: "The group id to consume on."},
		{Names: []string{"fetch-size"}, Arg: RequiredArg, Type: "Integer", ArgName: "size", Defaults: []string{"1048576"},
			Description: "The amount of data to fetch in a single request."},
		{Names: []string{"from-latest"}, Description: "If the consumer does not already have an established offset to consume from, " +
			"start with the latest message present in the log rather than the earliest message."},
		{Names: []string{"socket-buffer-size"}, Arg: RequiredArg, Type: "Integer", ArgName: "size", Defaults: []string{"2097152"},
			Description: "The size of the tcp RECV size."},
		{Names: []string{"num-fetch-threads"}, Arg: RequiredArg, Type: "Integer", ArgName: "count", Defaults: []string{"1"},
			Description: "DEPRECATED AND IGNORED: Number of fetcher threads."},
		{Names: []string{"threads"}, Arg: RequiredArg, Type: "Integer", ArgName: "count", Defaults: []string{"10"},
			Description: "DEPRECATED AND IGNORED: Number of processing threads."},
		{Names: []string{"consumer.config"}, Arg: RequiredArg, ArgName: "config file", Description: "Consumer config properties file."},
		{Names: []string{"print-metrics"}, Description: "Print out the metrics."},
		{Names: []string{"show-detailed-stats"}, Description: "If set, stats are reported for each reporting interval as configured by reporting-interval"},
		{Names: []string{"timeout"}, Arg: OptionalArg, Type: "Long", ArgName: "milliseconds", Defaults: []string{"10000"},
			Description: "The maximum allowed time in milliseconds between returned records."},
		{Names: []string{"messages"}, Arg: RequiredArg, Type: "Long", ArgName: "count", Description: "REQUIRED: The number of messages to send or consume"},
		{Names: []string{"reporting-interval"}, Arg: RequiredArg, Type: "Long", ArgName: "interval_ms", Defaults: []string{"5000"},
			Description: "Interval in milliseconds at which to print progress info."},
		{Names: []string{"date-format"}, Arg: RequiredArg, ArgName: "date format", Defaults: []string{"yyyy-MM-dd HH:mm:ss:SSS"},
			Description: "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options."},
		{Names: []string{"hide-header"}, Description: "If set, skips printing the header for the stats "},
	}}
}

// readJoptOracle reads testdata/joptsimple_oracle.txt, the output of
// jopt-simple 5.0.4 for the table above: its help table, then for each
// command line the exception message or, per option, has() and valueOf().
func readJoptOracle(t *testing.T) (help string, cases [][2]string) {
	data, err := os.ReadFile("testdata/joptsimple_oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range strings.Split(string(data), "--- end\n") {
		if chunk == "" {
			continue
		}
		header, body, _ := strings.Cut(chunk, "\n")
		header = strings.TrimPrefix(header, "=== ")
		if header == "HELP" {
			help = body
			continue
		}
		cases = append(cases, [2]string{header, body})
	}
	return help, cases
}

// joptReport renders a parse like the oracle does.
func joptReport(p *JoptParser, args []string) string {
	set, err := p.Parse(args)
	if err != nil {
		return "ERR " + err.Error() + "\n"
	}
	var b strings.Builder
	b.WriteString("OK\n")
	for _, o := range p.Options {
		name := o.Names[0]
		fmt.Fprintf(&b, "%s has=%v", name, set.Has(name))
		if o.Arg != NoArg {
			var v any
			var ok bool
			var err error
			switch o.Type {
			case "Long":
				v, ok, err = set.Long(name)
			case "Integer":
				v, ok, err = set.Int(name)
			default:
				v, ok, err = set.String(name)
			}
			switch {
			case err != nil:
				fmt.Fprintf(&b, " error=%s", err)
			case !ok:
				b.WriteString(" value=null")
			default:
				fmt.Fprintf(&b, " value=%v", v)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "nonoptions=[%s]\n", strings.Join(set.NonOptions(), ", "))
	return b.String()
}

func TestJoptOracle(t *testing.T) {
	wantHelp, cases := readJoptOracle(t)
	if got := kafkaConsumer3x().Help(); got != wantHelp {
		t.Errorf("help:\n%s\nwant:\n%s", got, wantHelp)
	}
	if len(cases) < 30 {
		t.Fatalf("only %d oracle cases", len(cases))
	}
	for _, c := range cases {
		args := strings.Split(c[0], "\t")
		if c[0] == "<none>" {
			args = nil
		}
		if got := joptReport(kafkaConsumer3x(), args); got != c[1] {
			t.Errorf("%q:\n got:\n%s want:\n%s", c[0], got, c[1])
		}
	}
}

// specConsumerExcerpt is the spec's verbatim 3.x excerpt; the real output
// pads every line to the full width with spaces, which the spec dropped.
const specConsumerExcerpt = `Option                                   Description
------                                   -----------
--bootstrap-server <String: server to    REQUIRED unless --broker-list
  connect to>                              (deprecated) is specified. The server
                                           (s) to connect to.
...
--reporting-interval <Long:              Interval in milliseconds at which to
  interval_ms>                             print progress info. (default: 5000)
...
--timeout [Long: milliseconds]           The maximum allowed time in
                                           milliseconds between returned
                                           records. (default: 10000)
--topic <String: topic>                  REQUIRED: The topic to consume from.
--version                                Display Kafka version.
`

func TestJoptSpecExcerpt(t *testing.T) {
	help := kafkaConsumer3x().Help()
	var trimmed []string
	for _, line := range strings.Split(help, "\n") {
		if line != "" && jlen(line) != 80 {
			t.Errorf("line not padded to 80 columns: %q", line)
		}
		trimmed = append(trimmed, strings.TrimRight(line, " "))
	}
	text := strings.Join(trimmed, "\n")
	pos := 0
	for i, chunk := range strings.Split(specConsumerExcerpt, "...\n") {
		k := strings.Index(text[pos:], chunk)
		if k < 0 || (i == 0 && k != 0) {
			t.Fatalf("chunk %d of the spec excerpt not found in order:\n%s\n--- help:\n%s", i, chunk, text)
		}
		pos += k + len(chunk)
	}
}

func TestJoptRequiredOrder(t *testing.T) {
	// Expectations from jopt-simple 5.0.4: the missing options come in the
	// iteration order of its HashMap of names.
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"zeta", "alpha", "mid"}, "[zeta, mid, alpha]"},
		{[]string{"help", "version", "bootstrap-server", "topic", "include", "messages", "num-records", "group",
			"command-config", "consumer.config", "command-property"},
			"[include, command-config, command-property, version, num-records, bootstrap-server, help, consumer.config, topic, messages, group]"},
	} {
		p := &JoptParser{}
		for _, n := range c.names {
			p.Options = append(p.Options, JoptOption{Names: []string{n}, Arg: RequiredArg, Required: true})
		}
		_, err := p.Parse(nil)
		if err == nil || err.Error() != "Missing required option(s) "+c.want {
			t.Errorf("err = %v, want %s", err, c.want)
		}
	}
	p := &JoptParser{Options: []JoptOption{
		{Names: []string{"zeta"}, Arg: RequiredArg, Required: true},
		{Names: []string{"alpha"}, Arg: RequiredArg, Required: true},
		{Names: []string{"mid"}, Arg: RequiredArg, Required: true},
	}}
	want := "Option (* = required)  Description\n" +
		"---------------------  -----------\n" +
		"* --alpha <String>                \n" +
		"* --mid <String>                  \n" +
		"* --zeta <String>                 \n"
	if got := p.Help(); got != want {
		t.Errorf("help:\n%q\nwant:\n%q", got, want)
	}
}

func TestJoptUsageExit(t *testing.T) {
	p := kafkaConsumer3x()
	msg := `Missing required argument "` + p.SpecString("topic") + `"`
	ex := p.UsageExit(msg)
	if ex.Code != 1 || ex.Stdout != "" || ex.Stderr != "Missing required argument \"[topic]\"\n"+p.Help() {
		t.Errorf("UsageExit = %+v", ex)
	}
	if ex.Error() != `Missing required argument "[topic]"` {
		t.Errorf("Error() = %q", ex.Error())
	}
}

func TestJoptHiddenOption(t *testing.T) {
	p := &JoptParser{Options: []JoptOption{
		{Names: []string{"topic"}, Description: "The topic.", Arg: RequiredArg, Type: "String", ArgName: "topic"},
		{Names: []string{"broker-list"}, Description: "Old.", Arg: RequiredArg, Type: "String", ArgName: "host", Hidden: true},
	}}
	if strings.Contains(p.Help(), "broker-list") {
		t.Errorf("hidden option in help:\n%s", p.Help())
	}
	set, err := p.Parse([]string{"--broker-list", "h:1"})
	if err != nil || !set.Has("broker-list") {
		t.Errorf("hidden option not parsed: %v", err)
	}
}
