package perfclones_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/testenv"
)

// The RocketMQ benchmark's bad-input table (testdata/badinput/
// rocketmq-benchmark.tsv) holds command lines of rocketmq-benchmark's
// modes (producer, consumer, batchproducer, tproducer: the first word).
// Leading NAME=VALUE words are the environment of that line (as env(1)
// reads them: PERFCLONES_ROCKETMQ_VERSION=4.9 emulates 4.9.8); $NAMESRV is
// the harness's name server. The original does not run here, so its side
// was written from its sources (see the table's header) and the recorder
// leaves the table alone.
//
// The originals run until killed unless -q ends a producer: a line whose
// expected exit is 143 is stopped as a SIGTERM would stop it, after
// rmqBadStop; every other line must end by itself within badInputBound.

// rmqBadStop is how long a line that runs until killed runs: long enough
// for its start-up lines and for a consumer to have started.
const rmqBadStop = 2500 * time.Millisecond

// rmqBadParallel is how many lines run at once (each mostly waits on the
// broker).
const rmqBadParallel = 8

var rmqEnvWord = regexp.MustCompile(`^[A-Z][A-Z0-9_]*=`)

// rmqBadRun runs one table line through the built rocketmq-benchmark (bin)
// and returns its outcome; a line that runs until killed gets SIGTERM after
// rmqBadStop, as a user's kill would stop it. Unlike the other tables this
// one runs ours as a process, not through Main in-process: rocketmq-client-go
// has data races of its own at a push consumer's shutdown (its trace
// dispatcher and rebalance goroutines), which the race detector that the
// test suite runs under would report as this test's.
func rmqBadRun(t *testing.T, bin string, args []string, namesrv string, killed bool) badOutcome {
	var env []string
	for len(args) > 0 && rmqEnvWord.MatchString(args[0]) {
		env = append(env, args[0])
		args = args[1:]
	}
	expanded := make([]string, len(args))
	for i, a := range args {
		expanded[i] = strings.ReplaceAll(a, "$NAMESRV", namesrv)
	}
	stopAfter := badInputBound
	if killed {
		stopAfter = rmqBadStop
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopAfter)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, expanded...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	cmd.Stdin = strings.NewReader("")
	// The table's lines choose the emulated release themselves.
	cmd.Env = append(withoutEnv(os.Environ(), "PERFCLONES_ROCKETMQ_VERSION", "PERFCLONES_RESULT"), env...)
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := "0"
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr) && exitErr.ExitCode() >= 0:
		code = strconv.Itoa(exitErr.ExitCode())
	case err != nil:
		code = "hang" // killed by the WaitDelay's SIGKILL, or did not start
		if !errors.As(err, &exitErr) {
			t.Errorf("%s %q: %v", bin, expanded, err)
		}
	}
	if !killed && ctx.Err() != nil {
		code = "hang" // it had to be stopped
	}
	return badOutcome{code: code, stdout: firstLine(stdout.String()), stderr: firstLine(stderr.String())}
}

// withoutEnv is environ without the variables named.
func withoutEnv(environ []string, names ...string) []string {
	var out []string
next:
	for _, kv := range environ {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func TestBadInputRocketMQ(t *testing.T) {
	env := testenv.RocketMQ(t)
	const tool = "rocketmq-benchmark"
	bin := ourTool(t, tool)
	lines := readBadTable(t, tool)
	// Run every line first, several at once, so the table takes seconds
	// rather than minutes; the suite then compares line by line.
	start := time.Now()
	results := map[string]badOutcome{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, rmqBadParallel)
	for _, l := range lines {
		want := l.original
		if l.ours != nil {
			want = *l.ours
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			got := rmqBadRun(t, bin, l.args, env.Namesrv, want.code == "143")
			mu.Lock()
			results[l.key()] = got
			mu.Unlock()
		}()
		// The client's instance name is the start time in milliseconds:
		// keep two runs from sharing one.
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	t.Logf("%d lines in %s", len(lines), time.Since(start).Round(time.Millisecond))
	badSuite{
		tool: tool,
		cases: func(t *testing.T) [][]string {
			out := make([][]string, len(lines))
			for i, l := range lines {
				out[i] = l.args
			}
			return out
		},
		ours: func(t *testing.T, args []string) badOutcome {
			if o, ok := results[quoteWords(args)]; ok {
				return o
			}
			return rmqBadRun(t, bin, args, env.Namesrv, false)
		},
		// The benchmark classes are not published; the table was written
		// from their sources.
		original: nil,
	}.run(t)
}
