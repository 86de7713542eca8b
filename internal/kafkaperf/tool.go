package kafkaperf

import "github.com/perfclones/perfclones/internal/cli"

// ProducerTool and ConsumerTool are the two Kafka tools as cmd/ binaries
// run them; the aliases are the names of the distribution's scripts.
var (
	ProducerTool = cli.Tool{
		Name:    producerToolName,
		Aliases: []string{"kafka-producer-perf-test.sh"},
		About:   "Apache Kafka's kafka-producer-perf-test.sh (ProducerPerformance)",
		Main:    ProducerMain,
		// The distribution's bin/ (cd kafka_2.12-2.7.2/bin &&
		// ./kafka-producer-perf-test.sh ...). The original is a script that
		// users also run with sh or bash, so ours is one too.
		Layout: []cli.Entry{{Path: "kafka/bin/kafka-producer-perf-test.sh", Script: true}},
	}
	ConsumerTool = cli.Tool{
		Name:    consumerToolName,
		Aliases: []string{"kafka-consumer-perf-test.sh"},
		About:   "Apache Kafka's kafka-consumer-perf-test.sh (ConsumerPerformance)",
		Main:    ConsumerMain,
		Layout:  []cli.Entry{{Path: "kafka/bin/kafka-consumer-perf-test.sh", Script: true}},
	}
)
