package perfclones_test

// The Kafka tools' bad-input tables: kafka-producer-perf-test and
// kafka-consumer-perf-test, each beside the 3.9.2 jar (the default
// release, tables kafka-*-perf-test.tsv) and beside the 4.4.0 jar
// (PERFCLONES_KAFKA_VERSION=4.4, tables kafka-*-perf-test-4.4.tsv).
//
// Placeholders in a line: $BOOT is the local broker, $TOPIC a topic the
// test creates (the consumer's holds a few records), $DIR a directory of
// property and payload files the test writes (kafkaBadFiles). A line that
// parses runs for real, so every run is tiny: a few records, a consumer
// --timeout of a few seconds, and a dead broker is a loopback port nothing
// listens on (127.0.0.1:1) with short client timeouts. No line names a
// host other than 127.0.0.1, [::1] and localhost.
//
// What is compared is what a script reading the output sees first:
//   - stdout: the first line.
//   - stderr: for the producer, argparse4j's "<prog>: error: ..." line when
//     there is one (the usage block above it is the same for every parse
//     error, so the first line would hide the message); otherwise the
//     first line that is not JVM noise. Noise is what the Java runtime and
//     the client's internals log and ours does not emulate: SLF4J's and the
//     JVM's own warnings, and log4j lines of classes other than the
//     client's configuration classes (NetworkClient's connection warnings,
//     for one). The configuration warnings ("The configuration 'x' was
//     supplied but isn't a known config") are kept: ours prints them too.
// Both sides go through the same selection; $DIR and $TOPIC are put back
// into the lines before numbers are masked.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/kafkaperf"
	"github.com/perfclones/perfclones/internal/shapes"
	"github.com/perfclones/perfclones/internal/testenv"
)

// kafkaBadJavaBound is how long a Java run may take while recording; one
// still going then hangs (--throughput 0 does).
const kafkaBadJavaBound = 25 * time.Second

// kafkaBadRelease is one release's pair of tables.
type kafkaBadRelease struct {
	name   string // PERFCLONES_KAFKA_VERSION for ours
	suffix string // of the table names
	java   string // scripts/kafka-tool's tool suffix
	jar    string
}

var kafkaBadReleases = []kafkaBadRelease{
	{name: "3.9", suffix: "", java: "39", jar: "3.9.2"},
	{name: "4.4", suffix: "-4.4", java: "", jar: "4.4.0"},
}

// kafkaBadEnv is what the placeholders stand for in one test run.
type kafkaBadEnv struct {
	boot, topic, dir string
}

func (e kafkaBadEnv) expand(args []string) []string {
	out := make([]string, len(args))
	r := strings.NewReplacer("$BOOT", e.boot, "$TOPIC", e.topic, "$DIR", e.dir)
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

var (
	slf4jLineRe = regexp.MustCompile(`^SLF4J(\(\w\))?: `)
	// jvmNoiseRe: the JVM's own warnings (OpenJDK, a heap or GC option).
	jvmNoiseRe = regexp.MustCompile(`^(OpenJDK .*VM warning: |WARNING: (A terminally deprecated|sun\.misc\.Unsafe|Please consider reporting|System::))`)
	// log4jConfigRe are the log4j lines ours prints too: the clients'
	// configuration warnings.
	log4jConfigRe = regexp.MustCompile(`\((org\.apache\.kafka\.clients\.(producer\.ProducerConfig|consumer\.ConsumerConfig|ClientUtils)|org\.apache\.kafka\.common\.config\.AbstractConfig)\)$`)
	// argparseErrRe is argparse4j's error line, whose spaces the
	// justification of a wrapped message widens.
	argparseErrRe = regexp.MustCompile(`^(producer-performance|kafka-producer-perf-test):\s+error:\s`)
)

// kafkaBadOutcome is a run's outcome as the Kafka tables record it (see
// the file comment).
func (e kafkaBadEnv) outcome(code, stdout, stderr string, producer bool) badOutcome {
	// An empty --payload-file names the working directory, which is the
	// checkout's and differs between machines: it is $CWD in the tables.
	cwd, _ := os.Getwd()
	r := strings.NewReplacer(e.dir, "$DIR", e.topic, "$TOPIC", cwd, "$CWD")
	stdout, stderr = r.Replace(stdout), r.Replace(stderr)
	var kept []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimRight(l, "\r")
		if producer && argparseErrRe.MatchString(l) {
			kept = []string{l}
			break
		}
		if slf4jLineRe.MatchString(l) || jvmNoiseRe.MatchString(l) || (log4jLineRe.MatchString(l) && !log4jConfigRe.MatchString(l)) {
			continue
		}
		kept = append(kept, l)
	}
	first := ""
	for _, l := range kept {
		if l != "" {
			first = l
			break
		}
	}
	if producer {
		// A window line comes first only when the run took reporting
		// interval (the JVM's first send can take seconds on a busy host):
		// timing, not input.
		var lines []string
		for _, l := range strings.Split(stdout, "\n") {
			if shapes.Mask(l) != producerWindowShape {
				lines = append(lines, l)
			}
		}
		stdout = strings.Join(lines, "\n")
	}
	return badOutcome{code: code, stdout: firstLine(stdout), stderr: shapes.Mask(first)}
}

