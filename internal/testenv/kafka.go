package testenv

import (
	"os"
	"testing"
)

// KafkaEnv describes the Kafka servers that scripts/services starts
// (scripts/lib/kafka.sh): real Apache Kafka brokers in KRaft mode on
// 127.0.0.1, and the original command-line tools to run beside ours.
type KafkaEnv struct {
	// Bootstrap is the single broker, "127.0.0.1:19092" (PERF_KAFKA_BOOTSTRAP).
	// It auto-creates topics (1 partition) and its internal topics have one
	// replica.
	Bootstrap string
	// ClusterBootstrap lists the three brokers of the cluster, comma-separated
	// as in bootstrap.servers (PERF_KAFKA_CLUSTER_BOOTSTRAP).
	ClusterBootstrap string
	// ClusterAddrs is ClusterBootstrap split at the commas.
	ClusterAddrs []string

	// Topic3x1 is the seed's "Topic-01": 3 partitions, 1 replica. It exists
	// on the single broker and on the cluster (PERF_KAFKA_TOPIC_3X1).
	Topic3x1 string
	// SeedTopic is the other seed's "topic-1": 3 partitions, 1 replica, on
	// the single broker and on the cluster (PERF_KAFKA_TOPIC_SEED).
	SeedTopic string
	// Topic3x3 is the seed's "Topic-02": 3 partitions, 3 replicas, for acks=1;
	// cluster only (PERF_KAFKA_TOPIC_3X3).
	Topic3x3 string
	// Topic3x3ISR2 is the seed's "Topic-03": 3 partitions, 3 replicas and
	// min.insync.replicas=2, for acks=-1 (all); cluster only
	// (PERF_KAFKA_TOPIC_3X3_ISR2).
	Topic3x3ISR2 string

	// ToolScript is scripts/kafka-tool (PERF_KAFKA_TOOL): run it as
	// `ToolScript producer|consumer|producer39|consumer39|topics ARGS...` for
	// Kafka's own ProducerPerformance, ConsumerPerformance (4.x, or 3.9 for
	// command lines 4.x rejects, such as --broker-list) and TopicCommand.
	// Report lines go to stdout, client logs (WARN) to stderr. The 4.x tools
	// also print deprecation notices on stdout, before the report: "Option
	// --producer-props has been deprecated ..." and "Warning: --messages is
	// deprecated. Use --num-records instead."; the 3.9 tools print none.
	ToolScript string
	// Version is the Kafka release of the brokers and of the 4.x tools
	// (PERF_KAFKA_VERSION); Tools39Version that of the 3.9 tools
	// (PERF_KAFKA_TOOLS39_VERSION).
	Version, Tools39Version string
	// Lib and Tools39Lib are the directories of those releases' jars, for
	// `java -cp Lib/*` (PERF_KAFKA_LIB, PERF_KAFKA_TOOLS39_LIB).
	Lib, Tools39Lib string
}

// Kafka returns the Kafka environment. When a variable is missing, a broker
// does not accept connections or ToolScript is not a file, the test fails
// under CI and is skipped otherwise.
func Kafka(t testing.TB) KafkaEnv {
	t.Helper()
	v := need(t, "kafka",
		"PERF_KAFKA_BOOTSTRAP",
		"PERF_KAFKA_CLUSTER_BOOTSTRAP",
		"PERF_KAFKA_TOPIC_3X1",
		"PERF_KAFKA_TOPIC_SEED",
		"PERF_KAFKA_TOPIC_3X3",
		"PERF_KAFKA_TOPIC_3X3_ISR2",
		"PERF_KAFKA_TOOL",
	)
	env := KafkaEnv{
		Bootstrap:        v["PERF_KAFKA_BOOTSTRAP"],
		ClusterBootstrap: v["PERF_KAFKA_CLUSTER_BOOTSTRAP"],
		ClusterAddrs:     splitList(v["PERF_KAFKA_CLUSTER_BOOTSTRAP"]),
		Topic3x1:         v["PERF_KAFKA_TOPIC_3X1"],
		SeedTopic:        v["PERF_KAFKA_TOPIC_SEED"],
		Topic3x3:         v["PERF_KAFKA_TOPIC_3X3"],
		Topic3x3ISR2:     v["PERF_KAFKA_TOPIC_3X3_ISR2"],
		ToolScript:       v["PERF_KAFKA_TOOL"],
		Version:          lookup("PERF_KAFKA_VERSION"),
		Tools39Version:   lookup("PERF_KAFKA_TOOLS39_VERSION"),
		Lib:              lookup("PERF_KAFKA_LIB"),
		Tools39Lib:       lookup("PERF_KAFKA_TOOLS39_LIB"),
	}
	if env.ToolScript != "" {
		if st, err := os.Stat(env.ToolScript); err != nil || st.IsDir() {
			unavailable(t, "kafka", "PERF_KAFKA_TOOL=%s is not a program", env.ToolScript)
		}
	}
	if env.Bootstrap != "" {
		reachable(t, "kafka", append([]string{env.Bootstrap}, env.ClusterAddrs...)...)
	}
	return env
}
