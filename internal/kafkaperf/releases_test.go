package kafkaperf

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
)

// runMain calls a tool's Main in-process with the environment vars.
func runMain(t *testing.T, main cli.MainFunc, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = main(context.Background(), args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: cli.Env(vars)})
	return out.String(), errOut.String(), code
}

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The help texts in testdata were recorded from the real tools
// (scripts/kafka-tool producer39|producer --help with COLUMNS set;
// consumer39|consumer --help, the random group id masked; 2.7's from the
// kafka-tools and kafka_2.13 2.7.2 jars, run the same way).
func TestProducerHelpPerRelease(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"2.7", "3.9", "4.4"} {
		for _, cols := range []string{"80", "120", "200"} {
			t.Run(rel+"/"+cols, func(t *testing.T) {
				t.Parallel()
				vars := map[string]string{"COLUMNS": cols, "PERFCLONES_KAFKA_VERSION": rel}
				out, errOut, code := runMain(t, ProducerMain, vars, "--help")
				if want := golden(t, "producer-help-"+rel+"-"+cols+".txt"); out != want || errOut != "" || code != 1 {
					t.Errorf("code %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
				}
			})
		}
	}
	// Without the variable the tool is 3.9.
	out, _, _ := runMain(t, ProducerMain, map[string]string{"COLUMNS": "80"}, "--help")
	if out != golden(t, "producer-help-3.9-80.txt") {
		t.Errorf("default help is not 3.9's:\n%s", out)
	}
}

func TestConsumerHelpPerRelease(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"2.7", "3.9", "4.4"} {
		rel := Releases.Must(name)
		_, err := parseConsumerOptions([]string{"--help"}, "perf-consumer-NNNNN", &rel.Diff.consumer, rel.Version)
		exit, ok := err.(*cli.Exit)
		if want := golden(t, "consumer-help-"+name+".txt"); !ok || exit.Stderr != want || exit.Code != 1 {
			t.Errorf("%s: %v\n%s\nwant:\n%s", name, err, fatalText(err), want)
		}
	}
}

