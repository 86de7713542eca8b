package perftest

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/testenv"
)

// TestConsumerStartDelayOption: -csd (2.19+) is a whole number of seconds,
// read as PerfTest's intArg reads it; none, 0 or a negative one is no
// delay, and it is acted on, so not named on stderr.
func TestConsumerStartDelayOption(t *testing.T) {
	d := &releases.List[1].Diff
	for _, tc := range []struct {
		args  []string
		delay time.Duration
		err   string
	}{
		{args: nil},
		{args: []string{"-csd", "3"}, delay: 3 * time.Second},
		{args: []string{"--consumer-start-delay", "1"}, delay: time.Second},
		{args: []string{"-csd", "0"}},
		{args: []string{"-csd", "-2"}},
		{args: []string{"-csd", "1.5"}, err: `For input string: "1.5"`},
		{args: []string{"-csd", "x"}, err: `For input string: "x"`},
	} {
		o, err := parseOptions(d, tc.args, func(string) string { return "" })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one with %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got := buildPlan(d, o, "x").consumerStartDelay; got != tc.delay {
			t.Errorf("%q: consumer start delay %v, want %v", tc.args, got, tc.delay)
		}
		if len(o.ignored) != 0 {
			t.Errorf("%q: named as not acted on: %v", tc.args, o.ignored)
		}
	}
}

// TestConsumerStartDelayAs218: 2.18 has no --consumer-start-delay; given
// to it, the option is accepted, named on stderr as not acted on, and
// delays nothing. (Its short form reads there as -c with "sd" attached.)
func TestConsumerStartDelayAs218(t *testing.T) {
	d := &releases.List[0].Diff
	o, err := parseOptions(d, []string{"--consumer-start-delay", "3"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if got := buildPlan(d, o, "x").consumerStartDelay; got != 0 {
		t.Errorf("2.18: consumer start delay %v", got)
	}
	if strings.Join(o.ignored, " ") != "-csd" {
		t.Errorf("2.18: named as not acted on: %v, want -csd", o.ignored)
	}
}

// TestConsumerStartDelayRun: with -csd 2 the consumer's queue is there from
// the start, so what is published during the delay waits in it; the
// consumer subscribes after 2 s: the first interval receives nothing and
// the third takes the backlog as well.
func TestConsumerStartDelayRun(t *testing.T) {
	env := testenv.RabbitMQ(t)
	code, stdout, stderr := runMain(t, "2.22", []string{"-h", env.URI, "-e", "perfclones-csd", "-x", "1", "-y", "1",
		"-r", "100", "-prsd", "0", "-csd", "2", "-z", "3"}, nil)
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, stdout, stderr)
	}
	first := lineWith(stdout, ", time 1.")
	if !strings.Contains(first, ", received: 0 msg/s, ") {
		t.Errorf("the first interval received something before the delay:\n%s", stdout)
	}
	third := lineWith(stdout, ", time 3.")
	i := strings.Index(third, ", received: ")
	if i < 0 {
		t.Fatalf("no third interval line:\n%s", stdout)
	}
	received, _ := strconv.Atoi(strings.Fields(third[i+len(", received: "):])[0])
	if received < 250 {
		t.Errorf("the third interval received %d msg/s, not the backlog of the delay and its own:\n%s", received, stdout)
	}
	if strings.Contains(stderr, "-csd") {
		t.Errorf("-csd named on stderr: %s", stderr)
	}
}
