package perftest

import (
	"os"
	"runtime"
	"testing"
)

// TestProcsFor: a run's GOMAXPROCS is one thread per four message streams
// (queues consumed, or producer channels when they are more), at least one,
// and more when consumers busy-wait.
func TestProcsFor(t *testing.T) {
	d := &releases.List[1].Diff
	for _, tc := range []struct {
		args  []string
		procs int
	}{
		{[]string{"-x", "1", "-y", "1"}, 1},
		{[]string{"-x", "3", "-y", "3", "-u", "queue-1"}, 1},
		{[]string{"-x", "0", "-y", "0"}, 1},
		{[]string{"-x", "4", "-y", "4"}, 1},
		{[]string{"-x", "1", "-y", "5"}, 2},
		{[]string{"-x", "10", "-y", "10"}, 3},
		{[]string{"-x", "8", "-y", "0"}, 2},
		{[]string{"-x", "2", "-X", "6", "-y", "1"}, 3},
		{[]string{"-y", "9", "-u", "a,b"}, 1},
		{[]string{"-x", "1", "-y", "8", "-qp", "q-%d", "-qpf", "1", "-qpt", "8"}, 2},
		// Consumers that spin get a thread each, ones that sleep do not.
		{[]string{"-x", "1", "-y", "3", "-L", "500"}, 4},
		{[]string{"-x", "1", "-y", "3", "-L", "2000"}, 1},
		{[]string{"-x", "1", "-y", "2", "-vl", "5000:10", "-vl", "100:10"}, 3},
		{[]string{"-x", "1", "-y", "2", "-vl", "5000:10", "-vl", "0:10"}, 1},
	} {
		o, err := parseOptions(d, tc.args, func(string) string { return "" })
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got := buildPlan(d, o, "x").procs; got != tc.procs {
			t.Errorf("%q: procs %d, want %d", tc.args, got, tc.procs)
		}
	}
}

// TestLimitProcs: a run holds GOMAXPROCS at its plan's procs (never above
// the default) and the default comes back when it closes.
func TestLimitProcs(t *testing.T) {
	// t.Setenv puts the variable back afterwards; the run must see it unset.
	t.Setenv("GOMAXPROCS", "")
	_ = os.Unsetenv("GOMAXPROCS")
	before := runtime.GOMAXPROCS(0)
	r := &runner{p: &plan{procs: 1}}
	r.limitProcs()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("during the run GOMAXPROCS %d, want 1", got)
	}
	r.closeAll()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("after the run GOMAXPROCS %d, want %d", got, before)
	}
}
