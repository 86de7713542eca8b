// Command kafka-producer-perf-test is a drop-in clone of Apache Kafka's
// kafka-producer-perf-test.sh (ProducerPerformance).
package main

import (
	"context"
	"os"

	"github.com/perfclones/perfclones/internal/kafkaperf"
)

func main() {
	os.Exit(kafkaperf.ProducerMain(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
