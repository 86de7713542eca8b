package perftest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/testenv"
)

// TestRunInProcess runs whole runs in-process against the local node, so
// that the race detector sees the workers, the printer and the summary.
func TestRunInProcess(t *testing.T) {
	env := testenv.RabbitMQ(t)
	for _, tc := range []struct {
		rel  string
		args []string
		want []string
	}{
		{"2.22", []string{"-h", env.URI, "-e", "perfclones-inproc-222", "-x", "2", "-y", "2", "-z", "2", "-c", "20", "-f", "mandatory", "-mf", "compact"},
			[]string{"test stopped (Reached time limit)", "confirm latency min/median/75th/95th/99th "}},
		{"2.18", []string{"-h", env.URI, "-e", "perfclones-inproc-218", "-x", "1", "-y", "1", "-C", "2000", "-D", "2000", "-z", "30", "-l"},
			[]string{"Producer reached message limit", "Consumer reached message limit", "receiving rate avg: "}},
		{"2.18", []string{"-h", env.URI, "-e", "perfclones-inproc-218", "-x", "1", "-y", "1", "-C", "300", "-ew", "idle", "-z", "30"},
			[]string{"Consumer is idle for more than 1 second", "Producer reached message limit"}},
		{"2.18", []string{"-h", env.URI, "-e", "perfclones-inproc-218", "-x", "1", "-y", "1", "-P", "0.25", "-m", "2", "-n", "2", "-z", "2"},
			[]string{", sent: 4.0 msg/s, received: 4.0 msg/s", "test stopped (Reached time limit)"}},
	} {
		code, stdout, stderr := runMain(t, tc.rel, tc.args, nil)
		if code != 0 {
			t.Fatalf("%s %v: code %d\n%s%s", tc.rel, tc.args, code, stdout, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s %v: no %q in\n%s", tc.rel, tc.args, w, stdout)
			}
		}
	}
}

// TestFirstIntervalLatency: at a rate far below a batch a second, the
// first interval line shows its own messages' consumer and confirm
// latency, as the jar's does, not zeros.
func TestFirstIntervalLatency(t *testing.T) {
	env := testenv.RabbitMQ(t)
	code, stdout, stderr := runMain(t, "2.22", []string{"-h", env.URI, "-e", "perfclones-first-interval", "-x", "1", "-y", "1",
		"-r", "20", "-prsd", "0", "-c", "5", "-z", "2"}, nil)
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, stdout, stderr)
	}
	first := lineWith(stdout, ", time 1.")
	if first == "" || strings.Contains(first, "consumer latency: 0/0/0/0/0 ") || strings.Contains(first, "confirm latency: 0/0/0/0/0 ") {
		t.Errorf("the first interval line has no latency:\n%s", stdout)
	}
}

