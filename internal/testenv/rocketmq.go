package testenv

import (
	"os"
	"testing"
)

// RocketMQEnv describes the RocketMQ servers that scripts/services starts
// (scripts/lib/rocketmq.sh): Apache RocketMQ's own name server and broker,
// run inside a network namespace of the harness, so clients reach them at
// the namespace's address (10.213.0.2), never at a loopback one.
type RocketMQEnv struct {
	// Namesrv is the main name server, "10.213.0.2:9876"
	// (PERF_ROCKETMQ_NAMESRV); Broker the broker it routes to
	// (PERF_ROCKETMQ_BROKER) in cluster Cluster (PERF_ROCKETMQ_CLUSTER).
	Namesrv, Broker, Cluster string
	// Topic is the seed's topic-01 with Queues write and read queues;
	// Group the seed's consumer group group-01 (PERF_ROCKETMQ_TOPIC,
	// PERF_ROCKETMQ_QUEUES, PERF_ROCKETMQ_GROUP).
	Topic, Group, Queues string
	// FaultNamesrv is the name server of the fault group, which only the
	// fault tests start and stop, with NodeScript (PERF_ROCKETMQ_FAULT_NAMESRV).
	FaultNamesrv string
	// AclNamesrv is the name server of the acl group, whose broker checks
	// ACL signatures (user rocketmq2, secret 12345678); only the ACL test
	// starts it, with NodeScript (PERF_ROCKETMQ_ACL_NAMESRV).
	AclNamesrv string
	// NodeScript is scripts/rocketmq/node (PERF_ROCKETMQ_NODE):
	// `NodeScript start|stop|stop-broker main|fault|acl` and
	// `NodeScript admin ARGS...` (RocketMQ's mqadmin, run inside the
	// namespace; topicStatus -n NAMESRV -t TOPIC lists the max offsets).
	NodeScript string
	// Version is the RocketMQ release of the servers (PERF_ROCKETMQ_VERSION).
	Version string
}

// RocketMQ returns the RocketMQ environment. When a variable is missing or
// the name server or broker does not accept connections, the test fails
// under CI and is skipped otherwise.
func RocketMQ(t testing.TB) RocketMQEnv {
	t.Helper()
	v := need(t, "rocketmq",
		"PERF_ROCKETMQ_NAMESRV",
		"PERF_ROCKETMQ_BROKER",
		"PERF_ROCKETMQ_CLUSTER",
		"PERF_ROCKETMQ_TOPIC",
		"PERF_ROCKETMQ_GROUP",
		"PERF_ROCKETMQ_QUEUES",
		"PERF_ROCKETMQ_FAULT_NAMESRV",
		"PERF_ROCKETMQ_ACL_NAMESRV",
		"PERF_ROCKETMQ_NODE",
	)
	env := RocketMQEnv{
		Namesrv:      v["PERF_ROCKETMQ_NAMESRV"],
		Broker:       v["PERF_ROCKETMQ_BROKER"],
		Cluster:      v["PERF_ROCKETMQ_CLUSTER"],
		Topic:        v["PERF_ROCKETMQ_TOPIC"],
		Group:        v["PERF_ROCKETMQ_GROUP"],
		Queues:       v["PERF_ROCKETMQ_QUEUES"],
		FaultNamesrv: v["PERF_ROCKETMQ_FAULT_NAMESRV"],
		AclNamesrv:   v["PERF_ROCKETMQ_ACL_NAMESRV"],
		NodeScript:   v["PERF_ROCKETMQ_NODE"],
		Version:      lookup("PERF_ROCKETMQ_VERSION"),
	}
	if env.NodeScript != "" {
		if st, err := os.Stat(env.NodeScript); err != nil || st.IsDir() {
			unavailable(t, "rocketmq", "PERF_ROCKETMQ_NODE=%s is not a program", env.NodeScript)
		}
	}
	if env.Namesrv != "" {
		reachable(t, "rocketmq", env.Namesrv, env.Broker)
	}
	return env
}