// kafkaBadFiles are the files of $DIR: property files for
// --producer.config, --consumer.config and --command-config, and payload
// files.
func kafkaBadFiles(boot string) map[string]string {
	files := map[string]string{
		"empty.properties":        "",
		"boot.properties":         "bootstrap.servers=" + boot + "\n",
		"comments.properties":     "# only\n! comments\n\n",
		"garbage.properties":      "\x00\xff\xfe\x01=\x02\n\xc3\x28\n",
		"unicode.properties":      "bootstrap.servers=" + boot + "\nclient.id=\\u00zz\n",
		"continued.properties":    "bootstrap.servers=127.0.0.1:\\\n  " + strings.TrimPrefix(boot, "127.0.0.1:") + "\n",
		"spaces.properties":       "bootstrap.servers = " + boot + "   \n",
		"colon.properties":        "bootstrap.servers:" + boot + "\n",
		"dead.properties":         "bootstrap.servers=127.0.0.1:1\n",
		"unknown.properties":      "bootstrap.servers=" + boot + "\nno.such.setting=1\n",
		"lines.txt":               "alpha\nbeta\ngamma\n",
		"only-newlines.txt":       "\n\n\n\n",
		"only-commas.txt":         ",,,,",
		"empty.txt":               "",
		"crlf.txt":                "a\r\nb\r\n",
		"latin1.txt":              "caf\xe9\n\xff\xfe\n",
		"one.txt":                 "x",
		"big-line.txt":            strings.Repeat("y", 70000) + "\n",
		"producer-bad.properties": "bootstrap.servers=" + boot + "\nbatch.size=-1\n",
		"consumer-bad.properties": "max.poll.records=0\n",
	}
	for k, v := range kafkaBadSettings(true) {
		files["p-"+k+".properties"] = "bootstrap.servers=" + boot + "\n" + v + "\n"
	}
	for k, v := range kafkaBadSettings(false) {
		files["c-"+k+".properties"] = v + "\n"
	}
	return files
}

// kafkaBadSettings are settings the Java clients refuse (or take oddly),
// by a short name for their property file.
func kafkaBadSettings(producer bool) map[string]string {
	if producer {
		return map[string]string{
			"batch-neg":        "batch.size=-1",
			"linger-neg":       "linger.ms=-1",
			"inflight-0":       "max.in.flight.requests.per.connection=0",
			"idem-maybe":       "enable.idempotence=maybe",
			"retries-neg":      "retries=-1",
			"block-neg":        "max.block.ms=-1",
			"delivery-short":   "delivery.timeout.ms=1000",
			"acks-2":           "acks=2",
			"compression-foo":  "compression.type=foo",
			"buffer-neg":       "buffer.memory=-1",
			"batch-abc":        "batch.size=abc",
			"request-neg":      "request.timeout.ms=-1",
			"security-foo":     "security.protocol=FOO",
			"partitioner-nope": "partitioner.class=nope.Nope",
		}
	}
	return map[string]string{
		"wait-neg":       "fetch.max.wait.ms=-1",
		"poll-0":         "max.poll.records=0",
		"isolation-nope": "isolation.level=nope",
		"autocommit":     "enable.auto.commit=maybe",
		"session-abc":    "session.timeout.ms=abc",
		"minbytes-neg":   "fetch.min.bytes=-1",
		"security-foo":   "security.protocol=FOO",
		"assignor-nope":  "partition.assignment.strategy=nope.Nope",
		"unknown":        "no.such.setting=1",
	}
}

