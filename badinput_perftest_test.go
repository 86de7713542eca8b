package perfclones_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/perftest"
	"github.com/perfclones/perfclones/internal/testenv"
)

// The PerfTest bad-input table: ours emulating 2.22 beside PerfTest 2.22.1's
// jar on the local RabbitMQ node. A line is stored whole, with placeholders
// that the test fills in: $URI (the node's plain listener, user and
// password included), $TLSURI, $HOSTPORT (127.0.0.1:port of the plain
// listener) and $DIR (a directory holding the files of perftestBadFiles).
// The same placeholders stand for those values again in the recorded lines,
// so the table does not depend on the machine's ports or paths.
//
// A line that parses runs for real: perftestBadTail ends each one after one
// message per producer (-C 1) or one second (-z 1), whichever comes first,
// and sends it to an exchange of its own; the test deletes the exchanges and
// the named queues the lines declare when it ends (and the recording after
// each line, so the jar and ours find the same broker state).

// perftestBadTail ends a line that runs. commons-cli keeps the first value
// of an option given twice, so a case's own -h, -e, -C or -z wins.
var perftestBadTail = []string{"-h", "$URI", "-e", "badinput-x", "-C", "1", "-z", "1"}

// perftestBadFiles are written to $DIR for the PerfTestMulti lines and the
// options that read files.
var perftestBadFiles = map[string]string{
	"empty.js":        "",
	"garbage.js":      "this is not json",
	"object.js":       "{'name': 'x'}",
	"emptylist.js":    "[]",
	"noname.js":       "[{'type': 'simple', 'params': [{'time-limit': 1}]}]",
	"notype.js":       "[{'name': 'x', 'params': [{'time-limit': 1}]}]",
	"badtype.js":      "[{'name': 'x', 'type': 'bogus', 'params': [{'time-limit': 1}]}]",
	"noparams.js":     "[{'name': 'x', 'type': 'simple'}]",
	"paramsnum.js":    "[{'name': 'x', 'type': 'simple', 'params': 5}]",
	"unknownkey.js":   "[{'name': 'x', 'type': 'simple', 'uri': '$URI', 'params': [{'bogus-key': 1}]}]",
	"badvalue.js":     "[{'name': 'x', 'type': 'simple', 'uri': '$URI', 'params': [{'time-limit': 'abc'}]}]",
	"novars.js":       "[{'name': 'x', 'type': 'varying', 'uri': '$URI', 'params': [{'time-limit': 1}]}]",
	"down.js":         "[{'name': 'x', 'type': 'simple', 'uri': 'amqp://127.0.0.1:1', 'params': [{'time-limit': 1}]}]",
	"badutf8.js":      "[{'name': '\xff\xfe', 'type': 'simple', 'params': [{'time-limit': 1}]}]",
	"truncated.js":    "[{'name': 'x', 'type': 'simple', 'params': [{'time-limit': 1}",
	"simple.js":       "[{'name': 'x', 'type': 'simple', 'uri': '$URI', 'params': [{'time-limit': 1, 'exchange-name': 'badinput-x', 'producer-msg-count': 1}]}]",
	"queues.txt":      "badinput-qf-1\nbadinput-qf-2\n",
	"emptyqueues.txt": "",
	"body.bin":        "0123456789abcdef",
}

// perftestBadExchanges and perftestBadQueues are what the lines declare
// by name; the test deletes them.
var (
	perftestBadExchanges = []string{"badinput-x", "badinput-x-fanout", "badinput-x-topic", "badinput-x-headers", "badinput-x-bogus", "badinput-x2"}
	perftestBadQueues    = []string{"badinput-q", "badinput-q1", "badinput-q2", "badinput-qq", "badinput-sq", "badinput-exq",
		"badinput-q-0", "badinput-q-1", "badinput-q-2", "badinput-q-3", "badinput-q--1", "badinput-q-a", "badinput-q-1-x",
		"badinput-noformat", "badinput-qf-1", "badinput-qf-2", "badinput-pre", "\ufffd", "?", "badinput-\ufffd", "badinput-?"}
)

