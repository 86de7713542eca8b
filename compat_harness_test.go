package perfclones_test

// The harness of the end-to-end compatibility tests: one build of the
// multi-call binary, linked under each tool's name as a user would install
// it, and one way to run a command with a deadline. Each tool has its own
// compat_<tool>_test.go with the seed command lines, scaled down, run
// against the local servers that scripts/services starts, beside the
// original tool where it runs here; lines are compared by their shape
// (numbers masked, everything else byte for byte), with the exit codes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	binDir    string
	buildOnce sync.Once
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "perfclones-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// ourTool builds cmd/perfclones once and returns the path of a link to it
// named name ("redis-benchmark", "kafka-producer-perf-test", ...), so every
// compat test runs the tool the way the dist archive installs it.
func ourTool(t *testing.T, name string) string {
	t.Helper()
	multi := filepath.Join(binDir, "perfclones")
	buildOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", multi, "./cmd/perfclones")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/perfclones: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	link := filepath.Join(binDir, name)
	if err := os.Symlink("perfclones", link); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
	return link
}

// toolRun is the outcome of one run of a tool.
type toolRun struct {
	stdout, stderr string
	rc             int // exit code; -1 when ended by a signal
	elapsed        time.Duration
	timedOut       bool // the deadline passed and the process was stopped
}

// runTool runs bin with args and stdin for at most timeout. When the
// deadline passes the process gets SIGINT if interrupt is set (Ctrl+C, for
// runs that never end on their own such as -I and -l), otherwise SIGKILL.
func runTool(t *testing.T, bin string, timeout time.Duration, interrupt bool, stdin string, args []string) toolRun {
	t.Helper()
	return runCommand(t, append([]string{bin}, args...), timeout, interrupt, stdin, nil)
}

// runCommand runs argv with stdin and the extra environment variables for
// at most timeout (see runTool for what happens then).
func runCommand(t *testing.T, argv []string, timeout time.Duration, interrupt bool, stdin string, env []string) toolRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	if interrupt {
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := toolRun{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	r.timedOut = err != nil && ctx.Err() != nil
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.rc = exitErr.ExitCode()
	default:
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return r
}