// replaceOpt returns base with the option name (and the value after it,
// when it takes one) removed and name vals appended.
func replaceOpt(base []string, name string, takesValue bool, vals ...string) []string {
	var out []string
	for i := 0; i < len(base); i++ {
		if base[i] == name {
			if takesValue {
				i++
			}
			continue
		}
		out = append(out, base[i])
	}
	return append(append(out, name), vals...)
}

func without(base []string, names ...string) []string {
	var out []string
	for i := 0; i < len(base); i++ {
		drop := false
		for _, n := range names {
			if base[i] == n {
				drop = true
			}
		}
		if drop {
			i++ // every option this is used with takes a value
			continue
		}
		out = append(out, base[i])
	}
	return out
}

// kafkaBadNumbers are odd values for a numeric option.
var kafkaBadNumbers = []string{"", "0", "-1", "abc", "1e3", "99999999999999999999", "0x10", " 5", "\xff", "+3", "1.5", "-1.5", "2147483648"}

// producerBadCases are the producer's lines for release rel.
func producerBadCases(rel kafkaBadRelease) [][]string {
	props, config := "--producer-props", "--producer.config"
	if rel.name != "3.9" {
		props, config = "--command-property", "--command-config"
	}
	base := []string{"--topic", "$TOPIC", "--num-records", "2", "--record-size", "10", "--throughput", "-1", props, "bootstrap.servers=$BOOT"}
	var cases [][]string
	add := func(args ...string) { cases = append(cases, args) }
	// withProps: the base with more client properties.
	withProps := func(p ...string) []string { return append(append([]string{}, base...), p...) }
	head := base[:len(base)-2] // without the properties

	add(base...)
	for _, opt := range []string{"--num-records", "--record-size", "--throughput", "--transaction-duration-ms", "--warmup-records", "--reporting-interval"} {
		for _, v := range kafkaBadNumbers {
			if opt == "--num-records" && v == "2147483648" {
				continue // a run of two billion records
			}
			if opt == "--record-size" && v == "2147483648" {
				v = "2000000" // larger than max.request.size
			}
			add(append(replaceOpt(head, opt, true, v), base[len(base)-2:]...)...)
		}
		add(append(append([]string{}, base...), opt)...) // its value missing at the end
	}
	for _, v := range []string{"0.5", "NaN", "Infinity", "-Infinity", "1e308", "0x1p3", "5d", "-0", "1_000"} {
		add(append(replaceOpt(head, "--throughput", true, v), base[len(base)-2:]...)...)
	}
	add(append(replaceOpt(head, "--throughput", true, "0"), base[len(base)-2:]...)...)
	// Unknown options, prefixes, help.
	for _, flags := range [][]string{
		{"--foo"}, {"--foo=x"}, {"-x"}, {"--"}, {"-"}, {"word"}, {"--topicc", "x"}, {"--TOPIC", "x"}, {"-h"}, {"--help"},
		{"--h"}, {"--he"}, {"--version"}, {"-help"}, {"--num", "2"}, {"--nu", "2"}, {"--p", "x"}, {"--producer", "x"},
		{"--payload", "x"}, {"--record", "5"}, {"--trans", "5"}, {"--thr", "5"}, {"--print"}, {"--print-metrics=true"},
		{"--payload-monotonic"}, {"--payload-monotonic", "--payload-monotonic"}, {"--print-metrics", "--print-metrics"},
		{"--topic"},
		{"--topic", "x", "--topic", "$TOPIC"}, {"--num-records", "1", "--num-records", "2"}, {"--record-size", "5", "--record-size", "7"},
		{"--bootstrap-server", "$BOOT"}, {"--key-distribution", "foo"}, {"--key-distribution", "range"},
		{"--key-distribution", "random", "--record-key-range", "0"}, {"--record-key-range", "5"}, {"--random-seed", "x"},
		{"--transactional-id", "bad-input-txn"}, {"--transactional-id", ""}, {"--transaction-duration-ms", "100"},
		{"--payload-delimiter", ","}, {"--payload-delimiter"},
	} {
		line := append(append([]string{}, head...), flags...)
		add(append(line, base[len(base)-2:]...)...)
	}
	// Invalid topic names: Java fails each record and waits for metadata
	// up to max.block.ms.
	for _, topic := range []string{"--topic=", "", "\xff", "a b", strings.Repeat("t", 250), "..", "bad/topic"} {
		line := append([]string{}, head...)
		if topic == "--topic=" {
			line = append(line, topic)
		} else {
			line = append(line, "--topic", topic)
		}
		add(append(line, props, "bootstrap.servers=$BOOT", "max.block.ms=1500")...)
	}
	add("--help", "--foo")
	add("--foo", "--help")
	add("--topic", "t", "-h")
	add()
	add("")
	add("--topic", "$TOPIC")
	add("--num-records", "2", "--record-size", "1")
	add(without(base, props)...)
	add(without(base, "--record-size")...)
	add(without(base, "--topic")...)
	add(without(base, "--throughput")...)
	add(append(append([]string{}, base...), "--payload-file", "$DIR/lines.txt")...)
	add(append(append([]string{}, base...), "--payload-monotonic")...)
	// --producer-props and its files.
	for _, p := range []string{"a", "a=b=c", "a=", "=b", "=", "", "bootstrap.servers=", "\xff=1", "no.such.setting=1",
		"acks=all", "acks=ALL", "acks=-1", "acks=0", "acks=2", "acks= 1", "batch.size=2147483648", "linger.ms=abc",
		"max.in.flight.requests.per.connection=6", "enable.idempotence=TRUE", "enable.idempotence=true", "retries=0",
		"compression.type=GZIP", "compression.type=gzip", "max.request.size=0", "max.request.size=-1", "send.buffer.bytes=-2",
		"receive.buffer.bytes=-2", "reconnect.backoff.ms=-1", "client.dns.lookup=foo", "client.id=\xff", "metadata.max.age.ms=abc",
		"transaction.timeout.ms=abc", "retry.backoff.ms=-1", "sasl.jaas.config=x", "key.serializer=nope"} {
		add(withProps(p)...)
	}
	for _, p := range kafkaBadSettings(true) {
		add(withProps(p)...)
	}
	add(withProps("enable.idempotence=true", "acks=1")...)
	add(withProps("enable.idempotence=true", "max.in.flight.requests.per.connection=6")...)
	add(withProps("delivery.timeout.ms=1000", "linger.ms=0", "request.timeout.ms=1000")...)
	add(withProps("security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN")...)
	add(append(append([]string{}, head...), props)...)
	add(append(append([]string{}, head...), props, "--topic", "$TOPIC")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=127.0.0.1:1", "max.block.ms=1500")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=localhost:1", "max.block.ms=1500")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=[::1]:1", "max.block.ms=1500")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=127.0.0.1")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=127.0.0.1:99999")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=,")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=localhost:"+"$PORT")...)
	add(append(append([]string{}, head...), props, "bootstrap.servers=$BOOT", props, "acks=1")...)
	for _, f := range []string{"$DIR/missing.properties", "$DIR", "", "$DIR/empty.properties", "$DIR/boot.properties", "$DIR/comments.properties",
		"$DIR/garbage.properties", "$DIR/unicode.properties", "$DIR/continued.properties", "$DIR/spaces.properties", "$DIR/colon.properties",
		"$DIR/unknown.properties", "$DIR/producer-bad.properties"} {
		add(append(append([]string{}, head...), config, f)...)
	}
	add(append(append([]string{}, head...), config, "$DIR/dead.properties", props, "max.block.ms=1500")...)
	add(append(append([]string{}, head...), config, "$DIR/producer-bad.properties", props, "batch.size=100")...)
	add(append(append([]string{}, head...), config)...)
	for k := range kafkaBadSettings(true) {
		add(append(append([]string{}, head...), config, "$DIR/p-"+k+".properties")...)
	}
	// Payload files.
	payload := func(extra ...string) []string {
		line := without(base, "--record-size")
		return append(line, extra...)
	}
	for _, f := range []string{"lines.txt", "only-newlines.txt", "empty.txt", "crlf.txt", "latin1.txt", "one.txt", "big-line.txt", "missing.txt"} {
		add(payload("--payload-file", "$DIR/"+f)...)
	}
	add(payload("--payload-file", "$DIR")...)
	add(payload("--payload-file", "")...)
	add(payload("--payload-file", "$DIR/only-commas.txt", "--payload-delimiter", ",")...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-delimiter", "")...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-delimiter", "(")...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-delimiter", "[a-")...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-delimiter", `\n`)...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-delimiter", `\\n`)...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-delimiter", "a|e")...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-delimiter", `(?<=a)`)...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-monotonic")...)
	add(payload("--payload-file", "$DIR/lines.txt", "--record-size", "5")...)
	add(payload("--payload-file", "$DIR/lines.txt", "--payload-file", "$DIR/one.txt")...)
	sortCases(cases)
	return cases
}