func perftestBadCases(*testing.T) [][]string {
	var cases [][]string
	// run is a line that may run: the case's words, then the tail.
	run := func(args ...string) { cases = append(cases, append(append([]string{}, args...), perftestBadTail...)) }
	// raw is a line as it is, for a value missing at the very end and
	// for the other classes bin/runjava is given.
	raw := func(args ...string) { cases = append(cases, args) }

	// Help, version and the other usages.
	for _, o := range []string{"-?", "--help", "-help", "--hel", "-v", "--version", "--vers", "-mh", "--metrics-help", "-env", "--environment-variables"} {
		run(o)
	}
	run("-mh", "-env")
	run("-v", "-?")
	run("--he")

	// Unknown options, odd dashes, case.
	for _, o := range []string{"--bogus", "-Z", "-bogus", "--bogus=1", "-", "---x", "--=1", "--Producers", "-V", "--producers-foo", "-xyz"} {
		run(o)
	}
	run("--", "-x", "1")
	run("foo", "bar")
	run("-x", "1", "extra", "words")

	// commons-cli's prefixes and forms of values.
	run("--produc", "1")
	run("--pmess", "1")
	run("-pmessages", "1")
	run("--producers=1")
	run("-x1", "-y1")
	run("-x=1")
	run("--uri=$URI")
	run("--con", "1")
	run("--confirm", "1")
	run("--consumers", "1", "--consumers", "2")
	run("-x", "2", "-x", "1")
	run("-qpf1")

	// A value missing: at the very end, and before another option.
	for _, o := range []string{"-x", "-y", "-z", "-C", "-D", "-s", "-h", "-H", "-u", "-k", "-t", "-qp", "-c", "-r", "-f", "-d", "-o", "--producers", "--uri"} {
		raw(append(append([]string{}, perftestBadTail...), o)...)
	}
	for _, o := range []string{"-x", "-h", "-qpf", "-i"} {
		run(o)
	}
	run("-e") // its value is optional

	// Numbers.
	numbers := []string{"0", "-1", "abc", "", "1.5", "99999999999", "2147483648", "0x10", " 5", "+3", "\xff", "1e3"}
	for _, o := range []string{"-x", "-y", "-z", "-C", "-D", "-s"} {
		for _, v := range numbers {
			run(o, v)
		}
	}
	for _, o := range []string{"-X", "-Y", "-c", "-q", "-i", "-b", "-A", "-ct", "-L", "-st"} {
		for _, v := range []string{"0", "-1", "abc", "2147483648"} {
			run(o, v)
		}
	}
	for _, v := range []string{"0", "-1", "abc", "1e3", " 5", "NaN", "Infinity", "1f", "0x10"} {
		run("-r", v)
	}
	run("-R", "abc")
	run("-s", "2147483647")
	run("-s", "1000000000")
	run("-q", "70000")
	run("-b", "99999")
	run("-M", "1")
	run("-x", "0", "-y", "0")
	run("-C", "1", "-D", "1")
	run("-D", "1", "-x", "0")
	run("-C", "2147483647")
	run("-z", "2147483647")

	// Empty and non-UTF-8 strings.
	for _, o := range []string{"-h", "-H", "-u", "-k", "-t", "-d", "-qa", "-mp", "-f", "-mf"} {
		run(o, "")
	}
	run("-e", "")
	run("-d", "\xff\xfe")
	run("-u", "badinput-\xff")
	run("-k", "\xff")
	run("-h", "amqp://\xff@127.0.0.1:1")

	// URIs.
	for _, u := range []string{
		"amqp://127.0.0.1:1", "amqp://bad:bad@$HOSTPORT", "$URI/nonexistent-vhost", "http://$HOSTPORT", "127.0.0.1",
		"amqp://127.0.0.1:99999", "amqp://[::1", "amqp://%zz@$HOSTPORT", "amqps://127.0.0.1:1", "amqp://127.0.0.1:abc",
		"amqp:///", "$TLSURI", "amqp://test:perfclones-test@$HOSTPORT/%2F", "amqp://test:wrong@$HOSTPORT",
	} {
		run("-h", u)
	}
	run("-H", "$URI,$URI")
	run("-H", ",")
	run("-H", "amqp://127.0.0.1:1")
	run("-H", "$URI", "-h", "amqp://127.0.0.1:1")
	run("-h", "$URI", "-h", "amqp://127.0.0.1:1")
	run("-h", "amqp://127.0.0.1:1", "-sst", "1")
	run("-h", "amqp://127.0.0.1:1", "-sst", "abc")
	run("-h", "amqp://127.0.0.1:1", "-dcr")

	// Queue patterns and other ways of naming queues.
	run("-qp", "badinput-q-%d")
	run("-qp", "badinput-q-%d", "-qpf", "1")
	run("-qpf", "1", "-qpt", "2")
	run("-qpt", "2")
	run("-qp", "badinput-q-%d", "-qpf", "3", "-qpt", "1")
	run("-qp", "badinput-q-%d", "-qpf", "1", "-qpt", "2")
	run("--queue-pattern", "badinput-q-%d", "--queue-pattern-from", "1", "--queue-pattern-to", "3", "-x", "2", "-y", "2")
	run("-qp", "badinput-q-%d", "-qpf", "0", "-qpt", "0")
	run("-qp", "badinput-q-%d", "-qpf", "-1", "-qpt", "-1")
	run("-qp", "badinput-q-%d", "-qpf", "a", "-qpt", "2")
	run("-qp", "badinput-q-%s", "-qpf", "1", "-qpt", "1")
	run("-qp", "badinput-noformat", "-qpf", "1", "-qpt", "2")
	run("-qp", "badinput-q-%d-%d", "-qpf", "1", "-qpt", "1")
	run("-qp", "badinput-q-%q", "-qpf", "1", "-qpt", "1")
	run("-qp", "badinput-q-%", "-qpf", "1", "-qpt", "1")
	run("-qp", "", "-qpf", "1", "-qpt", "1")
	run("-qp", "badinput-q-%d", "-qpf", "1", "-qpt", "2", "-u", "badinput-q")
	run("-qf", "$DIR/queues.txt")
	run("-qf", "$DIR/emptyqueues.txt")
	run("-qf", "$DIR/nonexistent.txt")
	run("-qf", "$DIR/queues.txt", "-qp", "badinput-q-%d", "-qpf", "1", "-qpt", "1")

	// Topology and flags.
	run("-u", "badinput-q1,badinput-q2")
	run("-u", ",")
	run("-u", "amq.gen-badinput")
	run("-u", "badinput-q", "-y", "0")
	run("-p", "-u", "badinput-pre")
	run("-qq")
	run("-qq", "-u", "badinput-qq")
	run("-sq", "-qq")
	run("-E", "-u", "badinput-exq")
	run("-E")
	for _, typ := range []string{"fanout", "topic", "headers", "bogus"} {
		run("-t", typ, "-e", "badinput-x-"+typ)
	}
	run("-e", "amq.direct")
	run("-e", "amq.default")
	run("-e", "amq.fanout", "-t", "direct")
	run("-e", "badinput-x2", "-t", "direct")
	for _, f := range [][]string{{"persistent"}, {"mandatory"}, {"bogus"}, {"persistent,mandatory"}, {"persistent", "-f", "mandatory"}} {
		run(append([]string{"-f"}, f...)...)
	}
	for _, v := range []string{"false", "bogus", "TRUE"} {
		run("-ad", v)
	}
	run("-na", "-re", "false")
	run("-a", "-A", "5")
	run("-A", "5", "-q", "1")
	run("-K", "-rkcs", "5")
	run("-k", "badinput-key")
	run("-sb")
	run("-c", "1", "-ct", "0")
	run("-ms")
	run("-mf", "compact")
	run("-mf", "bogus")
	run("-o", "$DIR/out.csv")
	run("-o", "$DIR/nonexistent/out.csv")
	run("-d", "badinput-id")
	run("-i", "2")
	for _, v := range []string{"0.05", "abc", "-1", "0.1"} {
		run("-P", v)
	}
	for _, v := range []string{"100", "100:0", "abc:1", "100:1", "-1:1"} {
		run("-vr", v)
	}
	run("-vs", "10:1")
	run("-vs", "0:1")
	run("-vl", "1:1")
	for _, v := range []string{"bogus", "empty", "idle", ""} {
		run("-ew", v)
	}
	run("-jb", "-bfc", "0")
	run("-jb", "-bc", "0")
	run("-jb")
	run("-B", "$DIR/nonexistent.bin")
	run("-B", "$DIR/body.bin")
	run("-qa", "x-max-length=10")
	run("-qa", "bogus")
	run("-qa", "=")
	run("-mp", "priority=5")
	run("-mp", "bogus")
	run("-mp", "priority=abc")
	run("-po")
	run("-S")
	run("-l")
	run("-cal", "bogus")
	run("--verbose")
	run("-niot", "2")

	// The other classes bin/runjava is given.
	multi := "com.rabbitmq.perf.PerfTestMulti"
	raw(multi)
	raw(multi, "$DIR/simple.js")
	raw(multi, "$DIR/simple.js", "$DIR/out.js", "extra")
	raw(multi, "$DIR/nonexistent.js", "$DIR/out.js")
	for _, f := range []string{"empty", "garbage", "object", "noname", "notype", "badtype", "noparams", "paramsnum", "unknownkey", "badvalue", "novars", "down", "badutf8", "truncated"} {
		raw(multi, "$DIR/"+f+".js", "$DIR/out.js")
	}
	raw(multi, "$DIR/emptylist.js", "$DIR/out.js")
	raw(multi, "$DIR/emptylist.js", "$DIR/nonexistent/out.js")
	raw(multi, "$DIR/simple.js", "$DIR/out.js")
	raw("com.rabbitmq.perf.Bogus")
	raw("com.rabbitmq.perf.PerfTest", "-?")
	raw("com.rabbitmq.perf.WebServer", "a", "b", "c")
	return cases
}

