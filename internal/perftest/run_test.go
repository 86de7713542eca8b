package perftest

import (
	"strings"
	"testing"

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
