// Package cli is the contract every tool in this module follows: one
// Main(ctx, args, IO) int, one type for the ways a command line ends early
// (Exit), one place that writes an ending as the original does (Finish), the
// release table behind PERFCLONES_<TOOL>_VERSION (releases.go), and the
// process glue for cmd/ binaries: signals, exit codes (process.go).
//
// A tool's package has the same files in the same roles: options.go (the
// table that drives parsing and help), plan.go (everything a run needs, built
// once from the options), run.go (workers that only count and record),
// report.go (pure functions from a snapshot to the original's lines) and
// releases.go (the releases it emulates and how they differ).
package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
)

// IO is everything a tool reads or writes besides the network: its
// streams and its environment. Tests pass buffers and a map lookup, so
// tools run in-process and in parallel.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads one environment variable ("" when unset). Tools read
	// COLUMNS, PERFCLONES_<TOOL>_VERSION and PERFCLONES_RESULT through it,
	// never through os.Getenv.
	Getenv func(string) string
}

// OS is the process's own streams and environment.
func OS() IO {
	return IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// Env returns a Getenv over a fixed set of variables, for tests.
func Env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// MainFunc is the one entry point shape of every tool.
type MainFunc func(ctx context.Context, args []string, io IO) int

// Exit is how a run ends without a usable result, or with one whose
// ending the original prints in its own way: the text the original writes
// on each stream, whole lines, and the code it exits with. Every parser and
// every tool returns it as its error; Finish writes it.
type Exit struct {
	Code   int
	Stdout string
	Stderr string
}

func (e *Exit) Error() string {
	text := e.Stderr
	if text == "" {
		text = e.Stdout
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "error: ") {
			return strings.TrimSpace(line)
		}
	}
	if line, _, _ := strings.Cut(text, "\n"); line != "" {
		return line
	}
	return "exit status " + itoa(e.Code)
}

// Failure is an Exit with one line on stderr and code 1: the shape of most
// runtime failures.
func Failure(line string) *Exit { return &Exit{Code: 1, Stderr: line + "\n"} }

// Finish writes how a run ended and returns its exit code. err nil is
// success (0). An *Exit (anywhere in err's chain) is written as it is;
// any other error is a failure of ours: its text on stderr, code 1.
func Finish(io IO, err error) int {
	if err == nil {
		return 0
	}
	var exit *Exit
	if !errors.As(err, &exit) {
		exit = Failure(err.Error())
	}
	if exit.Stdout != "" {
		_, _ = io.Stdout.Write([]byte(exit.Stdout))
	}
	if exit.Stderr != "" {
		_, _ = io.Stderr.Write([]byte(exit.Stderr))
	}
	return exit.Code
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