// perftestBadFixture is what a run of the table needs: the node, the
// directory of files and the placeholders' values.
type perftestBadFixture struct {
	env  testenv.RabbitMQEnv
	dir  string
	vals [][2]string // placeholder, value; longest value first for unexpand
}

func newPerfTestBadFixture(t *testing.T) *perftestBadFixture {
	env := testenv.RabbitMQ(t)
	f := &perftestBadFixture{env: env, dir: t.TempDir()}
	hostport := strings.TrimPrefix(env.URI, "amqp://")
	if i := strings.LastIndexByte(hostport, '@'); i >= 0 {
		hostport = hostport[i+1:]
	}
	hostport, _, _ = strings.Cut(hostport, "/")
	f.vals = [][2]string{{"$TLSURI", env.TLSURI}, {"$URI", env.URI}, {"$HOSTPORT", hostport}, {"$DIR", f.dir}}
	sort.SliceStable(f.vals, func(i, j int) bool { return len(f.vals[i][1]) > len(f.vals[j][1]) })
	for name, content := range perftestBadFiles {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(f.expand(content)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.cleanup(t)
	t.Cleanup(func() { f.cleanup(t) })
	return f
}

func (f *perftestBadFixture) expand(s string) string {
	for _, v := range f.vals {
		s = strings.ReplaceAll(s, v[0], v[1])
	}
	return s
}

func (f *perftestBadFixture) expandAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = f.expand(a)
	}
	return out
}

