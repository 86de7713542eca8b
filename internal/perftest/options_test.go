package perftest

import (
	"strings"
	"testing"
)

// TestServerNameErrors: -sni's names are refused as javax.net.ssl's
// SNIHostName refuses them (messages as Java 17 gives them).
func TestServerNameErrors(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"localhost", ""}, {"A-B.c", ""}, {"bücher.de", ""}, {"x.example.com", ""},
		{"", "Server name value of host_name cannot be empty"},
		{" ", "Contains non-LDH ASCII characters"},
		{"a_b", "Contains non-LDH ASCII characters"},
		{"a b", "Contains non-LDH ASCII characters"},
		{"a..b", "Empty label is not a legal name"},
		{".a", "Empty label is not a legal name"},
		{"-a", "Has leading or trailing hyphen"},
		{"a.b-.c", "Has leading or trailing hyphen"},
		{"a.", "Server name value of host_name cannot have the trailing dot"},
		{strings.Repeat("x", 64), "The label in the input is too long"},
	} {
		got := ""
		if e := serverNameError(tc.name); e != nil {
			got = e.Message
			if e.Class != "java.lang.IllegalArgumentException" {
				t.Errorf("%q: class %s", tc.name, e.Class)
			}
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestStartDelayAndSocketOptions: what -prsd, -ca, -sul, -sni and the
// socket options become, with PerfTest's defaults (a rate option without
// -prsd means a delay of up to 1 s; TCP_NODELAY on).
func TestStartDelayAndSocketOptions(t *testing.T) {
	d := &releases.List[1].Diff
	for _, tc := range []struct {
		args       []string
		delay, sul int
		noDelay    bool
		buffers    [2]int
		names      []string
		consumerIn map[string]any
	}{
		{args: nil, delay: -1, sul: -1, noDelay: true, buffers: [2]int{-1, -1}},
		{args: []string{"-r", "100"}, delay: 1, sul: -1, noDelay: true, buffers: [2]int{-1, -1}},
		{args: []string{"-r", "0"}, delay: 1, sul: -1, noDelay: true, buffers: [2]int{-1, -1}},
		{args: []string{"-P", "2"}, delay: 1, sul: -1, noDelay: true, buffers: [2]int{-1, -1}},
		{args: []string{"-vr", "10:2"}, delay: 1, sul: -1, noDelay: true, buffers: [2]int{-1, -1}},
		{args: []string{"-r", "100", "-prsd", "0"}, delay: 0, sul: -1, noDelay: true, buffers: [2]int{-1, -1}},
		{args: []string{"-prsd", "5", "-sul", "2"}, delay: 5, sul: 2, noDelay: true, buffers: [2]int{-1, -1}},
		{args: []string{"-tsbs", "4096", "-trbs", "8192", "-tnd", "FALSE"}, delay: -1, sul: -1, noDelay: false, buffers: [2]int{4096, 8192}},
		{args: []string{"-tnd", "yes"}, delay: -1, sul: -1, noDelay: false, buffers: [2]int{-1, -1}},
		{args: []string{"-sni", " a.example , b,"}, delay: -1, sul: -1, noDelay: true, buffers: [2]int{-1, -1}, names: []string{"a.example", "b"}},
		{args: []string{"-ca", "x-priority=10,x-stream-offset=first"}, delay: -1, sul: -1, noDelay: true, buffers: [2]int{-1, -1},
			consumerIn: map[string]any{"x-priority": int64(10), "x-stream-offset": "first"}},
	} {
		o, err := parseOptions(d, tc.args, func(string) string { return "" })
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if o.producerStartDelay != tc.delay || o.serversUpLimit != tc.sul || o.tcpNoDelay != tc.noDelay ||
			o.sendBuffer != tc.buffers[0] || o.receiveBuffer != tc.buffers[1] {
			t.Errorf("%q: delay %d, sul %d, nodelay %v, buffers %d/%d", tc.args, o.producerStartDelay, o.serversUpLimit, o.tcpNoDelay, o.sendBuffer, o.receiveBuffer)
		}
		if strings.Join(o.serverNames, "|") != strings.Join(tc.names, "|") {
			t.Errorf("%q: server names %q, want %q", tc.args, o.serverNames, tc.names)
		}
		if len(o.consumerArgs) != len(tc.consumerIn) {
			t.Errorf("%q: consumer args %v, want %v", tc.args, o.consumerArgs, tc.consumerIn)
		}
		for k, v := range tc.consumerIn {
			if o.consumerArgs[k] != v {
				t.Errorf("%q: consumer arg %s = %#v, want %#v", tc.args, k, o.consumerArgs[k], v)
			}
		}
		if len(o.ignored) != 0 {
			t.Errorf("%q: named as not acted on: %v", tc.args, o.ignored)
		}
	}
}

// TestNotActedOnAreNamed: what stays named on stderr as not acted on is
// what the run cannot do.
func TestNotActedOnAreNamed(t *testing.T) {
	d := &releases.List[1].Diff
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-ei", "1", "-ist", "5", "-isn", "ns", "-pst", "2", "-hst", "1", "-ctp", "3"}, ""},
		{[]string{"-se", "-csd", "1", "-d", "x", "-ei", "2", "-ist", "5"}, ""},
		{[]string{"-mlb", "1gb", "-smssb", "1mb", "-ma", "PT10M", "-ll", "balanced", "-sco", "first"}, ""},
	} {
		o, err := parseOptions(d, tc.args, func(string) string { return "" })
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got := strings.Join(o.ignored, " "); got != tc.want {
			t.Errorf("%q: named %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestStreamArguments: -mlb, -smssb, -ma, -ll and -sco become the queue
// and consumer arguments PerfTest sends.
func TestStreamArguments(t *testing.T) {
	d := &releases.List[1].Diff
	o, err := parseOptions(d, []string{"-sq", "-mlb", "5GB", "-smssb", "100mb", "-ma", "P1DT1.5S", "-ll", "client-local", "-sco", "12"},
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"x-queue-type": "stream", "x-max-length-bytes": int64(5_000_000_000), "x-stream-max-segment-size-bytes": int64(100_000_000),
		"x-max-age": "86401s", "x-queue-leader-locator": "client-local",
	} {
		if o.queueArgs[k] != want {
			t.Errorf("queue argument %s = %#v, want %#v", k, o.queueArgs[k], want)
		}
	}
	if o.consumerArgs["x-stream-offset"] != int64(12) {
		t.Errorf("x-stream-offset = %#v", o.consumerArgs["x-stream-offset"])
	}
	// 0 removes the stream's default maximum length.
	o, err = parseOptions(d, []string{"-sq", "-mlb", "0"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.queueArgs["x-max-length-bytes"]; ok {
		t.Errorf("-mlb 0 left x-max-length-bytes: %v", o.queueArgs)
	}
	for _, tc := range []struct {
		in    string
		secs  int64
		valid bool
	}{
		{"PT15M", 900, true}, {"pt10h", 36000, true}, {"P2D", 172800, true}, {"PT0.5S", 0, true}, {"-PT-5S", 5, true},
		{"PT", 0, false}, {"P", 0, false}, {"P1DT", 0, false}, {"PT1.1234567891S", 0, false}, {"1H", 0, false},
	} {
		secs, _, valid := javaDuration(tc.in)
		if secs != tc.secs || valid != tc.valid {
			t.Errorf("%q: %d %v, want %d %v", tc.in, secs, valid, tc.secs, tc.valid)
		}
	}
}

// TestConsumerArguments: -ca's pairs as PerfTest 2.22 converts them.
func TestConsumerArguments(t *testing.T) {
	d := &releases.List[1].Diff
	got, e := consumerArguments(d, "x-priority=10,a,b=true,c=false,d=x=y,x-single-active-consumer=5,x-dead-letter-exchange=amq.default,d=last,,")
	if e != nil {
		t.Fatal(e)
	}
	want := map[string]any{"x-priority": int64(10), "a": "", "b": true, "c": false, "d": "last",
		"x-single-active-consumer": false, "x-dead-letter-exchange": ""}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if got, _ := consumerArguments(d, "  "); got != nil {
		t.Errorf("blank: %v", got)
	}
	if _, e := consumerArguments(&releases.List[0].Diff, "a=1,a=2"); e == nil || e.String() != "java.lang.IllegalStateException: Duplicate key a (attempted merging values 1 and 2)" {
		t.Errorf("2.18 duplicate key: %v", e)
	}
}

// TestStartDelayAs218: 2.18 has no implicit start delay for a rate.
func TestStartDelayAs218(t *testing.T) {
	o, err := parseOptions(&releases.List[0].Diff, []string{"-r", "100"}, func(string) string { return "" })
	if err != nil || o.producerStartDelay != -1 {
		t.Errorf("2.18 -r 100: delay %v, %v", o, err)
	}
}

// TestExchangeFromEnvironment: PerfTest reads -e as a string, so its
// EXCHANGE variable names the exchange (hasOption would have read the
// variable as a boolean and fallen back to the type).
func TestExchangeFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{"EXCHANGE": "from-env"}, "from-env"},
		{[]string{"-e", "from-line"}, map[string]string{"EXCHANGE": "from-env"}, "from-env"},
		{[]string{"-e", "from-line"}, nil, "from-line"},
		{[]string{"-e"}, nil, "direct"},
		{[]string{"-t", "fanout"}, nil, "fanout"},
		{nil, map[string]string{"EXCHANGE": "amq.default"}, ""},
		{nil, map[string]string{"RABBITMQ_PERF_TEST_ENV_PREFIX": "PT", "PT_EXCHANGE": "prefixed"}, "prefixed"},
	} {
		for _, rel := range releases.List[:2] {
			o, err := parseOptions(&rel.Diff, tc.args, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Errorf("%s %q %v: %v", rel.Name, tc.args, tc.env, err)
				continue
			}
			if o.exchangeName != tc.want {
				t.Errorf("%s %q %v: exchange %q, want %q", rel.Name, tc.args, tc.env, o.exchangeName, tc.want)
			}
		}
	}
}
