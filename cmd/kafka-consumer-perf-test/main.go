// Command kafka-consumer-perf-test is a drop-in clone of Apache Kafka's
// kafka-consumer-perf-test.sh (ConsumerPerformance).
package main

import (
	"context"
	"os"

	"github.com/perfclones/perfclones/internal/kafkaperf"
)

func main() {
	os.Exit(kafkaperf.ConsumerMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
