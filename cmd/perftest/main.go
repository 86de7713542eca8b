// Command perftest is RabbitMQ PerfTest (com.rabbitmq.perf.PerfTest).
package main

import (
	"os"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/perftest"
)

func main() { cli.Process(perftest.Tool, os.Args[1:]) }
