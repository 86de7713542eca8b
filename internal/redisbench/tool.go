package redisbench

import (
	"os"
	"syscall"

	"github.com/perfclones/perfclones/internal/cli"
)

// Tool is redis-benchmark as cmd/ binaries run it. Like the C tool, a
// closed pipe or a hang-up does not end the run, and SIGINT or SIGTERM
// kills it (after our result file is written).
var Tool = cli.Tool{
	Name:          "redis-benchmark",
	About:         "Redis's redis-benchmark",
	Main:          Main,
	IgnoreSignals: []os.Signal{syscall.SIGPIPE, syscall.SIGHUP},
	DiesBySignal:  true,
}
