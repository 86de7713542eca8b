// Command perfclones holds every tool in one static binary. Called under a
// tool's name (a link or a copy named redis-benchmark,
// kafka-producer-perf-test.sh, ...) it is that tool; otherwise its first
// argument names the tool: perfclones redis-benchmark -q, or
// perfclones run --result FILE -- redis-benchmark -q. perfclones install
// DIR writes the vendors' layout of the tools' names (each tool declares
// its entries in its cli.Tool's Layout) around a copy of the binary.
package main

import (
	"os"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/kafkaperf"
	"github.com/perfclones/perfclones/internal/multicall"
	"github.com/perfclones/perfclones/internal/perftest"
	"github.com/perfclones/perfclones/internal/redisbench"
	"github.com/perfclones/perfclones/internal/rmqbench"
)

// tools are every tool this binary holds, in the order it lists them.
var tools = multicall.Set{
	redisbench.Tool,
	kafkaperf.ProducerTool,
	kafkaperf.ConsumerTool,
	rmqbench.Tool,
	perftest.Tool,
}

func main() {
	tool, args := tools.Command(os.Args)
	cli.Process(tool, args)
}