// consumerBadCases are the consumer's lines for release rel.
func consumerBadCases(rel kafkaBadRelease) [][]string {
	count := "--messages"
	if rel.name != "3.9" {
		count = "--num-records"
	}
	base := []string{"--bootstrap-server", "$BOOT", "--topic", "$TOPIC", count, "1", "--timeout", "3000"}
	var cases [][]string
	add := func(args ...string) { cases = append(cases, args) }
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }

	add(base...)
	for _, opt := range []string{count, "--fetch-size", "--socket-buffer-size", "--reporting-interval", "--timeout", "--threads", "--num-fetch-threads"} {
		for _, v := range kafkaBadNumbers {
			if opt == count && (v == "99999999999999999999" || v == "2147483648") {
				// More than the topic holds: the run waits for --timeout.
				add(replaceOpt(replaceOpt(base, "--timeout", true, "1500"), opt, true, v)...)
				continue
			}
			if opt == "--timeout" && v == "" {
				continue // --timeout takes an optional value
			}
			add(replaceOpt(base, opt, true, v)...)
		}
		add(append(without(base, opt), opt)...) // its value missing at the end
	}
	for _, flags := range [][]string{
		{"--foo"}, {"--foo=x"}, {"-x"}, {"--"}, {"-"}, {"word"}, {"--help"}, {"-h"}, {"--version"}, {"--h"}, {"--he"}, {"--hel"},
		{"--ver"}, {"--t", "x"}, {"--num", "1"}, {"--mess", "1"}, {"-topic", "x"}, {"--print-metrics=x"}, {"--from-latest", "--from-latest"},
		{"--topic", "x"}, {"--group", ""}, {"--group", "\xff"}, {"--group", "bad input group"}, {"--date-format", ""}, {"--date-format", "'"},
		{"--date-format", "q"}, {"--date-format", "\xff"}, {"--date-format", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"}, {"--hide-header"},
		{"--show-detailed-stats"}, {"--show-detailed-stats", "--hide-header"}, {"--print-metrics"}, {"--from-latest"},
		{"--num-records", "1"}, {"--messages", "1"}, {"--broker-list", "$BOOT"}, {"--include", ".*"}, {"--include", "["},
		{"--command-config", "$DIR/empty.properties"}, {"--consumer.config", "$DIR/empty.properties", "--command-config", "$DIR/empty.properties"},
		{"--timeout"}, {"--bootstrap"},
	} {
		add(with(flags...)...)
	}
	add()
	add("")
	add("--version", "--foo")
	add("--foo", "--version")
	add("--help", "--version")
	add(without(base, "--bootstrap-server")...)
	add(without(base, "--topic")...)
	add(without(base, count)...)
	add(replaceOpt(without(base, "--bootstrap-server"), "--broker-list", true, "$BOOT")...)
	add("--topic", "$TOPIC", count, "1", "--bootstrap-server")
	for _, b := range []string{"127.0.0.1:1", "localhost:1", "[::1]:1", "127.0.0.1", "127.0.0.1:99999", "", ",", "$BOOT,127.0.0.1:1", "localhost:$PORT"} {
		add(replaceOpt(replaceOpt(base, "--timeout", true, "1500"), "--bootstrap-server", true, b)...)
	}
	topicOf := func(topic string) []string { return replaceOpt(base, "--topic", true, topic) }
	add(topicOf("")...)
	add(topicOf("\xff")...)
	add(topicOf("a b")...)
	add(topicOf(strings.Repeat("t", 250))...)
	for _, re := range []string{"$TOPIC", "(?=z)", `\p{javaLowerCase}+`, `$TOPIC\Z`, "(", "*", `[[:alpha:]]`, `(?i)` + "$TOPIC", `\Q$TOPIC\E`} {
		add(replaceOpt(without(base, "--topic"), "--include", true, re)...)
	}
	add(with("--include", "$TOPIC")...)
	// Files and properties.
	for _, f := range []string{"$DIR/missing.properties", "$DIR", "", "$DIR/empty.properties", "$DIR/comments.properties",
		"$DIR/garbage.properties", "$DIR/unicode.properties", "$DIR/spaces.properties", "$DIR/unknown.properties", "$DIR/consumer-bad.properties"} {
		add(with("--consumer.config", f)...)
	}
	add(with("--consumer.config")...)
	for k := range kafkaBadSettings(false) {
		add(with("--consumer.config", "$DIR/c-"+k+".properties")...)
	}
	for _, p := range []string{"a", "a=b=c", "=b", "", "fetch.max.wait.ms=-1", "max.poll.records=0", "isolation.level=nope",
		"isolation.level=READ_COMMITTED", "enable.auto.commit=maybe", "group.id=x", "auto.offset.reset=foo", "heartbeat.interval.ms=-1",
		"fetch.max.bytes=-1", "max.poll.interval.ms=0", "client.id=", "request.timeout.ms=-1", "default.api.timeout.ms=-1",
		"group.protocol=nope", "no.such.setting=1", "bootstrap.servers=127.0.0.1:1"} {
		add(with("--command-property", p)...)
	}
	add(with("--command-property", "max.poll.records=5", "--command-property", "fetch.max.wait.ms=100")...)
	sortCases(cases)
	return cases
}

