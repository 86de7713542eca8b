package perfclones_test

// The fault suite's harness (fault_<tool>_test.go): each case runs one of
// our tools against a real server, injects a fault while it runs (a
// private server killed, paused or restarted; a Toxiproxy toxic between
// client and server; a server that is not there), and checks that the
// tool ends on its own within a bound, with the exit code and final lines
// the original has, and with counts that agree with the server's own: the
// result file's acknowledged and failed operations add up to what was
// sent, and the server holds exactly the acknowledged ones, or, where the
// protocol cannot know (a request that reached the server but whose reply
// was lost), between the acknowledged and the acknowledged plus what was
// in flight when the fault struck. Every case logs one "FAULT |" row:
// `go test -run Fault -v . | grep 'FAULT |'` is the table of faults x tools.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/result"
	"github.com/perfclones/perfclones/internal/result/resulttest"
)

// faultRun is the outcome of one run under a fault.
type faultRun struct {
	toolRun
	result *result.Run // the run's result file; nil when it wrote none
}

// runFault runs argv (with the extra environment and a result file) for at
// most limit; inject, when not nil, runs in its own goroutine from the
// moment the process has started, and runFault waits for it too. A run
// that outlives limit is killed and fails the test: a fault must never
// make a tool hang.
func runFault(t *testing.T, argv []string, env []string, limit time.Duration, inject func(started time.Time)) faultRun {
	t.Helper()
	file := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), env...), "PERFCLONES_RESULT="+file)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	if inject != nil {
		wg.Add(1)
		go func() { defer wg.Done(); inject(start) }()
	}
	err := cmd.Wait()
	r := faultRun{toolRun: toolRun{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}}
	wg.Wait()
	r.timedOut = ctx.Err() != nil
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.rc = exitErr.ExitCode()
		if st, ok := exitErr.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			r.rc = -1
		}
	default:
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	if r.timedOut {
		t.Fatalf("%s still running after %s (a hang)\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), limit, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		t.Errorf("a Go crash on stderr:\n%s", r.stderr)
	}
	if b, err := os.ReadFile(file); err == nil {
		run, err := resulttest.Validate(b)
		if err != nil {
			t.Fatalf("result file: %v\n%s", err, b)
		}
		r.result = run
	}
	return r
}

// sleepUntil sleeps until d after start.
func sleepUntil(start time.Time, d time.Duration) {
	time.Sleep(time.Until(start.Add(d)))
}

// faultCounts are a case's figures for the table.
type faultCounts struct {
	sent, acked, failed int64
	server              string // what the server holds, or a bound
}

// faultRow logs the case's row of the table of faults x tools.
func faultRow(t *testing.T, tool, fault string, r faultRun, c faultCounts) {
	t.Helper()
	t.Logf("FAULT | %s | %s | exit %d | %.1f s | sent %d | acked %d | failed %d | server %s |",
		tool, fault, r.rc, r.elapsed.Seconds(), c.sent, c.acked, c.failed, c.server)
}