// TestMessageOptionsInProcess: what -B, -T, -mp, -jb, -rkcs, -po, -vr, -vl,
// --verbose, -niot and -udsc do to a run, seen in its output or by a
// consumer of our own on the broker.
func TestMessageOptionsInProcess(t *testing.T) {
	env := testenv.RabbitMQ(t)
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.txt"), filepath.Join(dir, "two.txt")
	_ = os.WriteFile(one, []byte("hello body one"), 0o644)
	_ = os.WriteFile(two, []byte("second"), 0o644)
	base := func(exchange string, more ...string) []string {
		return append([]string{"-h", env.URI, "-e", "perfclones-msgopt-" + exchange}, more...)
	}
	count := func(s, sub string) int { return strings.Count(s, sub) }
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		check func(stdout, stderr string) string // "" when right
	}{
		{"body files in turn with their content type", base("files", "-x", "1", "-y", "1", "-C", "3", "-D", "3", "-r", "100", "-B", one+","+two, "-T", "text/plain", "--verbose-full"), 0,
			func(out, _ string) string {
				for i, body := range []string{"hello body one", "second", "hello body one"} {
					want := "delivery tag = " + strconv.Itoa(i+1) + ", properties = {content-type = text/plain, headers = {timestamp = "
					line := lineWith(out, "consumer 0: received message, timestamp = ", want)
					if line == "" || !strings.HasSuffix(line, "}}, body = "+body) {
						return "no received line for body " + body
					}
				}
				// (-r keeps the run long enough for the summary's latency line.)
				if !strings.Contains(out, "consumer latency min/median/75th/95th/99th ") || strings.Contains(out, "latency min/median/75th/95th/99th 0/0/0/0/0") {
					return "no latency from the timestamp header"
				}
				return ""
			}},
		{"message properties and headers reach the consumer", base("mp", "-x", "1", "-y", "1", "-C", "1", "-D", "1", "--verbose-full",
			"-mp", "priority=5,appId=perf,myheader=abc,num=42,deliveryMode=2,messageId=m-1"), 0,
			func(out, _ string) string {
				if lineWith(out, "consumer 0: received message", "properties = {headers = {num = 42, myheader = abc}, delivery-mode = 2, priority = 5, message-id = m-1, app-id = perf}, body = [sequence = 0, timestamp = ") == "" {
					return "the consumer did not get -mp's properties"
				}
				return ""
			}},
		{"a bad property fails as the jar does", base("mpbad", "-x", "1", "-y", "1", "-C", "1", "-mp", "priority=abc"), 1,
			func(out, errs string) string {
				if !strings.HasSuffix(out, "java.lang.ClassCastException: class java.lang.String cannot be cast to class java.lang.Number (java.lang.String and java.lang.Number are in module java.base of loader 'bootstrap')\ntest stopped\n") ||
					!strings.Contains(out, "starting producer #0, channel #0\n") {
					return "not the jar's failure after the producer's start line"
				}
				return ""
			}},
		{"an empty -B is one empty file name, as Java splits it", base("bempty", "-x", "1", "-y", "1", "-C", "1", "-B", ""), 1,
			func(_, errs string) string {
				if errs != "Main thread caught exception: java.lang.IllegalArgumentException:  isn't a valid body file.\n" {
					return "stderr " + errs
				}
				return ""
			}},
		{"random JSON bodies", base("json", "-x", "1", "-y", "1", "-C", "4", "-D", "4", "-jb", "-s", "300", "-bfc", "5", "-bc", "2", "--verbose-full"), 0,
			func(out, _ string) string {
				bodies := map[string]bool{}
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, "consumer 0: received message") {
						b := l[strings.Index(l, ", body = ")+9:]
						var doc map[string]string
						if json.Unmarshal([]byte(b), &doc) != nil || len(b) < 300 || !strings.Contains(l, "content-type = application/json") {
							return "not a JSON body of 300 bytes or more: " + b
						}
						bodies[b] = true
					}
				}
				if len(bodies) == 0 || len(bodies) > 2 {
					return fmt.Sprintf("%d distinct bodies from -bc 2", len(bodies))
				}
				return ""
			}},
		// -prsd 0: no random start delay of up to 1 s (a rate's default)
		// to eat into the 2 s these runs count over.
		{"polling with an interval", base("poll", "-x", "1", "-y", "1", "-r", "200", "-prsd", "0", "-po", "-pi", "250", "-z", "2", "--verbose"), 0,
			func(out, _ string) string {
				if n := count(out, "consumer 0: received message"); n < 3 || n > 10 {
					return fmt.Sprintf("%d gets in 2 s with -pi 250", n)
				}
				return ""
			}},
		{"variable rate", base("vr", "-x", "1", "-y", "0", "-prsd", "0", "-vr", "20:1", "-vr", "0:5", "-z", "2", "--verbose"), 0,
			func(out, _ string) string {
				if n := count(out, "publisher 0: message published"); n < 15 || n > 25 {
					return fmt.Sprintf("%d messages published at 20 msg/s then 0", n)
				}
				return ""
			}},
		{"variable consumer latency", base("vl", "-x", "1", "-y", "1", "-r", "100", "-prsd", "0", "-vl", "200000:5", "-z", "2", "--verbose"), 0,
			func(out, _ string) string {
				if n := count(out, "consumer 0: received message"); n < 5 || n > 12 {
					return fmt.Sprintf("%d messages consumed in 2 s at 200 ms each", n)
				}
				return ""
			}},
		{"confirms in verbose mode", base("confirm", "-x", "1", "-y", "0", "-C", "3", "-c", "10", "--verbose"), 0,
			func(out, _ string) string {
				if count(out, "publisher 0: message confirmed, type = ack, timestamp = ") != 3 || lineWith(out, "message published", "publishing ID = 3") == "" {
					return "no confirm lines"
				}
				return ""
			}},
		{"NIO threads are checked", base("nio", "-x", "1", "-y", "1", "-C", "1", "-niot", "0", "-niotp", "2"), 1,
			func(_, errs string) string {
				if errs != "Main thread caught exception: java.lang.IllegalArgumentException: NIO number of threads and executor must be greater than 0: 0, 2\n" {
					return "stderr " + errs
				}
				return ""
			}},
		{"NIO threads that pass change nothing", base("nio2", "-x", "1", "-y", "1", "-C", "5", "-D", "5", "-niot", "2"), 0,
			func(out, errs string) string {
				if errs != "" || !strings.Contains(out, "Producer reached message limit") {
					return "the run did not go as without -niot"
				}
				return ""
			}},
		{"the default SSL context does not trust the node's CA", []string{"-h", env.TLSURI, "-x", "1", "-y", "1", "-z", "2", "-udsc"}, 1,
			func(out, errs string) string {
				const pkix = "PKIX path building failed: sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid certification path to requested target"
				if errs != "Main thread caught exception: javax.net.ssl.SSLHandshakeException: "+pkix+"\n" {
					return "stderr " + errs
				}
				if !strings.Contains(out, "[main] ERROR c.r.client.impl.SocketFrameHandler - TLS connection failed: "+pkix+"\n") ||
					!strings.Contains(out, "\nCaused by: sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid certification path to requested target\n") {
					return "stdout lacks the jar's handshake lines"
				}
				return ""
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, "2.22", tc.args, nil)
			if code != tc.code {
				t.Fatalf("code %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			if why := tc.check(stdout, stderr); why != "" {
				t.Errorf("%s\nstdout:\n%s\nstderr:\n%s", why, stdout, stderr)
			}
		})
	}
}