// sortCases keeps the cases in the order written but drops duplicates.
func sortCases(cases [][]string) {
	seen := map[string]bool{}
	n := 0
	for _, c := range cases {
		k := quoteWords(c)
		if seen[k] {
			continue
		}
		seen[k] = true
		cases[n] = c
		n++
	}
	for i := n; i < len(cases); i++ {
		cases[i] = nil
	}
}

func compact(cases [][]string) [][]string {
	var out [][]string
	for _, c := range cases {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

func TestBadInputKafka(t *testing.T) {
	env := testenv.Kafka(t)
	k := &kafkaTools{env: env}
	_, port, _ := strings.Cut(env.Bootstrap, ":")
	dir := t.TempDir()
	for name, text := range kafkaBadFiles(env.Bootstrap) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addrs := []string{env.Bootstrap}
	producerTopic := createTopic(t, addrs, "badinput-p", 1, 1, nil)
	consumerTopic := createTopic(t, addrs, "badinput-c", 1, 1, nil)
	fillTopic(t, addrs, consumerTopic, 20)

	for _, rel := range kafkaBadReleases {
		for _, producer := range []bool{true, false} {
			tool, main, topic := "kafka-producer-perf-test", cli.MainFunc(kafkaperf.ProducerMain), producerTopic
			cases := producerBadCases(rel)
			if !producer {
				tool, main, topic = "kafka-consumer-perf-test", kafkaperf.ConsumerMain, consumerTopic
				cases = consumerBadCases(rel)
			}
			cases = compact(cases)
			e := kafkaBadEnv{boot: env.Bootstrap, topic: topic, dir: dir}
			expand := func(args []string) []string {
				out := e.expand(args)
				for i := range out {
					out[i] = strings.ReplaceAll(out[i], "$PORT", port)
				}
				return out
			}
			ourEnv := map[string]string{"COLUMNS": "80"}
			if rel.name != "3.9" {
				ourEnv["PERFCLONES_KAFKA_VERSION"] = rel.name
			}
			javaTool := "java:" + strings.TrimPrefix(strings.TrimSuffix(tool, "-perf-test"), "kafka-") + rel.java
			java := &kafkaBadJava{cases: cases, table: tool + rel.suffix, run: func(t *testing.T, args []string) badOutcome {
				r := runCommand(t, k.argv(javaTool, expand(args)), kafkaBadJavaBound, false, "", []string{"COLUMNS=80"})
				code := itoaRC(r)
				if r.timedOut {
					code = "hang"
				}
				return e.outcome(code, r.stdout, r.stderr, producer)
			}}
			t.Run(tool+rel.suffix, func(t *testing.T) {
				start := time.Now()
				badSuite{
					tool: tool + rel.suffix,
					header: fmt.Sprintf("%s bad input beside Kafka's %s jar (scripts/kafka-tool %s), ours with PERFCLONES_KAFKA_VERSION=%s.\n"+
						"$BOOT: the local broker; $TOPIC: a fresh topic (the consumer's holds 20 records); $DIR: the test's files\n"+
						"(badinput_kafka_test.go). stderr: argparse4j's error line, else the first line after JVM noise (see the test).",
						tool, rel.jar, strings.TrimPrefix(javaTool, "java:"), rel.name),
					cases: func(*testing.T) [][]string { return cases },
					ours: func(t *testing.T, args []string) badOutcome {
						code, stdout, stderr := runOursBadText(main, expand(args), ourEnv)
						return e.outcome(code, stdout, stderr, producer)
					},
					original: java.outcome,
				}.run(t)
				t.Logf("%s: %d lines in %v", tool+rel.suffix, len(cases), time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// kafkaBadJava runs the Java tool on every case, a few JVMs at a time,
// the first time one is asked for (only when recording), and then answers
// from what it recorded. Transactional lines run one at a time after the
// others: those without a --transactional-id share Java's default id and
// would fence each other. With PERFCLONES_BADINPUT_ONLY=REGEX only new
// lines and those whose quoted arguments, a tab and the recorded exit
// code match are run again; the others keep what the table holds (so a
// regex matching nothing re-checks only ours).
type kafkaBadJava struct {
	cases [][]string
	run   func(t *testing.T, args []string) badOutcome
	table string // the table's name, for the old outcomes
	once  sync.Once
	got   map[string]badOutcome
}

// kafkaBadJVMs is how many Java runs go at once while recording.
const kafkaBadJVMs = 3

func (j *kafkaBadJava) outcome(t *testing.T, args []string) badOutcome {
	j.once.Do(func() { j.recordAll(t) })
	o, ok := j.got[quoteWords(args)]
	if !ok {
		o = j.run(t, args)
	}
	return o
}

func (j *kafkaBadJava) recordAll(t *testing.T) {
	j.got = map[string]badOutcome{}
	var only *regexp.Regexp
	if re := os.Getenv("PERFCLONES_BADINPUT_ONLY"); re != "" {
		only = regexp.MustCompile(re)
		if _, err := os.Stat(badTablePath(j.table)); err == nil {
			for _, l := range readBadTable(t, j.table) {
				o := l.original
				if o.code == "0" && o.stdout == producerWindowShape {
					o.stdout = producerFinalShape // see kafkaBadEnv.outcome
				}
				j.got[l.key()] = o
			}
		}
	}
	var mu sync.Mutex
	var serial [][]string
	work := make(chan []string)
	var wg sync.WaitGroup
	for range kafkaBadJVMs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				o := j.run(t, c)
				mu.Lock()
				j.got[quoteWords(c)] = o
				mu.Unlock()
			}
		}()
	}
	for _, c := range j.cases {
		k := quoteWords(c)
		if o, ok := j.got[k]; ok && only != nil && !only.MatchString(k+"\t"+o.code) {
			continue
		}
		if strings.Contains(k, "transaction") {
			serial = append(serial, c)
			continue
		}
		work <- c
	}
	close(work)
	wg.Wait()
	for _, c := range serial {
		j.got[quoteWords(c)] = j.run(t, c)
	}
}

// fillTopic writes n small records to topic.
func fillTopic(t *testing.T, addrs []string, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ClientID("perfclones-badinput-test"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatalf("producer %v: %v", addrs, err)
	}
	defer cl.Close()
	records := make([]*kgo.Record, n)
	for i := range records {
		records[i] = &kgo.Record{Value: fmt.Appendf(nil, "record %d", i)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("fill %s: %v", topic, err)
	}
}