// TestReleaseDifferences are the lines that differ between the releases,
// each as the real tool prints it (checked against scripts/kafka-tool).
func TestReleaseDifferences(t *testing.T) {
	t.Parallel()
	const props = "--producer-props bootstrap.servers=127.0.0.1:1"
	tests := []struct {
		name, rel string
		main      cli.MainFunc
		args      string
		code      int
		stdout    string // the whole stdout
		lastErr   string // the last stderr line ("" for none)
	}{
		{name: "producer no client config", rel: "3.9", main: ProducerMain, args: "--topic t --num-records 10 --record-size 10 --throughput -1",
			code: 1, lastErr: "must be specified."},
		{name: "producer no client config", rel: "4.4", main: ProducerMain, args: "--topic t --num-records 10 --record-size 10 --throughput -1",
			code: 1, lastErr: "must be specified."},
		{name: "producer bad prop, no notice", rel: "3.9", main: ProducerMain, args: "--producer-props a --topic t --num-records 10 --record-size 10 --throughput -1",
			code: 1, lastErr: `Exception in thread "main" java.lang.IllegalArgumentException: Invalid property: a`},
		{name: "producer bad prop, notice", rel: "4.4", main: ProducerMain, args: "--producer-props a --topic t --num-records 10 --record-size 10 --throughput -1",
			code: 1, stdout: "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.\n",
			lastErr: `Exception in thread "main" java.lang.IllegalArgumentException: Invalid property: a`},
		{name: "producer zero records", rel: "4.4", main: ProducerMain, args: "--topic t --num-records 0 --record-size 10 --throughput -1 " + props,
			code: 1, lastErr: "zero."},
		{name: "producer zero records", rel: "3.9", main: ProducerMain, args: "--topic t --num-records 0 --record-size 10 --throughput -1 " + props,
			code: 1, lastErr: `Exception in thread "main" java.lang.ArithmeticException: / by zero`},
		{name: "producer negative record size", rel: "3.9", main: ProducerMain, args: "--topic t --num-records 10 --record-size -5 --throughput -1 " + props,
			code: 1, lastErr: `Exception in thread "main" java.lang.NegativeArraySizeException: -5`},
		{name: "producer -1 records", rel: "3.9", main: ProducerMain, args: "--topic t --num-records -1 --record-size 10 --throughput -1 " + props,
			code: 1, lastErr: `Exception in thread "main" java.lang.ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0`},
		{name: "producer -5 records", rel: "3.9", main: ProducerMain, args: "--topic t --num-records -5 --record-size 10 --throughput -1 " + props,
			code: 1, lastErr: `Exception in thread "main" java.lang.NegativeArraySizeException: -4`},
		{name: "producer payload group", rel: "3.9", main: ProducerMain, args: "--topic t --num-records 10 --throughput -1 " + props,
			code: 1, lastErr: "file --payload-monotonic is required"},
		{name: "consumer version", rel: "3.9", main: ConsumerMain, args: "--version", stdout: "3.9.2\n"},
		{name: "consumer version", rel: "4.4", main: ConsumerMain, args: "--version", stdout: "4.4.0\n"},
		{name: "consumer version default", main: ConsumerMain, args: "--version", stdout: "3.9.2\n"},
		{name: "consumer threads warning", rel: "3.9", main: ConsumerMain, args: "--bootstrap-server b:1 --topic t --messages 1 --threads 3 --version",
			stdout: "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test\n3.9.2\n"},
		{name: "consumer threads accepted", rel: "4.4", main: ConsumerMain, args: "--bootstrap-server b:1 --topic t --messages 1 --threads 3 --version",
			stdout: "4.4.0\n"},
		{name: "consumer bad number after header", rel: "3.9", main: ConsumerMain, args: "--bootstrap-server b:1 --topic t --messages abc",
			code: 1, stdout: consumerHeader + "\n", lastErr: "Cannot parse argument 'abc' of option messages"},
		{name: "consumer bad number after notice and header", rel: "4.4", main: ConsumerMain, args: "--bootstrap-server b:1 --topic t --messages abc",
			code: 1, stdout: "Warning: --messages is deprecated. Use --num-records instead.\n" + consumerHeader + "\n", lastErr: "Cannot parse argument 'abc' of option messages"},
		// Settings ConfigDef refuses: the message, then the exception (3.9, 4.4).
		{name: "consumer fetch.max.wait.ms=-1", rel: "3.9", main: ConsumerMain, args: "--bootstrap-server 127.0.0.1:1 --topic t --messages 1 --command-property fetch.max.wait.ms=-1",
			code: 1, stdout: consumerHeader + "\n", lastErr: "org.apache.kafka.common.config.ConfigException: Invalid value -1 for configuration fetch.max.wait.ms: Value must be at least 0"},
		{name: "consumer max.poll.records=0", rel: "4.4", main: ConsumerMain, args: "--bootstrap-server 127.0.0.1:1 --topic t --num-records 1 --command-property max.poll.records=0",
			code: 1, stdout: consumerHeader + "\n", lastErr: "org.apache.kafka.common.config.ConfigException: Invalid value 0 for configuration max.poll.records: Value must be at least 1"},
		{name: "consumer isolation.level=nope", rel: "3.9", main: ConsumerMain, args: "--bootstrap-server 127.0.0.1:1 --topic t --messages 1 --command-property isolation.level=nope",
			code: 1, stdout: consumerHeader + "\n", lastErr: "org.apache.kafka.common.config.ConfigException: Invalid value nope for configuration isolation.level: String must be one of: read_committed, read_uncommitted"},
		// 2.7.2: no --payload-monotonic, an Integer --throughput, the Scala
		// consumer (values read before the header, uncaught exceptions,
		// the version with its commit).
		{name: "producer payload group", rel: "2.7", main: ProducerMain, args: "--topic t --num-records 10 --throughput -1 " + props,
			code: 1, lastErr: "file is required"},
		{name: "producer fractional throughput", rel: "2.7", main: ProducerMain, args: "--topic t --num-records 10 --record-size 1 --throughput 0.5 " + props,
			code: 1, lastErr: `'0.5' to Integer (For input string: "0.5")`},
		{name: "consumer version", rel: "2.7", main: ConsumerMain, args: "--version", stdout: "2.7.2 (Commit:37a1cc36bf4d76f3)\n"},
		{name: "consumer bad number before header", rel: "2.7", main: ConsumerMain, args: "--bootstrap-server b:1 --topic t --messages abc",
			code: 1, lastErr: `Exception in thread "main" joptsimple.OptionArgumentConversionException: Cannot parse argument 'abc' of option messages`},
		{name: "consumer repeated option", rel: "2.7", main: ConsumerMain, args: "--bootstrap-server b:1 --topic t --topic u --messages 1",
			code: 1, lastErr: `Exception in thread "main" joptsimple.MultipleArgumentsForOptionException: Found multiple arguments for option topic, but you asked for only one`},
		{name: "consumer interval", rel: "2.7", main: ConsumerMain, args: "--bootstrap-server b:1 --topic t --messages 1 --reporting-interval 0",
			code: 1, lastErr: `Exception in thread "main" java.lang.IllegalArgumentException: Reporting interval must be greater than 0.`},
		{name: "unknown release", rel: "2.1", main: ProducerMain, args: "--help", code: 2,
			lastErr: "perfclones: PERFCLONES_KAFKA_VERSION=2.1 is not a release this tool emulates (known: 2.7, 3.9, 4.4)"},
		{name: "unknown release", rel: "5.0", main: ConsumerMain, args: "--version", code: 2,
			lastErr: "perfclones: PERFCLONES_KAFKA_VERSION=5.0 is not a release this tool emulates (known: 2.7, 3.9, 4.4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+tt.rel, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"COLUMNS": "80"}
			if tt.rel != "" {
				vars["PERFCLONES_KAFKA_VERSION"] = tt.rel
			}
			out, errOut, code := runMain(t, tt.main, vars, strings.Fields(tt.args)...)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if code != tt.code || out != tt.stdout || !strings.HasSuffix(lines[len(lines)-1], tt.lastErr) {
				t.Errorf("code %d (want %d)\nstdout %q\nwant   %q\nstderr %q\nwant it to end %q", code, tt.code, out, tt.stdout, errOut, tt.lastErr)
			}
			if tt.code == 2 && len(lines) != 1 {
				t.Errorf("unknown release: %d stderr lines, want 1", len(lines))
			}
		})
	}
	// The two "must be specified" lines name the release's options.
	_, e39, _ := runMain(t, ProducerMain, map[string]string{"COLUMNS": "200"}, strings.Fields("--topic t --num-records 10 --record-size 10 --throughput -1")...)
	_, e44, _ := runMain(t, ProducerMain, map[string]string{"COLUMNS": "200", "PERFCLONES_KAFKA_VERSION": "4.4"}, strings.Fields("--topic t --num-records 10 --record-size 10 --throughput -1")...)
	if !strings.HasSuffix(e39, "producer-performance: error: Either --producer-props or --producer.config must be specified.\n") ||
		!strings.HasSuffix(e44, "kafka-producer-perf-test: error: At least one of --bootstrap-server, --command-property, --producer-props, --producer.config or --command-config must be specified.\n") {
		t.Errorf("3.9: %q\n4.4: %q", e39, e44)
	}
}

