package kafkaperf

import (
	"strings"
	"testing"

	"github.com/perfclones/perfclones/internal/javafmt"
)

func TestParseConsumerOptions(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		check    func(t *testing.T, o *consumerOptions)
		code     int    // expected exit code when parsing ends the program
		stdout   string // expected start of the exit's stdout
		stderr   string // expected first line of the exit's stderr
		toolErr  string
		noticesN int
	}{
		{name: "seed 004 line", args: "--topic Topic-01 --messages 500000 --fetch-size 1048576 --group g1 --broker-list h:9092",
			check: func(t *testing.T, o *consumerOptions) {
				if o.bootstrap != "h:9092" || o.topic != "Topic-01" || o.numRecords != 500000 || o.group != "g1" || o.fetchSize != 1048576 {
					t.Errorf("options = %+v", o)
				}
				if v, _ := o.props.Get("max.partition.fetch.bytes"); v != "1048576" {
					t.Errorf("max.partition.fetch.bytes = %q", v)
				}
				if v, _ := o.props.Get("auto.offset.reset"); v != "earliest" {
					t.Errorf("auto.offset.reset = %q", v)
				}
			}, noticesN: 1},
		{name: "4.x spellings and defaults", args: "--bootstrap-server b:1 --topic t --num-records 10 --from-latest --command-property group.id=x --command-property client.id=c",
			check: func(t *testing.T, o *consumerOptions) {
				if o.timeoutMs != 10000 || o.reportingInterval != 5000 || o.socketBuffer != 2097152 || !strings.HasPrefix(o.group, "perf-consumer-") {
					t.Errorf("defaults = %+v", o)
				}
				if v, _ := o.props.Get("group.id"); v != o.group {
					t.Errorf("group.id = %q: the tool's group must win over a property", v)
				}
				if v, _ := o.props.Get("client.id"); v != "c" {
					t.Errorf("client.id = %q", v)
				}
				if v, _ := o.props.Get("auto.offset.reset"); v != "latest" {
					t.Errorf("auto.offset.reset = %q", v)
				}
			}},
		{name: "bootstrap wins over broker list", args: "--bootstrap-server b:1 --broker-list h:2 --topic t --num-records 1",
			check: func(t *testing.T, o *consumerOptions) {
				if o.bootstrap != "b:1" {
					t.Errorf("bootstrap = %q", o.bootstrap)
				}
			}},
		{name: "timeout optional argument", args: "--bootstrap-server b:1 --topic t --num-records 1 --timeout 250",
			check: func(t *testing.T, o *consumerOptions) {
				if o.timeoutMs != 250 {
					t.Errorf("timeout = %d", o.timeoutMs)
				}
			}},
		{name: "timeout without a number keeps the default", args: "--bootstrap-server b:1 --topic t --num-records 1 --timeout abc",
			check: func(t *testing.T, o *consumerOptions) {
				if o.timeoutMs != 10000 {
					t.Errorf("timeout = %d", o.timeoutMs)
				}
			}},
		// 4.4 does not know --threads: accepted, and no 3.9 warning.
		{name: "threads accepted", args: "--bootstrap-server b:1 --topic t --messages 1 --threads 3", noticesN: 1,
			check: func(t *testing.T, o *consumerOptions) {
				if o.notices[0] != "Warning: --messages is deprecated. Use --num-records instead." {
					t.Errorf("notices = %q", o.notices)
				}
			}},
		{name: "include", args: "--bootstrap-server b:1 --include Topic-0[12] --num-records 1",
			check: func(t *testing.T, o *consumerOptions) {
				if !o.include.MatchString("Topic-01") || o.include.MatchString("xTopic-01") {
					t.Error("--include must match whole topic names")
				}
			}},

		{name: "no arguments", args: "", code: 1, stderr: consumerDescription},
		{name: "help", args: "--help", code: 1, stderr: consumerDescription},
		{name: "version", args: "--version", code: 0, stdout: "4.4.0\n"},
		{name: "no bootstrap", args: "--topic t --num-records 1", code: 1, stderr: `Missing required argument "[bootstrap-server]"`},
		{name: "unknown option", args: "--foo", code: 1, stderr: "foo is not a recognized option"},
		{name: "missing argument", args: "--bootstrap-server", code: 1, stderr: "Option bootstrap-server requires an argument"},
		{name: "both counts", args: "--bootstrap-server b:1 --topic t --messages 1 --num-records 1", code: 1,
			stderr: "Exactly one of the following arguments is required: [messages], [num-records]"},
		{name: "no topic", args: "--bootstrap-server b:1 --num-records 1", code: 1,
			stderr: "Exactly one of the following arguments is required: [topic], [include]"},
		{name: "both config files", args: "--bootstrap-server b:1 --topic t --num-records 1 --consumer.config a --command-config b", code: 1,
			stderr: `Option "[consumer.config]" can't be used with option "[command-config]"`},
		{name: "bad interval", args: "--bootstrap-server b:1 --topic t --num-records 1 --reporting-interval 0",
			toolErr: "Reporting interval must be greater than 0."},
		{name: "bad number read lazily", args: "--bootstrap-server b:1 --topic t --messages abc", toolErr: "Cannot parse argument 'abc' of option messages"},
		{name: "repeated topic", args: "--bootstrap-server b:1 --topic t --topic u --num-records 1",
			toolErr: "Found multiple arguments for option topic, but you asked for only one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseConsumerOptions(strings.Fields(tt.args), "perf-consumer-12345", &kafka44.consumer, "4.4.0")
			if err == nil {
				// The values are read after the header, as the original does.
				err = o.readValues(&kafka44.consumer)
			}
			switch {
			case tt.check != nil:
				if err != nil {
					t.Fatal(fatalText(err))
				}
				if len(o.notices) != tt.noticesN {
					t.Errorf("notices = %q", o.notices)
				}
				tt.check(t, o)
			case tt.toolErr != "":
				if err == nil || fatalText(err) != tt.toolErr+"\n" {
					t.Errorf("error = %v, want %q", err, tt.toolErr)
				}
			default:
				text := fatalText(err)
				if tt.stdout != "" && !strings.HasPrefix(text, tt.stdout) {
					t.Errorf("stdout = %q, want %q", text, tt.stdout)
				}
				if tt.stderr != "" {
					first, rest, _ := strings.Cut(text, "\n")
					if first != tt.stderr || !strings.HasPrefix(rest, "Option                                   Description") {
						t.Errorf("stderr starts %q, want %q and the help table", first, tt.stderr)
					}
				}
			}
		})
	}
}

