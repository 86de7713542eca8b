// Command redis-benchmark is a drop-in clone of Redis's redis-benchmark.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perfclones/perfclones/internal/redisbench"
)

func main() {
	// Like the C tool: a closed pipe or a hang-up does not end the run,
	// and Ctrl+C ends it at once without a summary (Go's default for SIGINT).
	signal.Ignore(syscall.SIGPIPE, syscall.SIGHUP)
	os.Exit(redisbench.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
