// Command kafka-consumer-perf-test is a drop-in clone of Apache Kafka's
// kafka-consumer-perf-test.sh (ConsumerPerformance).
package main

import (
	"os"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/kafkaperf"
)

func main() { cli.Process(kafkaperf.ConsumerTool, os.Args[1:]) }
