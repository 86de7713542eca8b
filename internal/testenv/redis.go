package testenv

import (
	"os"
	"testing"
)

// RedisEnv describes the Redis servers that scripts/services starts
// (scripts/lib/redis.sh), all on 127.0.0.1.
type RedisEnv struct {
	// Addr is a standalone server without a password, "127.0.0.1:16379"
	// (PERF_REDIS_ADDR).
	Addr string
	// AuthAddr is a server that requires AuthPassword for the default user
	// and also knows the ACL user ACLUser with ACLPassword, for -a and --user
	// (PERF_REDIS_AUTH_ADDR, PERF_REDIS_AUTH_PASSWORD, PERF_REDIS_ACL_USER,
	// PERF_REDIS_ACL_PASSWORD).
	AuthAddr     string
	AuthPassword string
	ACLUser      string
	ACLPassword  string
	// ClusterAddrs are the three masters of a Redis Cluster, every slot
	// assigned (PERF_REDIS_CLUSTER_ADDRS, comma-separated).
	ClusterAddrs []string
	// CBenchmark is the original C redis-benchmark, Debian's redis-tools
	// build (PERF_REDIS_BENCHMARK_C). It never exits when it cannot connect:
	// run it under a timeout.
	CBenchmark string
}

// Redis returns the Redis environment. When a variable is missing, a server
// does not accept connections or CBenchmark is not a file, the test fails
// under CI and is skipped otherwise.
func Redis(t testing.TB) RedisEnv {
	t.Helper()
	v := need(t, "redis",
		"PERF_REDIS_ADDR",
		"PERF_REDIS_AUTH_ADDR",
		"PERF_REDIS_AUTH_PASSWORD",
		"PERF_REDIS_ACL_USER",
		"PERF_REDIS_ACL_PASSWORD",
		"PERF_REDIS_CLUSTER_ADDRS",
		"PERF_REDIS_BENCHMARK_C",
	)
	env := RedisEnv{
		Addr:         v["PERF_REDIS_ADDR"],
		AuthAddr:     v["PERF_REDIS_AUTH_ADDR"],
		AuthPassword: v["PERF_REDIS_AUTH_PASSWORD"],
		ACLUser:      v["PERF_REDIS_ACL_USER"],
		ACLPassword:  v["PERF_REDIS_ACL_PASSWORD"],
		ClusterAddrs: splitList(v["PERF_REDIS_CLUSTER_ADDRS"]),
		CBenchmark:   v["PERF_REDIS_BENCHMARK_C"],
	}
	if env.CBenchmark != "" {
		if st, err := os.Stat(env.CBenchmark); err != nil || st.IsDir() {
			unavailable(t, "redis", "PERF_REDIS_BENCHMARK_C=%s is not a program", env.CBenchmark)
		}
	}
	if env.Addr != "" {
		reachable(t, "redis", append([]string{env.Addr, env.AuthAddr}, env.ClusterAddrs...)...)
	}
	return env
}
