package perftest

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/testenv"
)

// TestInstanceSync: -ei instances of one test ID start together or, when
// the others never come, end as PerfTest's main thread does after -ist.
func TestInstanceSync(t *testing.T) {
	env := testenv.RabbitMQ(t)
	id := fmt.Sprintf("perfclones-sync-%d", time.Now().UnixNano())
	args := func(more ...string) []string {
		return append([]string{"-h", env.URI, "-e", "perfclones-sync", "-x", "1", "-y", "1", "-r", "50", "-z", "1", "-id", id}, more...)
	}

	t.Run("two instances meet", func(t *testing.T) {
		type outcome struct {
			code           int
			stdout, stderr string
			started        time.Time
		}
		var wg sync.WaitGroup
		results := make([]outcome, 2)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The second instance comes a second later: the first waits.
				time.Sleep(time.Duration(i) * time.Second)
				code, out, errText := runMain(t, "2.22", args("-ei", "2", "-ist", "30"), nil)
				results[i] = outcome{code, out, errText, time.Now()}
			}()
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("instance %d: code %d, stderr %q\n%s", i, r.code, r.stderr, r.stdout)
			}
			waiting := strings.Index(r.stdout, "Waiting for 1 other instance(s) to join...\n.")
			ready := strings.Index(r.stdout, "\nAll expected instances are ready, starting.\n")
			producer := strings.Index(r.stdout, "starting producer #0, channel #0\n")
			stopped := strings.Index(r.stdout, "test stopped (Reached time limit)")
			if producer < 0 || waiting < producer || ready < waiting || stopped < ready {
				t.Errorf("instance %d: lines out of PerfTest's order:\n%s", i, r.stdout)
			}
		}
		if !strings.Contains(results[0].stdout, ". 1/2 instance(s) joined\n") {
			t.Errorf("the first instance does not show it waited alone:\n%s", results[0].stdout)
		}
		if strings.Contains(results[1].stdout, "instance(s) joined") {
			t.Errorf("the last instance reports a partial count:\n%s", results[1].stdout)
		}
	})

	for _, tc := range []struct {
		name, hint string
		more       []string
	}{
		{"alone, multicast", "Make sure multicast is available.", nil},
		{"alone, Kubernetes", "Make sure PerfTest can ask Kubernetes for a list of pod IPs, see https://github.com/jgroups-extras/jgroups-kubernetes.", []string{"-isn", "perf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			begin := time.Now()
			code, out, errText := runMain(t, "2.22", args(append([]string{"-ei", "3", "-ist", "1"}, tc.more...)...), nil)
			if took := time.Since(begin); code != 1 || took > 10*time.Second {
				t.Fatalf("code %d after %v, want 1 after about a second\n%s%s", code, took, out, errText)
			}
			if want := "Main thread caught exception: com.rabbitmq.perf.PerfTestException: Error while waiting for instance synchronization\n"; errText != want {
				t.Errorf("stderr %q, want %q", errText, want)
			}
			// The log line follows the dots on the same line.
			masked := syncLogTime.ReplaceAllString(out, "TIME [main]")
			want := "Waiting for 2 other instance(s) to join...\n. 1/3 instance(s) joined" +
				"TIME [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n" +
				"com.rabbitmq.perf.PerfTestException: Error while waiting for instance synchronization\n" +
				"Caused by: java.lang.IllegalStateException: Waited 1 second(s) and expected number of PerfTest instances did not join. " + tc.hint + "\n" +
				"test stopped\n"
			if !strings.HasSuffix(masked, want) {
				t.Errorf("stdout ends\n%s\nwant the end\n%s", masked, want)
			}
		})
	}
}

var syncLogTime = regexp.MustCompile(`[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} \[main\]`)
