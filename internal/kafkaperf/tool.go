package kafkaperf

import "github.com/perfclones/perfclones/internal/cli"

// ProducerTool and ConsumerTool are the two Kafka tools as cmd/ binaries
// run them; the aliases are the names of the distribution's scripts.
var (
	ProducerTool = cli.Tool{
		Name:    "kafka-producer-perf-test",
		Aliases: []string{"kafka-producer-perf-test.sh"},
		About:   "Apache Kafka's kafka-producer-perf-test.sh (ProducerPerformance)",
		Main:    ProducerMain,
	}
	ConsumerTool = cli.Tool{
		Name:    "kafka-consumer-perf-test",
		Aliases: []string{"kafka-consumer-perf-test.sh"},
		About:   "Apache Kafka's kafka-consumer-perf-test.sh (ConsumerPerformance)",
		Main:    ConsumerMain,
	}
)