func TestConsumerSummaryLine(t *testing.T) {
	snap := consumerSnapshot{startMs: 1675763605127, endMs: 1675763608418, bytes: 3446114, records: 3446, rebalanceMs: 3222}
	df, _ := javafmt.NewDateFormat(javafmt.DefaultDatePattern)
	got := summaryLine(snap, df)
	// The numbers of the spec's real 3.x sample (3446 records in 3291 ms).
	wantNumbers := ", 3.2865, 0.9986, 3446, 1047.0981, 3222, 69, 47.6300, 49942.0290"
	if !strings.HasSuffix(got, wantNumbers) {
		t.Errorf("summary = %q, want it to end %q", got, wantNumbers)
	}
	empty := consumerSnapshot{startMs: snap.startMs, endMs: snap.startMs}
	if got := summaryLine(empty, df); !strings.HasSuffix(got, ", 0.0000, NaN, 0, NaN, 0, 0, NaN, NaN") {
		t.Errorf("empty summary = %q", got)
	}
}

func TestDetailedLine(t *testing.T) {
	l := newDetailedLine(10_000, 5_000, 2*1048576, 3000, 1048576, 1000, 1000)
	if l.intervalFetchMs != 4000 || l.intervalMBPerSec != 0.25 || l.intervalRecordsPerSe != 250 {
		t.Errorf("line = %+v", l)
	}
	if z := newDetailedLine(10, 5, 1, 1, 1, 1, 5); z.intervalMBPerSec != 0 || z.intervalRecordsPerSe != 0 {
		t.Errorf("no fetch time must give 0 rates: %+v", z)
	}
}