// unexpand puts the placeholders back into a tool's output.
func (f *perftestBadFixture) unexpand(s string) string {
	for _, v := range f.vals {
		s = strings.ReplaceAll(s, v[1], v[0])
	}
	return s
}

// cleanup deletes what the lines declare by name, in the default vhost
// and the predeclared one, and the files the lines write.
func (f *perftestBadFixture) cleanup(t *testing.T) {
	t.Helper()
	_ = os.Remove(filepath.Join(f.dir, "out.csv"))
	_ = os.Remove(filepath.Join(f.dir, "out.js"))
	conn, err := amqp.Dial(f.env.URI)
	if err != nil {
		t.Errorf("cleanup: dial: %v", err)
		return
	}
	defer conn.Close()
	// Deleting what does not exist is no error to RabbitMQ, so one
	// channel does it all (a fresh one if the broker closed it).
	ch, err := conn.Channel()
	for _, q := range perftestBadQueues {
		if err != nil || ch.IsClosed() {
			if ch, err = conn.Channel(); err != nil {
				continue
			}
		}
		_, _ = ch.QueueDelete(q, false, false, false)
	}
	for _, x := range perftestBadExchanges {
		if err != nil || ch.IsClosed() {
			if ch, err = conn.Channel(); err != nil {
				continue
			}
		}
		_ = ch.ExchangeDelete(x, false, false)
	}
}