// A file of delimiters only: 3.9 splits it into no payload, 4.4's Scanner
// finds one empty payload in "\n\n" but none in "\n"; no payload ends
// each release with its own exception, after the two lines (and 4.4's
// notice).
func TestPayloadFilePerRelease(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "delims.txt")
	if err := os.WriteFile(file, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := strings.Fields("--topic t --num-records 2 --throughput -1 --producer-props bootstrap.servers=127.0.0.1:1 --payload-file " + file)
	for _, tt := range []struct{ rel, stdout, stderr string }{
		{"3.9", "Reading payloads from: " + file + "\nNumber of messages read: 0\n",
			"Exception in thread \"main\" java.lang.IllegalArgumentException: no payload File Path or record Size or payload-monotonic option provided\n"},
		{"4.4", "Reading payloads from: " + file + "\nNumber of records read: 0\n" +
			"Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.\n",
			"Exception in thread \"main\" java.lang.IllegalArgumentException: No payload file, record size or payload-monotonic option provided.\n"},
	} {
		out, errOut, code := runMain(t, ProducerMain, map[string]string{"PERFCLONES_KAFKA_VERSION": tt.rel}, args...)
		if code != 1 || out != tt.stdout || errOut != tt.stderr {
			t.Errorf("%s: code %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q", tt.rel, code, out, tt.stdout, errOut, tt.stderr)
		}
	}
}

// The client defaults that changed under the tool: 2.7's producer is
// acks=1 without idempotence and names itself producer-1; 3.9's is
// idempotent with acks=all and linger.ms=0; 4.4's lingers 5 ms.
func TestProducerClientDefaultsPerRelease(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		rel        string
		acks       int16
		idempotent bool
		linger     time.Duration
		clientID   string
	}{
		{"2.7", 1, false, 0, "producer-1"},
		{"3.9", -1, true, 0, "perf-producer-client"},
		{"4.4", -1, true, 5 * time.Millisecond, "perf-producer-client"},
	} {
		rel := &Releases.Must(tt.rel).Diff.producer
		o, err := parseProducerOptions(strings.Fields("--topic t --num-records 10 --record-size 10 --throughput -1 --producer-props bootstrap.servers=127.0.0.1:1"), 80, rel)
		if err == nil {
			err = o.readProps(rel)
		}
		if err != nil {
			t.Fatal(fatalText(err))
		}
		s, err := newClientSettings(producerClient, o.props, func() string { return "T" })
		pc := &producerPlan{}
		if err == nil {
			err = s.applyProducer(pc, 10, rel)
		}
		if err != nil {
			t.Fatal(err)
		}
		if pc.acks != tt.acks || pc.idempotent != tt.idempotent || pc.linger != tt.linger || pc.clientID != tt.clientID {
			t.Errorf("%s: acks %v idempotent %v linger %v client.id %q", tt.rel, pc.acks, pc.idempotent, pc.linger, pc.clientID)
		}
	}
}
