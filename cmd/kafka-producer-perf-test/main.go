// Command kafka-producer-perf-test is a drop-in clone of Apache Kafka's
// kafka-producer-perf-test.sh (ProducerPerformance).
package main

import (
	"os"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/kafkaperf"
)

func main() { cli.Process(kafkaperf.ProducerTool, os.Args[1:]) }
