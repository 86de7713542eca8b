package perfclones_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/rmqbench"
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

// rmqBadParallel is how many lines run at once (each is in-process and
// mostly waits on the broker).
const rmqBadParallel = 8

var rmqEnvWord = regexp.MustCompile(`^[A-Z][A-Z0-9_]*=`)

// rmqBadRun runs one table line through rocketmq-benchmark's Main.
func rmqBadRun(args []string, namesrv string, killed bool) badOutcome {
	env := map[string]string{}
	for len(args) > 0 && rmqEnvWord.MatchString(args[0]) {
		k, v, _ := strings.Cut(args[0], "=")
		env[k] = v
		args = args[1:]
	}
	expanded := make([]string, len(args))
	for i, a := range args {
		expanded[i] = strings.ReplaceAll(a, "$NAMESRV", namesrv)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopAfter := badInputBound
	if killed {
		stopAfter = rmqBadStop
	}
	stop := time.AfterFunc(stopAfter, func() { cancel(cli.Signal{Sig: syscall.SIGTERM}) })
	defer stop.Stop()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- rmqbench.Main(ctx, expanded, cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: cli.Env(env)})
	}()
	code := "hang"
	select {
	case c := <-done:
		code = strconv.Itoa(c)
		if !killed && ctx.Err() != nil {
			code = "hang" // it had to be stopped
		}
	case <-time.After(stopAfter + 15*time.Second):
	}
	return badOutcome{code: code, stdout: firstLine(stdout.String()), stderr: firstLine(stderr.String())}
}

func TestBadInputRocketMQ(t *testing.T) {
	env := testenv.RocketMQ(t)
	const tool = "rocketmq-benchmark"
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
			got := rmqBadRun(l.args, env.Namesrv, want.code == "143")
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
			return rmqBadRun(args, env.Namesrv, false)
		},
		// The benchmark classes are not published; the table was written
		// from their sources.
		original: nil,
	}.run(t)
}
