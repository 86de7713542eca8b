// Command perfclones holds every tool in one static binary. Called under a
// tool's name (a link or a copy named redis-benchmark,
// kafka-producer-perf-test.sh, ...) it is that tool; otherwise its first
// argument names the tool: perfclones redis-benchmark -q, or
// perfclones run --result FILE -- redis-benchmark -q.
package main

import (
	"os"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/kafkaperf"
	"github.com/perfclones/perfclones/internal/multicall"
	"github.com/perfclones/perfclones/internal/redisbench"
)

// tools are every tool this binary holds, in the order it lists them.
var tools = multicall.Set{
	redisbench.Tool,
	kafkaperf.ProducerTool,
	kafkaperf.ConsumerTool,
}

func main() {
	tool := tools.Tool(os.Args[0])
	cli.Process(tool, os.Args[1:])
}