// ours runs a line through the tool's Main (bin/runjava's dispatch
// included) as 2.22, with the placeholders put back in its output.
func (f *perftestBadFixture) ours(args []string) badOutcome {
	main := func(ctx context.Context, args []string, sys cli.IO) int {
		var out, errb lockedBuffer
		code := perftest.Tool.Main(ctx, args, cli.IO{Stdin: sys.Stdin, Stdout: &out, Stderr: &errb, Getenv: sys.Getenv})
		_, _ = sys.Stdout.Write([]byte(perftestNoise(f.unexpand(out.String()))))
		_, _ = sys.Stderr.Write([]byte(perftestNoise(f.unexpand(errb.String()))))
		return code
	}
	return runOursBad(main, f.expandAll(args), map[string]string{"PERFCLONES_PERFTEST_VERSION": "2.22"})
}

// original runs a line through PerfTest 2.22.1's jar (other classes with
// plain java -cp, as bin/runjava does).
func (f *perftestBadFixture) original(t *testing.T, args []string) badOutcome {
	argv := append([]string{f.env.ToolScript, "perftest"}, f.expandAll(args)...)
	if len(args) > 0 && strings.HasPrefix(args[0], "com.rabbitmq.perf.") {
		argv = append([]string{f.env.ToolScript, "java"}, f.expandAll(args)...)
	}
	r := runCommand(t, argv, 30*time.Second, false, "", nil)
	o := badOutcome{code: itoaRC(r), stdout: firstLine(perftestNoise(f.unexpand(r.stdout))), stderr: firstLine(perftestNoise(f.unexpand(r.stderr)))}
	if r.timedOut {
		o.code = "hang"
	}
	return o
}

// perftestNoise drops the lines a JVM prints on its own before the tool
// does (JAVA_TOOL_OPTIONS notices, VM warnings), which are no part of
// PerfTest's output and which ours never prints, and our own stderr notices
// of RabbitMQ flow control (connection.blocked): they report the shared
// broker's memory state at that moment, not what the line asked for.
func perftestNoise(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "Picked up JAVA_TOOL_OPTIONS") || strings.HasPrefix(l, "Picked up _JAVA_OPTIONS") ||
			strings.HasPrefix(l, "OpenJDK 64-Bit Server VM warning") ||
			strings.HasPrefix(l, "perfclones: connection ") && (strings.Contains(l, " blocked by the broker (flow control): ") || strings.HasSuffix(l, " unblocked by the broker\n")) {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}

func TestBadInputPerfTest(t *testing.T) {
	f := newPerfTestBadFixture(t)
	badSuite{
		tool: "perftest-2.22",
		header: "PerfTest bad input; the original is PerfTest 2.22.1's jar (scripts/perftest-tool) and ours runs as 2.22\n" +
			"(PERFCLONES_PERFTEST_VERSION=2.22), both on the local RabbitMQ node. Placeholders: $URI, $TLSURI and $HOSTPORT\n" +
			"are the node's listeners, $DIR a directory of the files the lines read (badinput_perftest_test.go).",
		cases: perftestBadCases,
		ours: func(t *testing.T, args []string) badOutcome {
			defer f.cleanup(t)
			return f.ours(args)
		},
		original: func(t *testing.T, args []string) badOutcome {
			defer f.cleanup(t)
			return f.original(t, args)
		},
	}.run(t)
}
