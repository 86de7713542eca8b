package perfclones_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/shapes"
)

// TestCompatKafkaThrottleShortRun checks that --throughput holds from the
// first record, so a run shorter than any warm-up is throttled too:
// --throughput 10 --num-records 50 sends for about 5 s (the records/sec of
// the final line, and ours end to end, which has no JVM start-up to add),
// as Kafka's own tool does beside it (it printed 10.03 records/sec here).
func TestCompatKafkaThrottleShortRun(t *testing.T) {
	k := newKafkaTools(t)
	topic := createTopic(t, []string{k.env.Bootstrap}, "throttle", 3, 1, nil)
	args := []string{"--topic", topic, "--num-records", "50", "--record-size", "100", "--throughput", "10",
		"--bootstrap-server", k.env.Bootstrap}
	const want, tolerance = 5 * time.Second, 0.05
	within := func(d time.Duration) bool {
		return d >= time.Duration(float64(want)*(1-tolerance)) && d <= time.Duration(float64(want)*(1+tolerance))
	}
	for _, tool := range []string{"java:producer", "producer", "producer39"} {
		t.Run(tool, func(t *testing.T) {
			r := runKafka(t, time.Minute, k.argv(tool, args))
			lines := shapes.Lines(r.stdout)
			if r.rc != 0 || len(lines) == 0 {
				t.Fatalf("rc %d\n%s%s", r.rc, r.stdout, r.stderr)
			}
			final := lastLine(lines)
			if sent, ok := finalSent(t, lines); !ok || sent != 50 {
				t.Fatalf("final line %q: sent %d, want 50", final, sent)
			}
			// "50 records sent, 10.139931 records/sec (...": the rate is the
			// fourth field.
			rate, err := strconv.ParseFloat(strings.Fields(final)[3], 64)
			if err != nil || rate <= 0 {
				t.Fatalf("final line %q: no rate (%v)", final, err)
			}
			sending := time.Duration(50 / rate * float64(time.Second))
			t.Logf("%s: %.2f records/sec, %v sending, %v end to end", tool, rate, sending.Round(time.Millisecond), r.elapsed.Round(time.Millisecond))
			if !within(sending) {
				t.Errorf("50 records at --throughput 10 took %v by the final line's rate (%.2f/s), want 5 s ± 5%%", sending, rate)
			}
			if !strings.HasPrefix(tool, "java:") && !within(r.elapsed) {
				t.Errorf("our run took %v end to end, want 5 s ± 5%%", r.elapsed)
			}
		})
	}
}