// TestRoutingKeyCacheInProcess: -K -rkcs 3 sends 30 messages with exactly
// 3 routing keys, seen by a queue of our own bound with "#".
func TestRoutingKeyCacheInProcess(t *testing.T) {
	env := testenv.RabbitMQ(t)
	conn, err := amqp.Dial(env.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	const exchange = "perfclones-msgopt-rkcs"
	_ = ch.ExchangeDelete(exchange, false, false)
	if err := ch.ExchangeDeclare(exchange, "topic", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(q.Name, "#", exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain(t, "2.22", []string{"-h", env.URI, "-t", "topic", "-e", exchange, "-x", "1", "-y", "0", "-C", "30", "-K", "-rkcs", "3"}, nil)
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, stdout, stderr)
	}
	keys := map[string]int{}
	deadline := time.Now().Add(5 * time.Second)
	for n := 0; n < 30 && time.Now().Before(deadline); {
		d, ok, err := ch.Get(q.Name, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		keys[d.RoutingKey]++
		n++
	}
	if len(keys) != 3 {
		t.Fatalf("routing keys %v, want 3 keys", keys)
	}
	for k, n := range keys {
		if n != 10 {
			t.Errorf("key %s: %d messages, want 10 (the cache is cycled)", k, n)
		}
	}
}

// lineWith is the first line of s holding every part, or "".
func lineWith(s string, parts ...string) string {
	for _, l := range strings.Split(s, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return l
		}
	}
	return ""
}

// TestSlowStartAndStartDelay22 checks two 2.19+ behaviours that the
// 2.22.1 jar showed beside ours. With -S the jar prints every start-up
// line first, then one delay line a second per consumer channel, and -z
// counts from the last start. A rate after -prsd's delay is not made up
// for: the first second sends at most the rate.
func TestSlowStartAndStartDelay22(t *testing.T) {
	env := testenv.RabbitMQ(t)
	begin := time.Now()
	code, out, errText := runMain(t, "2.22", []string{"-h", env.URI, "-e", "perfclones-slowstart", "-S", "-x", "1", "-y", "1", "-Y", "2", "-z", "1", "-r", "10"}, nil)
	took := time.Since(begin)
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errText)
	}
	delay := "Delaying start by 1 second because -S/--slow-start was requested\n"
	producer := strings.Index(out, "starting producer #0, channel #0\n")
	first := strings.Index(out, delay)
	if producer < 0 || first < producer || strings.Count(out, delay) != 2 {
		t.Errorf("want the two delay lines after every start-up line:\n%s", out)
	}
	if took < 3*time.Second {
		t.Errorf("ended after %s: two 1 s delays, then -z 1", took)
	}
	for _, l := range strings.Split(out, "\n") {
		if m := sentRate.FindStringSubmatch(l); m != nil {
			if v, _ := strconv.ParseFloat(m[1], 64); v > 10.5 {
				t.Errorf("an interval sent %s msg/s at -r 10: %s", m[1], l)
			}
		}
	}
}

var sentRate = regexp.MustCompile(`, sent: ([0-9.]+) msg/s`)
