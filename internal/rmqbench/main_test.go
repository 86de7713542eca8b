package rmqbench

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/perfclones/perfclones/internal/cli"
)

// runMain calls Main in-process with its own streams and environment.
func runMain(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: cli.Env(env)})
	return code, out.String(), errb.String()
}

func TestMainEndings(t *testing.T) {
	t.Parallel()
	v49 := map[string]string{"PERFCLONES_ROCKETMQ_VERSION": "4.9"}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stdout string // the whole stdout when it ends in a newline, else its start
		stderr string
	}{
		{"no mode", nil, nil, 2, "", "usage: rocketmq-benchmark batchproducer|consumer|producer|tproducer|shutdown [ARGS...]\n"},
		{"unknown mode", nil, []string{"Producer"}, 2, "", "usage: rocketmq-benchmark batchproducer|consumer|producer|tproducer|shutdown [ARGS...]\n"},
		{"bad release", map[string]string{"PERFCLONES_ROCKETMQ_VERSION": "9"}, []string{"producer"}, 2, "",
			"perfclones: PERFCLONES_ROCKETMQ_VERSION=9 is not a release this tool emulates (known: 5.3, 4.9)\n"},
		{"help", nil, []string{"consumer", "-h"}, 0, "usage: benchmarkConsumer [-a <arg>]", ""},
		{"help wins", nil, []string{"producer", "-t", "x", "-h"}, 0, "usage: benchmarkProducer", ""},
		{"batch help", nil, []string{"batchproducer", "-h"}, 0, "usage: benchmarkBatchProducer [-a <arg>] [-ak <arg>] [-b <arg>] [-c <arg>]", ""},
		{"batch help 4.9", v49, []string{"batchproducer", "-h"}, 0, "usage: benchmarkBatchProducer [-a <arg>] [-b <arg>] [-c <arg>] [-e <arg>]", ""},
		{"5.x error line", nil, []string{"producer", "-x"}, 1, "usage: benchmarkProducer", "Unrecognized option: -x\n"},
		{"4.9 silent error", v49, []string{"producer", "-x"}, 1, "usage: benchmarkProducer", ""},
		{"4.9 has no -ri", v49, []string{"producer", "-ri", "1000"}, 1, "usage: benchmarkProducer", ""},
		{"bad long", nil, []string{"producer", "-q", "1.5"}, 1, "", "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"1.5\"\n"},
		{"bad rate", nil, []string{"consumer", "-r", "x"}, 1, "", "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"x\"\n"},
		{"bad filter", nil, []string{"consumer", "-n", "127.0.0.1:1", "-f", "XML", "-e", "/nonexistent"}, 1,
			"topic: BenchmarkTest, threadCount 20, group: benchmark_consumer, suffix: false, filterType: XML, expression: /nonexistent, msgTraceEnable: false, aclEnable: false, reportInterval: 10000\n",
			"Exception in thread \"main\" java.lang.IllegalArgumentException: Not support filter type! XML\n"},
		// newFixedThreadPool(0) fails after the start-up lines.
		{"threads", nil, []string{"producer", "-w", "0"}, 1, "topic: BenchmarkTest, threadCount: 0, messageSize: 128,", "Exception in thread \"main\" java.lang.IllegalArgumentException\n"},
		{"report interval", nil, []string{"consumer", "-ri", "0"}, 1, "topic: BenchmarkTest, threadCount 20,", "Exception in thread \"main\" java.lang.IllegalArgumentException\n"},
		{"consumer threads", nil, []string{"consumer", "-n", "127.0.0.1:1", "-w", "0"}, 1, "topic: BenchmarkTest, threadCount 0,",
			"Exception in thread \"main\" org.apache.rocketmq.client.exception.MQClientException: consumeThreadMin Out of range [1, 1000]\n"},
		{"too many threads", nil, []string{"producer", "-n", "127.0.0.1:1", "-w", "100000000"}, 1, "topic: BenchmarkTest, threadCount: 100000000,",
			"Exception in thread \"main\" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached\n"},
		{"4.9 bursts -ri", v49, []string{"consumer", "-ri", "1000"}, 1, "", "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"i\"\n"},
		{"4.9 takes -- as a value", v49, []string{"producer", "-s", "--"}, 1, "", "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"--\"\n"},
		{"compress options unread without -c true", nil, []string{"producer", "-cl", "x", "-w", "-1"}, 1, "topic: BenchmarkTest, threadCount: -1,", "Exception in thread \"main\" java.lang.IllegalArgumentException\n"},
		{"tproducer help", nil, []string{"tproducer", "-h"}, 0, "usage: TransactionProducer [-a <arg>] [-ak <arg>] [-b <arg>] [-cr <arg>]", ""},
		{"shutdown usage", nil, []string{"shutdown"}, 0, "Usage: shutdown producer | consumer | tproducer | bproducer\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runMain(t, tc.env, tc.args...)
			// A want ending in a newline is the whole stdout, else its start.
			exact := strings.HasSuffix(tc.stdout, "\n")
			if code != tc.code || !strings.HasPrefix(out, tc.stdout) || (exact && out != tc.stdout) || errOut != tc.stderr {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%q\nwant exit %d, stdout starting %q, stderr %q", code, out, errOut, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// With the name server unreachable the producer ends as the original does
// (exit 0, the NaN summary) but says why in one line, and a -q run with no
// name server address at all counts every attempt as a send failure.
func TestMainNoNameServer(t *testing.T) {
	t.Parallel()
	code, out, errOut := runMain(t, nil, "producer", "-n", "127.0.0.1:1", "-q", "10", "-w", "2")
	if code != 0 || !strings.HasSuffix(out, "[Complete] Send Total: 0 | Send TPS: 0 | Max RT(ms): 0 | Average RT(ms):     NaN | Send Failed: 0 | Response Failed: 0\n") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("unreachable: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runMain(t, nil, "producer", "-q", "10", "-w", "2")
	if code != 0 || !strings.HasSuffix(out, "[Complete] Send Total: 10 Send Failed: 10 Response Failed: 0\n") || errOut != "" {
		t.Errorf("no address: exit %d\n%s%s", code, out, errOut)
	}
}

// The producers raise the collector's target unless GOGC is set; the
// consumer keeps Go's default.
func TestRelaxGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	relaxGC(cli.Env(map[string]string{"GOGC": "50"}))
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: target %d, want it left alone", got)
	}
	relaxGC(cli.Env(nil))
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("without GOGC: target %d, want %d", got, gcPercent)
	}
	if code, _, _ := runMain(t, nil, "consumer", "-n", "127.0.0.1:1"); code != 1 {
		t.Errorf("consumer without a name server: exit %d", code)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after a consumer run: target %d, want 100", got)
	}
}
